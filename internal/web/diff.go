package web

import (
	"strconv"
	"strings"

	"forgeapi/internal/git/gitread"
)

// diffFile is one file of a diff as a page shows it.
type diffFile struct {
	Path, Status         string
	Additions, Deletions int
	Binary               bool
	Anchor               string // the id of its heading: diff-N
	Lines                []diffLine
}

// diffLine is one line of a unified diff: Kind is "hunk", "add", "del"
// or "ctx"; Old and New are its line numbers ("" where it has none).
// On a pull request's files, for a signed-in visitor, a line that may be
// commented on has its ID (the row's anchor), the address of its comment
// form (CommentHref), the review comments on it, and its Form when the
// visitor opened it.
type diffLine struct {
	Kind, Old, New, Text string
	ID, CommentHref      string
	Comments             []lineComment
	Form                 *lineForm
}

// lineForm is the form of a line comment on a pull request's diff: it
// posts to Action as POST .../pulls/{number}/comments does.
type lineForm struct {
	Action, Path, Side, Line, SHA, Label string
}

// diffView is what the "difffiles" template shows: the files and the
// CSRF token of their line comments' forms.
func diffView(files []diffFile, csrf string) map[string]any {
	return map[string]any{"Files": files, "CSRF": csrf}
}

// side returns the side and number a review comment on the line names
// (RIGHT and the new line, LEFT and the old one for a removed line), and
// false for a line none may comment on (a hunk header, "\ No newline").
func (l diffLine) side() (string, string, bool) {
	switch {
	case l.Kind == "del" && l.Old != "":
		return "LEFT", l.Old, true
	case (l.Kind == "add" || l.Kind == "ctx") && l.New != "":
		return "RIGHT", l.New, true
	}
	return "", "", false
}

// diffFiles turns gitread's diffs into the pages' files.
func diffFiles(diffs []gitread.FileDiff) []diffFile {
	out := make([]diffFile, 0, len(diffs))
	for i, d := range diffs {
		out = append(out, diffFile{Path: d.Path, Status: string(d.Status), Additions: d.Additions, Deletions: d.Deletions,
			Binary: d.Binary, Anchor: "diff-" + strconv.Itoa(i+1), Lines: parsePatch(d.Patch)})
	}
	return out
}

// parsePatch splits a unified diff's hunks into numbered lines.
func parsePatch(patch string) []diffLine {
	if patch == "" {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(patch, "\n"), "\n")
	out := make([]diffLine, 0, len(lines))
	oldN, newN := 0, 0
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "@@"):
			oldN, newN = hunkStart(l)
			out = append(out, diffLine{Kind: "hunk", Text: l})
		case strings.HasPrefix(l, "+"):
			out = append(out, diffLine{Kind: "add", New: strconv.Itoa(newN), Text: l})
			newN++
		case strings.HasPrefix(l, "-"):
			out = append(out, diffLine{Kind: "del", Old: strconv.Itoa(oldN), Text: l})
			oldN++
		case strings.HasPrefix(l, `\`):
			out = append(out, diffLine{Kind: "ctx", Text: l})
		default:
			out = append(out, diffLine{Kind: "ctx", Old: strconv.Itoa(oldN), New: strconv.Itoa(newN), Text: l})
			oldN++
			newN++
		}
	}
	return out
}

// hunkStart reads the first old and new line numbers of a hunk header,
// "@@ -3,7 +3,8 @@ ...".
func hunkStart(h string) (oldN, newN int) {
	fields := strings.Fields(h)
	if len(fields) < 3 {
		return 0, 0
	}
	num := func(s string) int {
		s, _, _ = strings.Cut(s[1:], ",")
		n, _ := strconv.Atoi(s)
		return n
	}
	return num(fields[1]), num(fields[2])
}

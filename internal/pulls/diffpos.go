package pulls

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"forgeapi/internal/apierr"
	"forgeapi/internal/git/gitread"
)

// spot is where a review comment sits in a file's diff: its line and
// side, its position (lines below the file's first hunk header) and the
// diff hunk up to it.
type spot struct {
	Line     int
	Side     string
	Position int
	Hunk     string
}

// errNotInDiff is the 422 of a comment on a line the diff does not show.
func errNotInDiff() error {
	return apierr.Custom("PullRequestReviewComment", "line", "pull_request_review_thread.line must be part of the diff")
}

// filePatch is the unified patch of path between the merge base of base
// and commit, and commit; "" when the file did not change.
func (s *Service) filePatch(ctx context.Context, repoID int64, base, commit, path string) (string, error) {
	g, err := gitread.Open(s.Repos.GitDir(repoID))
	if err != nil {
		return "", err
	}
	defer g.Close()
	mb, err := g.MergeBase(ctx, base, commit)
	if errors.Is(err, gitread.ErrNoMergeBase) {
		mb, err = "", nil
	}
	if err != nil {
		return "", err
	}
	diffs, _, err := g.Diff(ctx, mb, commit, MaxFiles)
	if err != nil {
		return "", err
	}
	for _, d := range diffs {
		if d.Path == path {
			return d.Patch, nil
		}
	}
	return "", nil
}

// locate finds the comment's spot in patch: by line and side (RIGHT: the
// new file's numbering, LEFT: the old one's), or by position when line is
// 0. errNotInDiff when the patch does not show it.
func locate(patch string, line int, side string, position int) (spot, error) {
	if side == "" {
		side = "RIGHT"
	}
	lines := strings.Split(strings.TrimSuffix(patch, "\n"), "\n")
	oldN, newN, hunkStart, pos := 0, 0, 0, -1
	for i, l := range lines {
		pos++
		if strings.HasPrefix(l, "@@") {
			oldN, newN = hunkStarts(l)
			hunkStart = i
			continue
		}
		if pos == 0 {
			continue // no hunk header yet
		}
		var atOld, atNew int
		switch {
		case strings.HasPrefix(l, "+"):
			atNew, newN = newN, newN+1
		case strings.HasPrefix(l, "-"):
			atOld, oldN = oldN, oldN+1
		case strings.HasPrefix(l, `\`):
			continue
		default:
			atOld, atNew, oldN, newN = oldN, newN, oldN+1, newN+1
		}
		hit := false
		if line == 0 {
			hit = pos == position
			if hit && atNew == 0 {
				side, line = "LEFT", atOld
			} else if hit {
				side, line = "RIGHT", atNew
			}
		} else if side == "RIGHT" {
			hit = atNew == line
		} else {
			hit = atOld == line
		}
		if hit {
			return spot{Line: line, Side: side, Position: pos, Hunk: strings.Join(lines[hunkStart:i+1], "\n")}, nil
		}
	}
	return spot{}, errNotInDiff()
}

// hunkStarts reads "@@ -a,b +c,d @@": the first old and new line numbers.
func hunkStarts(header string) (int, int) {
	f := strings.Fields(header)
	if len(f) < 3 {
		return 0, 0
	}
	start := func(s string) int {
		s, _, _ = strings.Cut(s[1:], ",")
		n, _ := strconv.Atoi(s)
		return n
	}
	return start(f[1]), start(f[2])
}

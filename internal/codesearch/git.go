package codesearch

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"forgeapi/internal/git/gitcmd"
)

// MaxFileSize is the largest file indexed, as the platform's code search:
// larger files are left out, and so are binary ones.
const MaxFileSize = 384 << 10

// gitDir reads the bare repository the index is made from.
type gitDir struct{ dir string }

// head is the commit the branch points at, "" when the branch does not
// exist (an empty repository, a deleted default branch).
func (g gitDir) head(ctx context.Context, branch string) (string, error) {
	sha, err := gitcmd.In(g.dir).Text(ctx, nil, "rev-parse", "--verify", "-q", "refs/heads/"+branch+"^{commit}")
	if gitcmd.Said(err, 1) || gitcmd.Said(err, 128) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return sha, nil
}

// indexPlan is what an indexing run writes: the commits new on the
// branch (all of its history when fullHistory: the commits indexed
// before are replaced), the files added or changed (their content read
// as they are written) and the paths removed or changed.
type indexPlan struct {
	fullHistory bool
	commits     []commitRow
	added       []fileRow
	removed     []string
}

// commitRow is a commit as the index keeps it.
type commitRow struct {
	SHA, Tree                     string
	Parents                       []string
	AuthorName, AuthorEmail       string
	AuthorDate                    time.Time
	CommitterName, CommitterEmail string
	CommitterDate                 time.Time
	Message                       string
}

// fileRow is a file as the index keeps it.
type fileRow struct {
	Path, BlobSHA string
	Size          int64
	Content       string
}

// Name is the file's name, the last element of its path.
func (f fileRow) Name() string { return path.Base(f.Path) }

// Extension is the file's extension without its dot, lowercased; "" for
// none.
func (f fileRow) Extension() string {
	return strings.ToLower(strings.TrimPrefix(path.Ext(f.Name()), "."))
}

// plan compares the index of the commit indexed last (old, "" for none;
// its files are current, path to blob SHA) with the commit head.
func (g gitDir) plan(ctx context.Context, old, head string, current map[string]string) (indexPlan, error) {
	var p indexPlan
	exclude := ""
	if old != "" && old != head {
		ok, err := gitcmd.In(g.dir).IsAncestor(ctx, old, head)
		if err != nil && !gitcmd.Exited(err) {
			return p, err
		}
		if ok {
			exclude = old
		}
	}
	switch {
	case old == head:
	case exclude == "":
		p.fullHistory = true
		fallthrough
	default:
		commits, err := g.commits(ctx, head, exclude)
		if err != nil {
			return p, err
		}
		p.commits = commits
	}
	tree, err := g.files(ctx, head)
	if err != nil {
		return p, err
	}
	return planFiles(p, tree, current), nil
}

// planFiles lists the files of tree that current does not hold at the
// same SHA (their content is read when written), and the paths current
// holds that are gone or changed.
func planFiles(p indexPlan, tree []fileRow, current map[string]string) indexPlan {
	kept := map[string]bool{}
	for _, f := range tree {
		if sha, ok := current[f.Path]; ok && sha == f.BlobSHA {
			kept[f.Path] = true
			continue
		}
		p.added = append(p.added, f)
	}
	for pth := range current {
		if !kept[pth] {
			p.removed = append(p.removed, pth)
		}
	}
	return p
}

// isText reports whether a file's bytes are text the index keeps: UTF-8
// without NUL bytes.
func isText(b []byte) bool { return bytes.IndexByte(b, 0) < 0 && utf8.Valid(b) }

// files lists the regular files of the commit's tree no larger than
// MaxFileSize (symbolic links and submodules left out), without their
// content.
func (g gitDir) files(ctx context.Context, commit string) ([]fileRow, error) {
	out, err := gitcmd.In(g.dir).Output(ctx, nil, "ls-tree", "-r", "-l", "-z", commit)
	if err != nil {
		return nil, err
	}
	var files []fileRow
	for _, rec := range strings.Split(string(out), "\x00") {
		// <mode> SP <type> SP <object> SP+ <size> TAB <path>
		meta, pth, ok := strings.Cut(rec, "\t")
		fields := strings.Fields(meta)
		if !ok || len(fields) != 4 || fields[1] != "blob" || (fields[0] != "100644" && fields[0] != "100755") {
			continue
		}
		size, err := strconv.ParseInt(fields[3], 10, 64)
		if err != nil || size > MaxFileSize {
			continue
		}
		files = append(files, fileRow{Path: pth, BlobSHA: fields[2], Size: size})
	}
	return files, nil
}

// logFormat prints a commit's fields separated by US, the message last;
// -z ends each commit with NUL.
const logFormat = "%H%x1f%T%x1f%P%x1f%an%x1f%ae%x1f%aI%x1f%cn%x1f%ce%x1f%cI%x1f%B"

// commits lists the commits reachable from head and not from exclude
// ("" for the whole history).
func (g gitDir) commits(ctx context.Context, head, exclude string) ([]commitRow, error) {
	args := []string{"log", "-z", "--format=" + logFormat, head}
	if exclude != "" {
		args = append(args, "^"+exclude)
	}
	out, err := gitcmd.In(g.dir).Output(ctx, nil, append(args, "--")...)
	if err != nil {
		return nil, err
	}
	var list []commitRow
	for _, rec := range strings.Split(string(out), "\x00") {
		f := strings.SplitN(rec, "\x1f", 10)
		if len(f) != 10 {
			continue
		}
		ad, err1 := time.Parse(time.RFC3339, f[5])
		cd, err2 := time.Parse(time.RFC3339, f[8])
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("commit %s: unreadable dates %q %q", f[0], f[5], f[8])
		}
		list = append(list, commitRow{SHA: f[0], Tree: f[1], Parents: strings.Fields(f[2]),
			AuthorName: valid(f[3]), AuthorEmail: valid(f[4]), AuthorDate: ad.UTC(),
			CommitterName: valid(f[6]), CommitterEmail: valid(f[7]), CommitterDate: cd.UTC(),
			Message: valid(strings.TrimRight(f[9], "\n"))})
	}
	return list, nil
}

// valid is s with invalid UTF-8 replaced: a text column takes UTF-8 only.
func valid(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

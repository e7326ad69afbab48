package codesearch

import (
	"bytes"
	"context"
	"errors"
	"path"
	"strings"
	"time"
	"unicode/utf8"

	"forgeapi/internal/git/gitread"
	"forgeapi/internal/store"
)

// MaxFileSize is the largest file indexed, as the platform's code search:
// larger files are left out, and so are binary ones.
const MaxFileSize = 384 << 10

// branchHead is the commit the branch points at in g, "" when the branch
// does not exist (an empty repository, a deleted default branch).
func branchHead(g *gitread.Repository, branch string) (string, error) {
	sha, err := g.Resolve("refs/heads/" + branch)
	if errors.Is(err, gitread.ErrRevisionNotFound) {
		return "", nil
	}
	return sha, err
}

// indexPlan is what an indexing run writes: the commits new on the
// branch (all of its history when fullHistory: the commits indexed
// before are replaced), the files added or changed (their content read
// as they are written) and the paths whose rows go: removed from the
// tree, or no longer a file the index keeps. A path is never both added
// and removed.
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

// plan compares what the index holds for the claimed repository with the
// commit head, in process. Commits: those of head not reachable from the
// head indexed last, or head's whole history when that one is not its
// ancestor. Files: the diff of the trees of c.filesAt (the commit the
// rows hold) and head; without one (a first run, a run cut short) the
// whole tree of head compared with the rows.
func plan(ctx context.Context, g *gitread.Repository, q store.Q, repoID int64, c claimed, head string) (indexPlan, error) {
	var p indexPlan
	if c.head != head {
		exclude := ""
		if c.head != "" {
			ok, err := g.IsAncestor(ctx, c.head, head)
			if err != nil && !errors.Is(err, gitread.ErrRevisionNotFound) {
				return p, err
			}
			if ok {
				exclude = c.head
			}
		}
		p.fullHistory = exclude == ""
		commits, err := commitsOf(ctx, g, head, exclude)
		if err != nil {
			return p, err
		}
		p.commits = commits
	}
	base := c.filesAt
	changes, err := g.ChangedEntries(ctx, base, head)
	if base != "" && errors.Is(err, gitread.ErrRevisionNotFound) { // gone since (a force push, then gc)
		base = ""
		changes, err = g.ChangedEntries(ctx, "", head)
	}
	if err != nil {
		return p, err
	}
	if base != "" {
		return planChanges(p, g, changes)
	}
	current, err := indexedFiles(ctx, q, repoID)
	if err != nil {
		return p, err
	}
	return planFiles(p, g, changes, current)
}

// planChanges adds to p the changes of a diff against the tree the rows
// hold: a path whose new side is a file the index keeps is written, any
// other changed path (deleted, a symbolic link now, too large) removed.
func planChanges(p indexPlan, g *gitread.Repository, changes []gitread.EntryChange) (indexPlan, error) {
	for _, ch := range changes {
		f, ok, err := indexable(g, ch)
		if err != nil {
			return p, err
		}
		if ok {
			p.added = append(p.added, f)
		} else if ch.OldSHA != "" {
			p.removed = append(p.removed, ch.Path)
		}
	}
	return p, nil
}

// planFiles adds to p the files of a whole tree (changes from the empty
// tree) that current (the rows: path to blob SHA) does not hold at the
// same SHA, and the paths current holds that the tree has no file the
// index keeps at.
func planFiles(p indexPlan, g *gitread.Repository, changes []gitread.EntryChange, current map[string]string) (indexPlan, error) {
	kept := map[string]bool{}
	for _, ch := range changes {
		f, ok, err := indexable(g, ch)
		if err != nil {
			return p, err
		}
		if !ok {
			continue
		}
		kept[f.Path] = true
		if current[f.Path] != f.BlobSHA {
			p.added = append(p.added, f)
		}
	}
	for pth := range current {
		if !kept[pth] {
			p.removed = append(p.removed, pth)
		}
	}
	return p, nil
}

// indexable is the file row of a change's new side when it is a regular
// file no larger than MaxFileSize (symbolic links and submodules left
// out), without its content; ok is false otherwise.
func indexable(g *gitread.Repository, ch gitread.EntryChange) (f fileRow, ok bool, err error) {
	if ch.NewMode != "100644" && ch.NewMode != "100755" {
		return f, false, nil
	}
	size, err := g.BlobSize(ch.NewSHA)
	if err != nil || size > MaxFileSize {
		return f, false, err
	}
	return fileRow{Path: ch.Path, BlobSHA: ch.NewSHA, Size: size}, true, nil
}

// isText reports whether a file's bytes are text the index keeps: UTF-8
// without NUL bytes.
func isText(b []byte) bool { return bytes.IndexByte(b, 0) < 0 && utf8.Valid(b) }

// commitsOf lists the commits reachable from head and not from exclude
// ("" for the whole history).
func commitsOf(ctx context.Context, g *gitread.Repository, head, exclude string) ([]commitRow, error) {
	q := gitread.CommitQuery{Head: head, Limit: -1, NoPaths: true}
	if exclude != "" {
		q.Exclude = []string{exclude}
	}
	list, err := g.Commits(ctx, q)
	if err != nil {
		return nil, err
	}
	rows := make([]commitRow, len(list.Commits))
	for i, c := range list.Commits {
		rows[i] = commitRow{SHA: c.SHA, Tree: c.TreeSHA, Parents: c.ParentSHAs,
			AuthorName: valid(c.AuthorName), AuthorEmail: valid(c.AuthorEmail), AuthorDate: c.AuthorDate.UTC(),
			CommitterName: valid(c.CommitterName), CommitterEmail: valid(c.CommitterEmail), CommitterDate: c.CommitterDate.UTC(),
			Message: valid(strings.TrimRight(c.Message, "\n"))}
	}
	return rows, nil
}

// valid is s with invalid UTF-8 replaced: a text column takes UTF-8 only.
func valid(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

package gitread

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// ChangeStatus says how a path changed between two trees.
type ChangeStatus string

// Change statuses. Renames are reported as a deletion plus an addition.
const (
	StatusAdded    ChangeStatus = "added"
	StatusModified ChangeStatus = "modified"
	StatusDeleted  ChangeStatus = "deleted"
)

// Change is one changed path. A change of content, mode or type (file to
// symlink) is StatusModified. OldSHA and NewSHA are the object names of the
// path's entry before and after ("" on the side where it is absent), so that
// callers can read the blobs with ReadBlob or cache by content.
type Change struct {
	Path   string
	Status ChangeStatus
	OldSHA string
	NewSHA string
}

// ChangedPaths lists the paths that differ between the trees of revisions
// base and head (like `git diff --name-status --no-renames base head`),
// sorted by path. An empty base compares against the empty tree. When
// pathspecs are given, only paths equal to one of them or inside one of them
// (as a directory) are listed. It compares tree entries only (never file
// contents) and skips unchanged subtrees by hash.
func (r *Repository) ChangedPaths(ctx context.Context, base, head string, pathspecs ...string) ([]Change, error) {
	var baseTree *object.Tree
	if base != "" {
		c, err := r.resolveCommit(base)
		if err != nil {
			return nil, err
		}
		if baseTree, err = c.Tree(); err != nil {
			return nil, fmt.Errorf("gitread: read tree of %s: %w", c.Hash, err)
		}
	}
	c, err := r.resolveCommit(head)
	if err != nil {
		return nil, err
	}
	headTree, err := c.Tree()
	if err != nil {
		return nil, fmt.Errorf("gitread: read tree of %s: %w", c.Hash, err)
	}
	return r.diffTrees(ctx, baseTree, headTree, pathspecs)
}

// EntryChange is a Change with the modes of the path's entry on each
// side, as git writes them ("100644", "100755", "120000" for a symbolic
// link, "160000" for a submodule; "" where the path is absent).
type EntryChange struct {
	Change
	OldMode, NewMode string
}

// ChangedEntries is ChangedPaths with the modes of each side's entry, for
// callers that keep regular files only (an indexer): base "" lists every
// file of head as added.
func (r *Repository) ChangedEntries(ctx context.Context, base, head string) ([]EntryChange, error) {
	var baseTree *object.Tree
	if base != "" {
		t, err := r.commitTree(base)
		if err != nil {
			return nil, err
		}
		baseTree = t
	}
	headTree, err := r.commitTree(head)
	if err != nil {
		return nil, err
	}
	d, err := r.diffTreeEntries(ctx, baseTree, headTree, nil)
	if err != nil {
		return nil, err
	}
	out := make([]EntryChange, len(d.out))
	for i, c := range d.out {
		modes := d.modes[c.Path]
		out[i] = EntryChange{Change: c, OldMode: modeString(modes[0]), NewMode: modeString(modes[1])}
	}
	return out, nil
}

// modeString is a tree entry's mode as git writes it, "" for none.
func modeString(m filemode.FileMode) string {
	if m == 0 {
		return ""
	}
	return fmt.Sprintf("%06o", uint32(m))
}

// diffTrees diffs two trees (either may be nil for the empty tree) and keeps
// the changes matching pathspecs (all when there are none), sorted by path.
func (r *Repository) diffTrees(ctx context.Context, from, to *object.Tree, pathspecs []string) ([]Change, error) {
	d, err := r.diffTreeEntries(ctx, from, to, pathspecs)
	if err != nil {
		return nil, err
	}
	return d.out, nil
}

// diffTreeEntries is diffTrees with the modes of the entries of each
// change.
func (r *Repository) diffTreeEntries(ctx context.Context, from, to *object.Tree, pathspecs []string) (*treeDiff, error) {
	d := &treeDiff{r: r, ctx: ctx, match: pathMatcher(pathspecs), modes: map[string][2]filemode.FileMode{}}
	if err := d.trees("", from, to); err != nil {
		return nil, fmt.Errorf("gitread: diff trees: %w", err)
	}
	sort.Slice(d.out, func(i, j int) bool { return d.out[i].Path < d.out[j].Path })
	return d, nil
}

// treeDiff compares trees entry by entry, as `git diff-tree -r` does: it
// descends only into subtrees whose hashes differ and never reads blobs.
// (go-git's object.DiffTree gives the same answer but decodes every sibling
// subtree of a changed directory, which made it several times slower here.)
type treeDiff struct {
	r     *Repository
	ctx   context.Context
	match func(string) bool
	out   []Change
	modes map[string][2]filemode.FileMode // by path: the modes of the entries before and after (0 where absent)
}

// trees records the changes between two trees at dir; a nil tree is empty.
func (d *treeDiff) trees(dir string, from, to *object.Tree) error {
	if err := d.ctx.Err(); err != nil {
		return err
	}
	old := map[string]object.TreeEntry{}
	if from != nil {
		for _, e := range from.Entries {
			old[e.Name] = e
		}
	}
	if to != nil {
		for _, e := range to.Entries {
			prev, existed := old[e.Name]
			delete(old, e.Name)
			var err error
			if existed {
				err = d.entries(path.Join(dir, e.Name), &prev, &e)
			} else {
				err = d.entries(path.Join(dir, e.Name), nil, &e)
			}
			if err != nil {
				return err
			}
		}
	}
	for _, e := range old {
		if err := d.entries(path.Join(dir, e.Name), &e, nil); err != nil {
			return err
		}
	}
	return nil
}

// entries records the change between two entries at p (nil for absent).
func (d *treeDiff) entries(p string, from, to *object.TreeEntry) error {
	if from != nil && to != nil && from.Hash == to.Hash && from.Mode == to.Mode {
		return nil
	}
	fromDir, toDir := isDir(from), isDir(to)
	switch {
	case fromDir || toDir:
		if from != nil && !fromDir {
			d.add(p, StatusDeleted, from, nil)
		}
		if to != nil && !toDir {
			d.add(p, StatusAdded, nil, to)
		}
		return d.subtrees(p, from, to)
	case from == nil:
		d.add(p, StatusAdded, nil, to)
	case to == nil:
		d.add(p, StatusDeleted, from, nil)
	default:
		d.add(p, StatusModified, from, to)
	}
	return nil
}

// subtrees diffs the directory sides of two entries.
func (d *treeDiff) subtrees(p string, from, to *object.TreeEntry) error {
	var fromTree, toTree *object.Tree
	var err error
	if isDir(from) {
		if fromTree, err = d.r.repo.TreeObject(from.Hash); err != nil {
			return fmt.Errorf("read tree %s: %w", from.Hash, err)
		}
	}
	if isDir(to) {
		if toTree, err = d.r.repo.TreeObject(to.Hash); err != nil {
			return fmt.Errorf("read tree %s: %w", to.Hash, err)
		}
	}
	return d.trees(p, fromTree, toTree)
}

// add records a change at p; from and to are the entries on each side (nil
// for absent).
func (d *treeDiff) add(p string, status ChangeStatus, from, to *object.TreeEntry) {
	if d.match(p) {
		d.out = append(d.out, Change{Path: p, Status: status, OldSHA: entrySHA(from), NewSHA: entrySHA(to)})
		d.modes[p] = [2]filemode.FileMode{entryMode(from), entryMode(to)}
	}
}

func entrySHA(e *object.TreeEntry) string {
	if e == nil {
		return ""
	}
	return e.Hash.String()
}

func entryMode(e *object.TreeEntry) filemode.FileMode {
	if e == nil {
		return 0
	}
	return e.Mode
}

func isDir(e *object.TreeEntry) bool { return e != nil && e.Mode == filemode.Dir }

// pathMatcher returns a predicate that accepts a path equal to or below one
// of pathspecs, or every path when there are none.
func pathMatcher(pathspecs []string) func(string) bool {
	var specs []string
	for _, p := range pathspecs {
		if p = strings.Trim(p, "/"); p != "" {
			specs = append(specs, p)
		}
	}
	if len(specs) == 0 {
		return func(string) bool { return true }
	}
	return func(path string) bool {
		for _, s := range specs {
			if path == s || strings.HasPrefix(path, s+"/") {
				return true
			}
		}
		return false
	}
}

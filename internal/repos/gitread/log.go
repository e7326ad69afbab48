package gitread

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing/format/diff"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// LogQuery selects commits of the history of Head, newest first by
// committer date: with Path, those that changed it (or a path inside it)
// against their first parent; with Authors, those whose author email is
// one of them (compared without case); with Since and Until, those
// committed in that span. Skip and Limit page the result.
type LogQuery struct {
	Head         string
	Path         string
	Authors      []string
	Since, Until time.Time
	Skip, Limit  int
}

// Log returns the commits q selects, without their changed paths, and
// whether more follow the page. It fails with ErrRevisionNotFound when
// Head does not resolve.
func (r *Repository) Log(ctx context.Context, q LogQuery) ([]Commit, bool, error) {
	head, err := r.resolveCommit(q.Head)
	if err != nil {
		return nil, false, err
	}
	hashes, err := r.rangeHashes(ctx, head, nil)
	if err != nil {
		return nil, false, err
	}
	var out []Commit
	skip := q.Skip
	for _, h := range hashes {
		c, err := r.repo.CommitObject(h)
		if err != nil {
			return nil, false, fmt.Errorf("gitread: read commit %s: %w", h, err)
		}
		ok, err := r.selects(ctx, q, c)
		if err != nil {
			return nil, false, err
		}
		if !ok {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		if len(out) == q.Limit {
			return out, true, nil
		}
		out = append(out, metaOf(c))
	}
	return out, false, nil
}

// selects reports whether c passes q's filters.
func (r *Repository) selects(ctx context.Context, q LogQuery, c *object.Commit) (bool, error) {
	when := c.Committer.When
	if !q.Since.IsZero() && when.Before(q.Since) || !q.Until.IsZero() && when.After(q.Until) {
		return false, nil
	}
	if len(q.Authors) > 0 && !containsFold(q.Authors, c.Author.Email) {
		return false, nil
	}
	if q.Path == "" {
		return true, nil
	}
	changes, err := r.changesOf(ctx, c, []string{strings.Trim(q.Path, "/")})
	return len(changes) > 0, err
}

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}

// metaOf describes a commit without its changed paths.
func metaOf(c *object.Commit) Commit {
	out := Commit{SHA: c.Hash.String(), TreeSHA: c.TreeHash.String(), AuthorName: c.Author.Name,
		AuthorEmail: c.Author.Email, AuthorDate: c.Author.When, CommitterName: c.Committer.Name,
		CommitterEmail: c.Committer.Email, CommitterDate: c.Committer.When, Message: c.Message}
	for _, p := range c.ParentHashes {
		out.ParentSHAs = append(out.ParentSHAs, p.String())
	}
	return out
}

// changesOf lists the paths c changed against its first parent (against
// the empty tree for a root commit).
func (r *Repository) changesOf(ctx context.Context, c *object.Commit, pathspecs []string) ([]Change, error) {
	var parentTree *object.Tree
	if len(c.ParentHashes) > 0 {
		parent, err := r.repo.CommitObject(c.ParentHashes[0])
		if err != nil {
			return nil, fmt.Errorf("gitread: read commit %s: %w", c.ParentHashes[0], err)
		}
		if parentTree, err = parent.Tree(); err != nil {
			return nil, fmt.Errorf("gitread: read tree of %s: %w", parent.Hash, err)
		}
	}
	tree, err := c.Tree()
	if err != nil {
		return nil, fmt.Errorf("gitread: read tree of %s: %w", c.Hash, err)
	}
	return r.diffTrees(ctx, parentTree, tree, pathspecs)
}

// FileDiff is one file's change between two commits: its status, the
// lines it added and deleted, and its unified diff (empty for binary
// files).
type FileDiff struct {
	Change
	PreviousPath string // for a rename; forgeapi reports none
	Additions    int
	Deletions    int
	Binary       bool
	Patch        string
}

// Diff returns the changes of the files between revisions base and head
// (base "" for the empty tree), sorted by path, at most limit of them,
// and how many files changed in all.
func (r *Repository) Diff(ctx context.Context, base, head string, limit int) ([]FileDiff, int, error) {
	headCommit, err := r.resolveCommit(head)
	if err != nil {
		return nil, 0, err
	}
	var from *object.Tree
	if base != "" {
		baseCommit, err := r.resolveCommit(base)
		if err != nil {
			return nil, 0, err
		}
		if from, err = baseCommit.Tree(); err != nil {
			return nil, 0, fmt.Errorf("gitread: read tree of %s: %w", base, err)
		}
	}
	to, err := headCommit.Tree()
	if err != nil {
		return nil, 0, fmt.Errorf("gitread: read tree of %s: %w", head, err)
	}
	changes, err := r.diffTrees(ctx, from, to, nil)
	if err != nil {
		return nil, 0, err
	}
	total := len(changes)
	if len(changes) > limit {
		changes = changes[:limit]
	}
	if from == nil {
		from = &object.Tree{}
	}
	patch, err := from.PatchContext(ctx, to)
	if err != nil {
		return nil, 0, fmt.Errorf("gitread: diff %s..%s: %w", base, head, err)
	}
	byPath := map[string]diff.FilePatch{}
	for _, fp := range patch.FilePatches() {
		f, t := fp.Files()
		switch {
		case t != nil:
			byPath[t.Path()] = fp
		case f != nil:
			byPath[f.Path()] = fp
		}
	}
	out := make([]FileDiff, 0, len(changes))
	for _, c := range changes {
		fd := FileDiff{Change: c}
		if fp, ok := byPath[c.Path]; ok {
			fd.Binary = fp.IsBinary()
			fd.Additions, fd.Deletions = countLines(fp)
			if !fd.Binary {
				fd.Patch, err = unifiedHunks(fp)
				if err != nil {
					return nil, 0, err
				}
			}
		}
		out = append(out, fd)
	}
	return out, total, nil
}

// countLines counts the added and deleted lines of a file patch.
func countLines(fp diff.FilePatch) (added, deleted int) {
	for _, ch := range fp.Chunks() {
		n := strings.Count(ch.Content(), "\n")
		if !strings.HasSuffix(ch.Content(), "\n") && ch.Content() != "" {
			n++
		}
		switch ch.Type() {
		case diff.Add:
			added += n
		case diff.Delete:
			deleted += n
		}
	}
	return added, deleted
}

// onePatch is a diff.Patch of one file, to encode it alone.
type onePatch struct{ fp diff.FilePatch }

func (p onePatch) FilePatches() []diff.FilePatch { return []diff.FilePatch{p.fp} }
func (p onePatch) Message() string               { return "" }

// unifiedHunks renders a file patch's hunks (from the first "@@"), as the
// platform's patch field has them: no "diff --git" and file header lines.
func unifiedHunks(fp diff.FilePatch) (string, error) {
	var buf bytes.Buffer
	if err := diff.NewUnifiedEncoder(&buf, diff.DefaultContextLines).Encode(onePatch{fp}); err != nil {
		return "", fmt.Errorf("gitread: encode patch: %w", err)
	}
	s := buf.String()
	if i := strings.Index(s, "\n@@"); i >= 0 {
		return strings.TrimSuffix(s[i+1:], "\n"), nil
	}
	return "", nil
}

// SplitBasehead splits the basehead of a comparison, "BASE...HEAD", into
// its revisions; ok is false when either is missing.
func SplitBasehead(basehead string) (base, head string, ok bool) {
	base, head, found := strings.Cut(basehead, "...")
	return base, head, found && base != "" && head != ""
}

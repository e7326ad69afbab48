package gitread

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Commit describes one commit and the paths it changed against its first
// parent (against the empty tree for a root commit).
type Commit struct {
	SHA            string
	TreeSHA        string
	ParentSHAs     []string
	AuthorName     string
	AuthorEmail    string
	AuthorDate     time.Time
	CommitterName  string
	CommitterEmail string
	CommitterDate  time.Time
	Message        string
	// Signature is the commit's signature (its gpgsig header), "" when
	// it has none; Payload is then the commit without that header, the
	// bytes the signature signs.
	Signature string
	Payload   string
	Added     []string
	Removed   []string
	Modified  []string
}

// CommitQuery selects the commits reachable from Head and not reachable from
// any of Exclude: `git rev-list Head ^Exclude[0] ^Exclude[1]...`. Head and
// Exclude entries are revisions as accepted by Resolve. An empty Exclude
// selects the whole history of Head. Limit caps how many commits are returned
// with details; 0 returns none (only the total), a negative Limit returns all.
type CommitQuery struct {
	Head    string
	Exclude []string
	Limit   int
	// NoPaths leaves the commits' Added, Removed and Modified empty: no
	// tree of the range is diffed.
	NoPaths bool
}

// CommitList is the answer to a CommitQuery.
type CommitList struct {
	// Commits are the newest commits of the range by committer date, newest
	// first, at most Limit of them.
	Commits []Commit
	// Total counts every commit of the range.
	Total int
}

// Commits lists the commits that q selects. It fails with
// ErrRevisionNotFound when Head or an Exclude entry does not resolve. The
// walk stops early once only excluded history is left, so a push of n
// commits onto a long history costs about n commit reads, and only the
// first Limit commits are diffed.
func (r *Repository) Commits(ctx context.Context, q CommitQuery) (CommitList, error) {
	head, err := r.resolveCommit(q.Head)
	if err != nil {
		return CommitList{}, err
	}
	exclude := make([]*object.Commit, 0, len(q.Exclude))
	for _, rev := range q.Exclude {
		c, err := r.resolveCommit(rev)
		if err != nil {
			return CommitList{}, err
		}
		exclude = append(exclude, c)
	}
	hashes, err := r.rangeHashes(ctx, head, exclude)
	if err != nil {
		return CommitList{}, err
	}
	list := CommitList{Total: len(hashes)}
	if q.Limit >= 0 && len(hashes) > q.Limit {
		hashes = hashes[:q.Limit]
	}
	for _, h := range hashes {
		describe := r.describeCommit
		if q.NoPaths {
			describe = r.describeMeta
		}
		c, err := describe(ctx, h)
		if err != nil {
			return CommitList{}, err
		}
		list.Commits = append(list.Commits, c)
	}
	return list, nil
}

// CommitsBetween lists the commits of base..head, newest first, at most
// limit of them with details, and counts them all. An empty base lists the
// whole history of head.
func (r *Repository) CommitsBetween(ctx context.Context, base, head string, limit int) (CommitList, error) {
	q := CommitQuery{Head: head, Limit: limit}
	if base != "" {
		q.Exclude = []string{base}
	}
	return r.Commits(ctx, q)
}

// CountCommits counts the commits of base..head (the whole history of head
// when base is empty).
func (r *Repository) CountCommits(ctx context.Context, base, head string) (int, error) {
	list, err := r.CommitsBetween(ctx, base, head, 0)
	return list.Total, err
}

// MergeBase returns the SHA of the best common ancestor of revisions a and b,
// as `git merge-base a b` does (one of them when several are equally good).
// It fails with ErrRevisionNotFound for a bad revision and ErrNoMergeBase when
// the histories are unrelated.
func (r *Repository) MergeBase(ctx context.Context, a, b string) (string, error) {
	ca, err := r.resolveCommit(a)
	if err != nil {
		return "", err
	}
	cb, err := r.resolveCommit(b)
	if err != nil {
		return "", err
	}
	bases, err := r.mergeBaseCandidates(ctx, ca, cb)
	if err != nil {
		return "", err
	}
	if len(bases) == 0 {
		return "", fmt.Errorf("gitread: merge base of %q and %q: %w", a, b, ErrNoMergeBase)
	}
	return bases[0].Hash.String(), nil
}

// IsAncestor reports whether revision ancestor is reachable from revision
// descendant (a commit is its own ancestor). A push from old to new is a fast
// forward exactly when IsAncestor(old, new).
func (r *Repository) IsAncestor(ctx context.Context, ancestor, descendant string) (bool, error) {
	base, err := r.MergeBase(ctx, ancestor, descendant)
	if errors.Is(err, ErrNoMergeBase) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	anc, err := r.Resolve(ancestor)
	if err != nil {
		return false, err
	}
	return base == anc, nil
}

// describeMeta loads commit h without its changed paths.
func (r *Repository) describeMeta(_ context.Context, h plumbing.Hash) (Commit, error) {
	c, err := r.repo.CommitObject(h)
	if err != nil {
		return Commit{}, fmt.Errorf("gitread: read commit %s: %w", h, err)
	}
	return metaOf(c), nil
}

// describeCommit loads commit h and the paths it changed against its first parent.
func (r *Repository) describeCommit(ctx context.Context, h plumbing.Hash) (Commit, error) {
	c, err := r.repo.CommitObject(h)
	if err != nil {
		return Commit{}, fmt.Errorf("gitread: read commit %s: %w", h, err)
	}
	out := Commit{
		SHA:            c.Hash.String(),
		TreeSHA:        c.TreeHash.String(),
		AuthorName:     c.Author.Name,
		AuthorEmail:    c.Author.Email,
		AuthorDate:     c.Author.When,
		CommitterName:  c.Committer.Name,
		CommitterEmail: c.Committer.Email,
		CommitterDate:  c.Committer.When,
		Message:        c.Message,
	}
	for _, p := range c.ParentHashes {
		out.ParentSHAs = append(out.ParentSHAs, p.String())
	}
	var parentTree *object.Tree
	if len(c.ParentHashes) > 0 {
		parent, err := r.repo.CommitObject(c.ParentHashes[0])
		if err != nil {
			return Commit{}, fmt.Errorf("gitread: read commit %s: %w", c.ParentHashes[0], err)
		}
		if parentTree, err = parent.Tree(); err != nil {
			return Commit{}, fmt.Errorf("gitread: read tree of %s: %w", parent.Hash, err)
		}
	}
	tree, err := c.Tree()
	if err != nil {
		return Commit{}, fmt.Errorf("gitread: read tree of %s: %w", c.Hash, err)
	}
	changes, err := r.diffTrees(ctx, parentTree, tree, nil)
	if err != nil {
		return Commit{}, err
	}
	for _, ch := range changes {
		switch ch.Status {
		case StatusAdded:
			out.Added = append(out.Added, ch.Path)
		case StatusDeleted:
			out.Removed = append(out.Removed, ch.Path)
		default:
			out.Modified = append(out.Modified, ch.Path)
		}
	}
	return out, nil
}

package gitread

import (
	"errors"
	"fmt"
	"slices"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// RefCommits returns the commit SHAs that the repository's branches and
// tags point at (annotated tags peeled), without duplicates. References
// that lead to no commit are skipped. An empty repository gives none.
func (r *Repository) RefCommits() ([]string, error) {
	iter, err := r.repo.References()
	if err != nil {
		return nil, fmt.Errorf("gitread: list references: %w", err)
	}
	defer iter.Close()
	seen := map[string]bool{}
	var out []string
	err = iter.ForEach(func(ref *plumbing.Reference) error {
		if ref.Type() != plumbing.HashReference || !(ref.Name().IsBranch() || ref.Name().IsTag()) {
			return nil
		}
		c, err := r.peelToCommit(ref.Name().String(), ref.Hash())
		if err != nil {
			return nil // a tag of a tree or blob: not part of any commit range
		}
		if sha := c.Hash.String(); !seen[sha] {
			seen[sha] = true
			out = append(out, sha)
		}
		return nil
	})
	if err != nil && err != storer.ErrStop {
		return nil, fmt.Errorf("gitread: list references: %w", err)
	}
	return out, nil
}

// BranchesAt returns the full names ("refs/heads/main") of the branches
// whose head is the commit, sorted.
func (r *Repository) BranchesAt(commit string) ([]string, error) {
	iter, err := r.repo.Branches()
	if err != nil {
		return nil, fmt.Errorf("gitread: list branches: %w", err)
	}
	defer iter.Close()
	var out []string
	err = iter.ForEach(func(ref *plumbing.Reference) error {
		if ref.Hash().String() == commit {
			out = append(out, ref.Name().String())
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("gitread: list branches: %w", err)
	}
	slices.Sort(out)
	return out, nil
}

// RefTarget returns the object a full reference name ("refs/heads/main")
// points at, unpeeled (an annotated tag's own SHA), and whether the
// reference exists.
func (r *Repository) RefTarget(name string) (string, bool, error) {
	ref, err := r.repo.Reference(plumbing.ReferenceName(name), true)
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("gitread: read reference %s: %w", name, err)
	}
	return ref.Hash().String(), true, nil
}

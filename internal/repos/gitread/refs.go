package gitread

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"
)

// RefCommits returns the commit SHAs that the repository's branches and
// tags point at (annotated tags peeled), without duplicates. References
// that lead to no commit are skipped. An empty repository gives none.
//
// go-git reads every file under refs/, the lock file of a reference that
// git is writing at that moment included (created empty, then filled and
// renamed), and fails with dotgit.ErrEmptyRefFile on it; the listing is
// read again, a few times over a few milliseconds, until the write is
// done.
func (r *Repository) RefCommits() ([]string, error) {
	for wait := time.Millisecond; ; wait *= 2 {
		out, err := r.refCommits()
		if !errors.Is(err, dotgit.ErrEmptyRefFile) || wait > 64*time.Millisecond {
			return out, err
		}
		time.Sleep(wait)
	}
}

func (r *Repository) refCommits() ([]string, error) {
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

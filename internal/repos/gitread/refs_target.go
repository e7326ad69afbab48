package gitread

import (
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
)

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

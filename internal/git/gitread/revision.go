package gitread

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"forgeapi/internal/git/gitref"
)

// minShortSHA is the shortest abbreviated object name Resolve accepts.
const minShortSHA = 4

// refPrefixes are tried in order for a short reference name, as git does.
var refPrefixes = [...]string{"refs/", "refs/tags/", "refs/heads/", "refs/remotes/"}

// Resolve returns the full SHA of the commit that rev names. rev may be
// "HEAD", a full reference ("refs/heads/main"), a branch or tag name (which
// may contain "/"), a full SHA or a unique abbreviated SHA of at least 4 hex
// digits. Annotated tags are peeled to their commit. Reference names win over
// abbreviated SHAs, as in git. Revision expressions ("main~1", "a..b") are not
// supported: callers split ranges themselves.
//
// Resolve fails with ErrRevisionNotFound when rev is malformed, names
// nothing, is an ambiguous abbreviation, or does not lead to a commit (for
// example HEAD in an empty repository).
func (r *Repository) Resolve(rev string) (string, error) {
	c, err := r.resolveCommit(rev)
	if err != nil {
		return "", err
	}
	return c.Hash.String(), nil
}

// resolveCommit resolves rev as documented on Resolve and loads the commit.
func (r *Repository) resolveCommit(rev string) (*object.Commit, error) {
	if !wellFormedRevision(rev) {
		return nil, fmt.Errorf("gitread: malformed revision %q: %w", rev, ErrRevisionNotFound)
	}
	hash, err := r.resolveHash(rev)
	if err != nil {
		return nil, err
	}
	return r.peelToCommit(rev, hash)
}

// resolveHash finds the object that rev names, without peeling.
func (r *Repository) resolveHash(rev string) (plumbing.Hash, error) {
	if isHex(rev) && len(rev) == 2*len(plumbing.ZeroHash) {
		return plumbing.NewHash(rev), nil
	}
	if hash, ok := r.lookupRef(rev); ok {
		return hash, nil
	}
	if isHex(rev) && len(rev) >= minShortSHA {
		return r.lookupShortSHA(rev)
	}
	return plumbing.ZeroHash, fmt.Errorf("gitread: revision %q: %w", rev, ErrRevisionNotFound)
}

// lookupRef resolves rev as a reference name the way git's "dwim" does.
func (r *Repository) lookupRef(rev string) (plumbing.Hash, bool) {
	candidates := []string{rev}
	if rev != "HEAD" && !strings.HasPrefix(rev, "refs/") {
		candidates = candidates[:0]
		for _, prefix := range refPrefixes {
			candidates = append(candidates, prefix+rev)
		}
		candidates = append(candidates, "refs/remotes/"+rev+"/HEAD")
	}
	for _, name := range candidates {
		ref, err := r.repo.Reference(plumbing.ReferenceName(name), true)
		if err == nil && !ref.Hash().IsZero() {
			return ref.Hash(), true
		}
	}
	return plumbing.ZeroHash, false
}

// lookupShortSHA finds the one object whose name starts with the hex prefix.
func (r *Repository) lookupShortSHA(prefix string) (plumbing.Hash, error) {
	prefix = strings.ToLower(prefix)
	raw, err := hex.DecodeString(prefix[:len(prefix)&^1])
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("gitread: revision %q: %w", prefix, ErrRevisionNotFound)
	}
	hashes, err := r.storage.HashesWithPrefix(raw)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("gitread: look up %q: %w", prefix, err)
	}
	var found []plumbing.Hash
	for _, h := range hashes {
		if strings.HasPrefix(h.String(), prefix) {
			found = append(found, h)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return plumbing.ZeroHash, fmt.Errorf("gitread: revision %q: %w", prefix, ErrRevisionNotFound)
	default:
		return plumbing.ZeroHash, fmt.Errorf("gitread: ambiguous revision %q: %w", prefix, ErrRevisionNotFound)
	}
}

// peelToCommit follows annotated tags from hash until it reaches a commit.
func (r *Repository) peelToCommit(rev string, hash plumbing.Hash) (*object.Commit, error) {
	const maxTagDepth = 16
	for range maxTagDepth {
		obj, err := r.repo.Object(plumbing.AnyObject, hash)
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			return nil, fmt.Errorf("gitread: revision %q: %w", rev, ErrRevisionNotFound)
		}
		if err != nil {
			return nil, fmt.Errorf("gitread: read object %s: %w", hash, err)
		}
		switch o := obj.(type) {
		case *object.Commit:
			return o, nil
		case *object.Tag:
			hash = o.Target
		default:
			return nil, fmt.Errorf("gitread: revision %q names a %s, not a commit: %w", rev, obj.Type(), ErrRevisionNotFound)
		}
	}
	return nil, fmt.Errorf("gitread: revision %q: tag chain too long: %w", rev, ErrRevisionNotFound)
}

// wellFormedRevision reports whether rev can be a reference name or an
// object name: "HEAD", a full reference name, or a short name (a branch,
// a tag, a hex object name) that would be one under refs/heads/, as
// gitref checks them. It rejects empty strings, revision expressions and
// names git never allows in a reference.
func wellFormedRevision(rev string) bool {
	if rev == "HEAD" {
		return true
	}
	if strings.HasPrefix(rev, "refs/") {
		return gitref.ValidName(rev)
	}
	return gitref.ValidBranch(rev)
}

// isHex reports whether s is non-empty and made only of hex digits.
func isHex(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

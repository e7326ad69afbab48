package gitread

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// storedRef is a reference under refs/ that names an object: its full
// name and the object's hash.
type storedRef struct {
	name string
	hash plumbing.Hash
}

// listRefs returns the references under refs/ whose full name starts
// with prefix ("refs/" for all of them), sorted by name: every listing of
// this package reads them here, never through go-git.
//
// go-git's listing reads every file under refs/, the lock file of a
// reference that git is writing at that moment included: created empty
// (go-git then fails with "ref file is empty"), then filled, then renamed
// over the reference (go-git would then list a branch "main.lock"). Git
// moves a loose reference only by that rename, so the reference file
// itself is always whole; listRefs reads references as git does:
//
//   - the loose ones, files under refs/, skipping lock files (a name
//     ending in ".lock", which git allows no reference component) and
//     files that vanish while it reads (a reference deleted, or packed by
//     git gc, meanwhile);
//   - then packed-refs, for the names no loose file holds. Git writes a
//     packed reference before it prunes the loose file, and removes it
//     from packed-refs before it deletes the loose file, so reading the
//     loose ones first never loses a reference that exists throughout;
//
// a symbolic reference, or a file that names no object (empty or broken,
// which git's listings ignore with a warning), is skipped.
func (r *Repository) listRefs(prefix string) ([]storedRef, error) {
	var out []storedRef
	seen := map[string]bool{}
	root := filepath.Join(r.dir, "refs")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // a directory git removed (its last reference deleted)
		}
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(r.dir, p)
		name := filepath.ToSlash(rel)
		if d.IsDir() {
			if p != root && (strings.HasSuffix(name, ".lock") || !overlaps(name+"/", prefix)) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".lock") || !strings.HasPrefix(name, prefix) {
			return nil
		}
		raw, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read reference %s: %w", name, err)
		}
		seen[name] = true // a broken loose reference hides its packed value, as in git
		if h, ok := parseHash(strings.TrimSpace(string(raw))); ok {
			out = append(out, storedRef{name: name, hash: h})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("gitread: list references: %w", err)
	}
	packed, err := r.packedRefs(prefix)
	if err != nil {
		return nil, fmt.Errorf("gitread: list references: %w", err)
	}
	for _, ref := range packed {
		if !seen[ref.name] {
			out = append(out, ref)
		}
	}
	slices.SortFunc(out, func(a, b storedRef) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

// packedRefs returns the references of packed-refs (none when there is
// no such file) whose name starts with prefix.
func (r *Repository) packedRefs(prefix string) ([]storedRef, error) {
	return packedRefsIn(r.dir, prefix)
}

// packedRefsIn returns the references of the packed-refs file of the git
// directory dir (none when there is no such file) whose name starts with
// prefix. Git replaces the file whole (written as packed-refs.lock, then
// renamed).
func packedRefsIn(dir, prefix string) ([]storedRef, error) {
	f, err := os.Open(filepath.Join(dir, "packed-refs"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []storedRef
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' || line[0] == '^' { // the header, a peeled tag's commit
			continue
		}
		sha, name, ok := strings.Cut(line, " ")
		h, valid := parseHash(sha)
		if ok && valid && strings.HasPrefix(name, "refs/") && strings.HasPrefix(name, prefix) {
			out = append(out, storedRef{name: name, hash: h})
		}
	}
	return out, sc.Err()
}

// overlaps reports whether a directory dir ("refs/heads/") may hold
// references whose name starts with prefix.
func overlaps(dir, prefix string) bool {
	return strings.HasPrefix(dir, prefix) || strings.HasPrefix(prefix, dir)
}

// parseHash parses a full hexadecimal object name.
func parseHash(s string) (plumbing.Hash, bool) {
	if len(s) != 2*len(plumbing.ZeroHash) || !isHex(s) {
		return plumbing.ZeroHash, false
	}
	return plumbing.NewHash(s), true
}

// RefCommits returns the commit SHAs that the repository's branches and
// tags point at (annotated tags peeled), without duplicates. References
// that lead to no commit are skipped. An empty repository gives none.
func (r *Repository) RefCommits() ([]string, error) {
	refs, err := r.listRefs("refs/")
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	for _, ref := range refs {
		if !strings.HasPrefix(ref.name, "refs/heads/") && !strings.HasPrefix(ref.name, "refs/tags/") {
			continue
		}
		c, err := r.peelToCommit(ref.name, ref.hash)
		if err != nil {
			continue // a tag of a tree or blob: not part of any commit range
		}
		if sha := c.Hash.String(); !seen[sha] {
			seen[sha] = true
			out = append(out, sha)
		}
	}
	return out, nil
}

// BranchesAt returns the full names ("refs/heads/main") of the branches
// whose head is the commit, sorted.
func (r *Repository) BranchesAt(commit string) ([]string, error) {
	refs, err := r.listRefs("refs/heads/")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, ref := range refs {
		if ref.hash.String() == commit {
			out = append(out, ref.name)
		}
	}
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

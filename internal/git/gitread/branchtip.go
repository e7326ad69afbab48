package gitread

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"forgeapi/internal/git/gitcmd"
	"forgeapi/internal/git/gitref"
)

// ErrNotPlainRef is BranchTip's answer for a branch it does not read
// itself: a symbolic reference, or a repository whose references are not
// files (reftable). The caller asks git.
var ErrNotPlainRef = errors.New("gitread: not a plain reference file")

// BranchTip returns the commit that the branch of the full name
// ("refs/heads/main") points at in the git directory dir, and whether the
// branch exists: what `git rev-parse --verify --quiet name^{commit}`
// answers, read from the reference files as git reads them (the loose
// file, else packed-refs), without a git process and without opening the
// repository. Git writes only commits to branches (its files backend
// refuses any other object under refs/heads/), so the object is the
// branch's commit. A name outside gitref.ValidName, or not under
// refs/heads/, names no branch.
func BranchTip(dir, name string) (sha string, found bool, err error) {
	if !strings.HasPrefix(name, "refs/heads/") || !gitref.ValidName(name) {
		return "", false, nil
	}
	if _, err := os.Stat(filepath.Join(dir, "reftable")); err == nil {
		return "", false, ErrNotPlainRef
	}
	raw, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
	switch {
	case err == nil:
		content := strings.TrimSpace(string(raw))
		if h, ok := parseHash(content); ok {
			return h.String(), true, nil
		}
		if strings.HasPrefix(content, "ref:") {
			return "", false, ErrNotPlainRef
		}
		return "", false, nil // a broken loose reference hides its packed value, as in git
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.EISDIR):
		// not loose (a directory: the name is a prefix of other
		// branches'): packed, or no such branch
	default:
		return "", false, fmt.Errorf("gitread: read reference %s: %w", name, err)
	}
	packed, err := packedRefsIn(dir, name)
	if err != nil {
		return "", false, fmt.Errorf("gitread: read reference %s: %w", name, err)
	}
	for _, ref := range packed {
		if ref.name == name {
			return ref.hash.String(), true, nil
		}
	}
	return "", false, nil
}

// ResolveCommit resolves rev to a commit as `git rev-parse --verify --quiet
// rev^{commit}` run by g answers (found is false when rev names no
// commit): a branch ("refs/heads/...") from its reference files
// (BranchTip), anything else, or a branch BranchTip leaves to git, by
// git. A branch's tip is read on most requests that touch a pull request
// or a workflow; a process for each cost about 30 ms on a busy machine.
func ResolveCommit(ctx context.Context, g gitcmd.Git, rev string) (sha string, found bool, err error) {
	if strings.HasPrefix(rev, "refs/heads/") {
		sha, found, err = BranchTip(g.Dir, rev)
		if !errors.Is(err, ErrNotPlainRef) {
			return sha, found, err
		}
	}
	sha, err = g.Text(ctx, nil, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	if gitcmd.Exited(err) {
		return "", false, nil
	}
	return sha, err == nil, err
}

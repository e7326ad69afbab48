package gitref_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"forgeapi/internal/git/gitref"
)

// names mixes names git accepts and names it refuses, and names git
// accepts that the server refuses all the same.
var names = []string{
	"refs/heads/main", "refs/heads/feature/x", "refs/tags/v1.0", "refs/heads/é", "refs/notes/commits",
	"refs/heads/a-b_c.d", "refs/heads/x@y", "refs/heads/🙂", "refs/heads/x-", "refs/heads/a/-b",
	"refs/heads/" + strings.Repeat("a", gitref.MaxComponentLength),
	// git refuses these
	"refs/heads/../config", "refs/heads/a\nb", "refs/heads/a\tb", "refs/heads/a\rb", "refs/heads/a\x7fb",
	"refs/heads/feature/", "refs/heads/", "refs/heads//x", "/refs/heads/x", "refs/heads/.hidden",
	"refs/heads/a/.b", "refs/heads/x.lock", "refs/heads/x.lock/y", "refs/heads/x.", "refs/heads/a..b",
	"refs/heads/a@{b", "@", "refs/heads/a b", "refs/heads/a~1", "refs/heads/a^", "refs/heads/a:b",
	"refs/heads/a?", "refs/heads/a*", "refs/heads/a[", `refs/heads/a\b`, "main", "refs",
	// git accepts these; the server does not
	"refs/heads/-x", "refs/tags/-v", "refs/heads/@", "refs/heads/a/@/b", "heads/main", "HEAD",
	"refs/heads/a\u200cb", "refs/heads/\u202egnp.exe", "refs/heads/\ufeffx",
	"refs/heads/" + strings.Repeat("a", gitref.MaxComponentLength+1),
	"refs/heads/" + strings.Repeat("a/", 600) + "a", "refs/heads/a\xffb",
}

// TestValidNameNarrowsGit checks ValidName against `git check-ref-format`
// and go-git: a name ValidName accepts, both accept.
func TestValidNameNarrowsGit(t *testing.T) {
	t.Parallel()
	valid := 0
	for _, name := range names {
		ok := gitref.ValidName(name)
		gitOK := exec.Command("git", "check-ref-format", name).Run() == nil
		if ok && !gitOK {
			t.Errorf("ValidName(%q) = true, git check-ref-format refuses it", name)
		}
		if ok && plumbing.ReferenceName(name).Validate() != nil {
			t.Errorf("ValidName(%q) = true, go-git refuses it", name)
		}
		if ok {
			valid++
		}
	}
	if valid != 11 {
		t.Errorf("%d names valid, want the first 11", valid)
	}
	for _, name := range names[:11] {
		if !gitref.ValidName(name) {
			t.Errorf("ValidName(%q) = false", name)
		}
	}
	if gitref.ValidName("refs/heads/a\x00b") {
		t.Error("ValidName accepts a NUL byte")
	}
}

func TestValidBranch(t *testing.T) {
	t.Parallel()
	for branch, want := range map[string]bool{
		"main": true, "feature/x": true, "refs/heads/x": true, "v1.0": true,
		"HEAD": false, "-x": false, "": false, "feature/": false, "../config": false, "a\x00b": false,
		"refs/heads/": false, "@": false, "x.lock": false,
	} {
		if got := gitref.ValidBranch(branch); got != want {
			t.Errorf("ValidBranch(%q) = %v, want %v", branch, got, want)
		}
		if want {
			if err := exec.Command("git", "check-ref-format", "--branch", branch).Run(); err != nil {
				t.Errorf("git check-ref-format --branch %q: %v", branch, err)
			}
		}
	}
}

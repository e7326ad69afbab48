package githttp

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// TestHTTPBackendRunsFromGitsExecPath pins that a request starts
// git-http-backend itself, not the git wrapper that would start it, and
// that a git without one (no exec path) still serves through the wrapper.
func TestHTTPBackendRunsFromGitsExecPath(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	out, err := exec.Command(git, "--exec-path").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(string(out[:len(out)-1]), "git-http-backend")
	if got := httpBackendCommand(git); len(got) != 1 || got[0] != want {
		t.Fatalf("httpBackendCommand(%q) = %q, want [%q]", git, got, want)
	}
	notGit := filepath.Join(t.TempDir(), "git")
	if got := httpBackendCommand(notGit); len(got) != 2 || got[0] != notGit || got[1] != "http-backend" {
		t.Fatalf("httpBackendCommand(%q) = %q, want the wrapper", notGit, got)
	}
}

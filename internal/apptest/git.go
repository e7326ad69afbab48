package apptest

import (
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// GitURL is the clone URL of OWNER/REPO on the server, with credentials
// in it when login is not "" (secret is a password or a token).
func (e *Env) GitURL(owner, repo, login, secret string) string {
	u, err := url.Parse(e.URL + "/" + owner + "/" + repo + ".git")
	if err != nil {
		e.T.Fatal(err)
	}
	if login != "" {
		u.User = url.UserPassword(login, secret)
	}
	return u.String()
}

// GitEnv is the environment git runs with in tests: no user or system
// configuration, no prompts, fixed identities.
func GitEnv(home string) []string {
	env := []string{
		"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=",
		"GIT_AUTHOR_NAME=Test Author", "GIT_AUTHOR_EMAIL=author@example.com",
		"GIT_COMMITTER_NAME=Test Committer", "GIT_COMMITTER_EMAIL=committer@example.com",
		"PATH=" + os.Getenv("PATH"),
		// No `git maintenance run --auto` after each commit, fetch and pull:
		// a test's repositories stay small, and the process is one more
		// on every call that writes.
		"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=maintenance.auto", "GIT_CONFIG_VALUE_0=false",
	}
	return env
}

// Git runs git in dir and returns its combined output; it fails the test
// when git fails.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := TryGit(t, dir, args...)
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// TryGit runs git in dir and returns its combined output and error.
func TryGit(t testing.TB, dir string, args ...string) (string, error) {
	t.Helper()
	home := filepath.Join(os.TempDir(), "forgeapi-test-home")
	_ = os.MkdirAll(home, 0o755)
	cmd := exec.Command("git", append([]string{"-c", "init.defaultBranch=main", "-c", "protocol.version=2",
		"-c", "credential.helper="}, args...)...)
	cmd.Dir = dir
	cmd.Env = GitEnv(home)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// WorkTree makes a new local repository in a temp dir with one commit per
// file set: files maps paths to contents. It returns the directory.
func WorkTree(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	Git(t, dir, "init", "-q")
	if len(files) > 0 {
		Commit(t, dir, "initial commit", files)
	}
	return dir
}

// Commit writes the files (an empty content deletes the file) and
// commits them with the message; it returns the new commit's SHA. git
// runs at most four times whatever the number of files (a git process
// is the suite's largest cost: see docs/performance.md).
func Commit(t testing.TB, dir, message string, files map[string]string) string {
	t.Helper()
	var added, removed []string
	for path, content := range files {
		if content == "" {
			removed = append(removed, path)
		} else {
			added = append(added, path)
		}
	}
	if len(removed) > 0 { // first: an added file may take a removed one's place as a directory
		Git(t, dir, append([]string{"rm", "-q", "--ignore-unmatch", "--"}, removed...)...)
	}
	for _, path := range added {
		full := filepath.Join(dir, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(files[path]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if len(added) > 0 {
		Git(t, dir, append([]string{"add", "--"}, added...)...)
	}
	Git(t, dir, "commit", "-q", "--allow-empty", "-m", message)
	return strings.TrimSpace(Git(t, dir, "rev-parse", "HEAD"))
}

package graphql_test

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"forgeapi/internal/apptest"
)

// TestGitHubCLIRepoClone runs `gh repo clone OWNER/REPO DIR` on a server
// on --tls: gh asks GraphQL for the repository and its parent, then
// clones over git through gh's credential helper; a fork's clone gets
// its parent as the upstream remote, fetched (its default branch).
// (gh pr checkout, which reads the clone's remotes, needs the server on
// port 443: TestGitHubCLIPullRequestCheckout.)
func TestGitHubCLIRepoClone(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithTLS())
	octo, bob := env.User("octo"), env.User("bob")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo", "read:org")
	pushFeature(t, env, "hello", token, "-c", "http.sslCAInfo="+env.Main.CAFile())
	bobToken := env.Token(bob, "repo", "read:org")
	if resp, body := env.DoJSON("POST", "/repos/octo/hello/forks", bobToken, `{}`); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("fork: %d %s", resp.StatusCode, body)
	}

	run, host := ghCLI(t, env, token)
	dir := filepath.Join(t.TempDir(), "hello")
	run("repo", "clone", "octo/hello", dir)
	if log := apptest.Git(t, dir, "log", "--format=%s", "origin/feature"); !strings.HasPrefix(log, "Add a feature\n") {
		t.Errorf("the clone's origin/feature: %q", log)
	}
	if url := apptest.Git(t, dir, "remote", "get-url", "origin"); strings.TrimSpace(url) != "https://"+host+"/octo/hello.git" {
		t.Errorf("origin is %q, want https://%s/octo/hello.git", url, host)
	}

	bobRun, bobHost := ghCLI(t, env, bobToken)
	forkDir := filepath.Join(t.TempDir(), "fork")
	bobRun("repo", "clone", "bob/hello", forkDir)
	remotes := apptest.Git(t, forkDir, "remote", "-v")
	if !strings.Contains(remotes, "origin\thttps://"+bobHost+"/bob/hello.git") ||
		!strings.Contains(remotes, "upstream\thttps://"+bobHost+"/octo/hello.git") {
		t.Errorf("the fork's remotes:\n%s", remotes)
	}
	if branches := apptest.Git(t, forkDir, "branch", "-r"); !strings.Contains(branches, "upstream/main") {
		t.Errorf("the fork's clone did not fetch upstream:\n%s", branches)
	}
}

package graphql_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// TestGitHubCLIIssueDevelop runs `gh issue develop` in a clone made by
// `gh repo clone`: gh 2.23's develop reads the repository from the
// clone's remotes whatever --repo says, and drops their port, so the
// server answers on port 443 (proxyOn443, as root, as CI runs). gh
// detects the feature (__type(name: "LinkedBranch")), creates linked
// branches (createLinkedBranch) off the default branch, off --base, and
// with the name the issue gives, which git ls-remote and REST show with
// their CreateEvent; --checkout fetches one and checks it out;
// `gh issue develop --list` lists them; a reader without push access
// gets the platform's refusal; a branch deleted (through REST, and by a
// git push) leaves the list.
func TestGitHubCLIIssueDevelop(t *testing.T) {
	t.Parallel()
	skipWithoutGHOn443(t)
	env := apptest.Start(t, apptest.WithTLS())
	octo, bob := env.User("octo"), env.User("bob")
	env.Repo(octo, "hello")
	token, bobToken := env.Token(octo, "repo", "read:org"), env.Token(bob, "repo", "read:org")
	pushFeature(t, env, "hello", token, "-c", "http.sslCAInfo="+env.Main.CAFile())
	rest := env.Client(token)
	ctx := apptest.Ctx()
	is, _, err := rest.Issues.Create(ctx, "octo", "hello", github.CreateIssueRequest{Title: "Fix the login page!"})
	apptest.Must(t, "issue", err)
	n := func() string { return strconv.Itoa(is.GetNumber()) }
	gh := ghOn443(t, env)
	clone := filepath.Join(gh.home, "hello")
	try := func(token string, args ...string) (string, error) { return gh.try(clone, token, args...) }
	run := func(args ...string) string {
		t.Helper()
		out, err := try(token, args...)
		if err != nil {
			t.Fatalf("gh %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	apptest.Must(t, "clone dir", os.MkdirAll(clone, 0o700))
	run("repo", "clone", "octo/hello", clone)
	repo := gh.host + "/octo/hello"
	heads := func() map[string]string {
		out := apptest.Git(t, t.TempDir(), "-c", "http.sslCAInfo="+env.Main.CAFile(), "ls-remote", "--heads", env.GitURL("octo", "hello", "octo", token))
		m := map[string]string{}
		for line := range strings.Lines(out) {
			sha, ref, _ := strings.Cut(strings.TrimSpace(line), "\t")
			m[strings.TrimPrefix(ref, "refs/heads/")] = sha
		}
		return m
	}
	before := heads()

	out := run("issue", "develop", n(), "--name", "fix-login")
	if strings.TrimSpace(out) != repo+"/tree/fix-login" {
		t.Errorf("gh issue develop --name:\n%s", out)
	}
	out = run("issue", "develop", n(), "--name", "on-feature", "--base", "feature")
	if strings.TrimSpace(out) != repo+"/tree/on-feature" {
		t.Errorf("gh issue develop --base:\n%s", out)
	}
	out = run("issue", "develop", n(), "--checkout")
	if !strings.HasPrefix(out, repo+"/tree/"+n()+"-fix-the-login-page\n") {
		t.Errorf("gh issue develop without a name:\n%s", out)
	}
	after := heads()
	if branch := apptest.Git(t, clone, "branch", "--show-current"); branch != n()+"-fix-the-login-page\n" {
		t.Errorf("gh issue develop --checkout: on %q", branch)
	}
	if after["fix-login"] != before["main"] || after["on-feature"] != before["feature"] || after[n()+"-fix-the-login-page"] != before["main"] {
		t.Errorf("branches after gh issue develop: %v (before %v)", after, before)
	}
	b, _, err := rest.Repositories.GetBranch(ctx, "octo", "hello", "fix-login", 0)
	apptest.Must(t, "REST branch", err)
	if b.GetCommit().GetSHA() != before["main"] {
		t.Errorf("REST fix-login at %s, want %s", b.GetCommit().GetSHA(), before["main"])
	}
	created := map[string]bool{}
	resp, body := env.DoJSON("GET", "/repos/octo/hello/events", token, "")
	var feed []struct {
		Type    string         `json:"type"`
		Payload map[string]any `json:"payload"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &feed) != nil {
		t.Fatalf("events: %d %s", resp.StatusCode, body)
	}
	for _, e := range feed {
		if ref, ok := e.Payload["ref"].(string); ok && e.Type == "CreateEvent" {
			created[ref] = true
		}
	}
	if !created["fix-login"] || !created["on-feature"] {
		t.Errorf("CreateEvents of the linked branches: %v", created)
	}

	list := func() string { return run("issue", "develop", "--list", n()) }
	if out := list(); out != "fix-login\non-feature\n"+n()+"-fix-the-login-page\n" {
		t.Errorf("gh issue develop --list:\n%s", out)
	}

	out, err = try(bobToken, "issue", "develop", n(), "--name", "bobs")
	if err == nil || !strings.Contains(out, "GraphQL: bob does not have the correct permissions to execute `CreateLinkedBranch` (createLinkedBranch)") {
		t.Errorf("a reader's gh issue develop: %v\n%s", err, out)
	}
	if _, ok := heads()["bobs"]; ok {
		t.Error("a reader created a branch")
	}
	if out, err := try(bobToken, "issue", "develop", "--list", n()); err != nil || !strings.Contains(out, "fix-login") {
		t.Errorf("a reader's gh issue develop --list:\n%s", out)
	}

	_, err = rest.Git.DeleteRef(ctx, "octo", "hello", "heads/fix-login")
	apptest.Must(t, "delete fix-login", err)
	apptest.Git(t, clone, "-c", "http.sslCAInfo="+env.Main.CAFile(), "push", "-q", env.GitURL("octo", "hello", "octo", token), "--delete", "on-feature")
	if out := list(); out != n()+"-fix-the-login-page\n" {
		t.Errorf("gh issue develop --list after the deletions:\n%s", out)
	}
}

package graphql_test

import (
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// TestGitHubCLISearch runs `gh search issues`, `gh search prs` and
// `gh search repos` (REST GET /search/issues and /search/repositories,
// which gh asks with its own qualifiers) and
// `gh issue list --label` and `--search` (GraphQL's search) against a
// server on --tls self-signed: the issues and the draft pull request
// come back by words, labels, state and repository, and a private
// repository and its issue only to its owner.
func TestGitHubCLISearch(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithTLS())
	octo, bob := env.User("octo"), env.User("bob")
	env.Repo(octo, "hello")
	env.Repo(octo, "secret", apptest.RepoOpts{Private: true})
	token := env.Token(octo, "repo", "read:org")
	run, host := ghCLI(t, env, token)
	pushFeature(t, env, "hello", token, "-c", "http.sslCAInfo="+env.Main.CAFile())
	rest := env.Client(token)
	for _, is := range []struct{ repo, title, label string }{{"hello", "Crash on start", "bug"}, {"hello", "Docs typo", "docs"},
		{"secret", "Crash leak", "bug"}} {
		_, _, err := rest.Issues.Create(apptest.Ctx(), "octo", is.repo, github.CreateIssueRequest{Title: is.title, Labels: []string{is.label}})
		apptest.Must(t, "issue", err)
	}

	out := run("search", "issues", "crash", "--repo", "octo/hello")
	if !strings.Contains(out, "Crash on start") || strings.Contains(out, "Docs typo") || strings.Contains(out, "Crash leak") {
		t.Fatalf("gh search issues crash --repo octo/hello:\n%s", out)
	}
	out = run("search", "issues", "crash", "--owner", "octo", "--state", "open")
	if !strings.Contains(out, "Crash on start") || !strings.Contains(out, "Crash leak") {
		t.Fatalf("gh search issues crash --owner octo (the owner sees secret):\n%s", out)
	}
	out = run("search", "prs", "--repo", "octo/hello", "--draft")
	if !strings.Contains(out, "WIP") || strings.Contains(out, "Crash") {
		t.Fatalf("gh search prs --draft:\n%s", out)
	}
	// gh issue list --label and --search ask GraphQL's search.
	out = run("issue", "list", "--label", "bug", "--repo", host+"/octo/hello")
	if !strings.Contains(out, "Crash on start") || strings.Contains(out, "Docs typo") || strings.Contains(out, "Crash leak") {
		t.Fatalf("gh issue list --label bug:\n%s", out)
	}
	out = run("issue", "list", "--search", "typo", "--repo", host+"/octo/hello")
	if !strings.Contains(out, "Docs typo") || strings.Contains(out, "Crash") {
		t.Fatalf("gh issue list --search typo:\n%s", out)
	}
	out = run("search", "repos", "--owner", "octo")
	if !strings.Contains(out, "octo/hello") || !strings.Contains(out, "octo/secret") {
		t.Fatalf("gh search repos --owner octo (the owner sees secret):\n%s", out)
	}
	out = run("search", "repos", "secret", "--owner", "octo", "--visibility", "private", "--json", "fullName,visibility")
	if !strings.Contains(out, `"fullName":"octo/secret"`) || !strings.Contains(out, `"visibility":"private"`) || strings.Contains(out, "octo/hello") {
		t.Fatalf("gh search repos secret --visibility private --json:\n%s", out)
	}
	bobRun, _ := ghCLI(t, env, env.Token(bob, "repo"))
	out = bobRun("search", "issues", "crash", "--owner", "octo")
	if !strings.Contains(out, "Crash on start") || strings.Contains(out, "Crash leak") {
		t.Fatalf("bob's search shows secret's issue:\n%s", out)
	}
	out = bobRun("search", "repos", "--owner", "octo")
	if !strings.Contains(out, "octo/hello") || strings.Contains(out, "octo/secret") {
		t.Fatalf("bob's gh search repos shows secret:\n%s", out)
	}
}

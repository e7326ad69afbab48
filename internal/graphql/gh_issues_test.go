package graphql_test

import (
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// TestGitHubCLIIssues runs gh's issue and label commands against a
// server on --tls (gh create, list, view, comment, edit, close, reopen,
// status and label list) and checks what each prints and, through REST,
// what each changed.
func TestGitHubCLIIssues(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithTLS())
	octo := env.User("octo")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo", "read:org")
	run, host := ghCLI(t, env, token)
	rest := env.Client(token)
	ctx := apptest.Ctx()
	_, _, err := rest.Issues.CreateLabel(ctx, "octo", "hello", github.CreateIssueLabelRequest{Name: "bug", Color: github.Ptr("d73a4a"),
		Description: github.Ptr("Something is wrong")})
	apptest.Must(t, "label", err)
	_, _, err = rest.Issues.CreateLabel(ctx, "octo", "hello", github.CreateIssueLabelRequest{Name: "docs"})
	apptest.Must(t, "label", err)
	_, _, err = rest.Issues.Create(ctx, "octo", "hello", github.CreateIssueRequest{Title: "First"})
	apptest.Must(t, "issue", err)
	repo := host + "/octo/hello"
	issue := func() *github.Issue {
		is, _, err := rest.Issues.Get(ctx, "octo", "hello", 2)
		apptest.Must(t, "REST issue", err)
		return is
	}

	out := run("issue", "create", "--repo", repo, "--title", "Broken", "--body", "It broke.", "--label", "bug")
	if strings.TrimSpace(out) != env.URL+"/octo/hello/issues/2" {
		t.Errorf("gh issue create:\n%s", out)
	}
	if is := issue(); is.GetTitle() != "Broken" || is.GetBody() != "It broke." || len(is.Labels) != 1 || is.Labels[0].GetName() != "bug" {
		t.Errorf("created: %+v", is)
	}

	out = run("issue", "list", "--repo", repo)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "2\tOPEN\tBroken\tbug\t") || !strings.HasPrefix(lines[1], "1\tOPEN\tFirst\t\t") {
		t.Errorf("gh issue list:\n%s", out)
	}
	out = run("issue", "comment", "2", "--repo", repo, "--body", "Looking into it.")
	if !strings.HasPrefix(strings.TrimSpace(out), env.URL+"/octo/hello/issues/2#issuecomment-") || issue().GetComments() != 1 {
		t.Errorf("gh issue comment:\n%s", out)
	}

	out = run("issue", "view", "2", "--repo", repo)
	for _, want := range []string{"title:\tBroken\n", "state:\tOPEN\n", "author:\tocto\n", "labels:\tbug\n", "comments:\t1\n", "number:\t2\n", "It broke."} {
		if !strings.Contains(out, want) {
			t.Errorf("gh issue view: no %q in\n%s", want, out)
		}
	}
	if out := run("issue", "view", "2", "--repo", repo, "--comments"); !strings.Contains(out, "Looking into it.") {
		t.Errorf("gh issue view --comments:\n%s", out)
	}

	out = run("issue", "edit", "2", "--repo", repo, "--title", "Broken badly", "--add-label", "docs", "--remove-label", "bug")
	if is := issue(); !strings.Contains(out, "/octo/hello/issues/2") || is.GetTitle() != "Broken badly" || len(is.Labels) != 1 || is.Labels[0].GetName() != "docs" {
		t.Errorf("gh issue edit:\n%s\n%+v", out, is)
	}

	if out := run("issue", "close", "2", "--repo", repo); !strings.Contains(out, "Closed issue #2 (Broken badly)") || issue().GetState() != "closed" {
		t.Errorf("gh issue close:\n%s", out)
	}
	if out := run("issue", "list", "--repo", repo, "--state", "closed"); !strings.HasPrefix(out, "2\tCLOSED\tBroken badly\tdocs\t") {
		t.Errorf("gh issue list --state closed:\n%s", out)
	}
	if out := run("issue", "reopen", "2", "--repo", repo); !strings.Contains(out, "Reopened issue #2 (Broken badly)") || issue().GetState() != "open" {
		t.Errorf("gh issue reopen:\n%s", out)
	}

	out = run("issue", "status", "--repo", repo)
	if !strings.Contains(out, "Issues opened by you\n  2\tOPEN\tBroken badly\tdocs\t") || !strings.Contains(out, "There are no issues assigned to you") {
		t.Errorf("gh issue status:\n%s", out)
	}

	out = run("label", "list", "--repo", repo)
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 2 || lines[0] != "bug\tSomething is wrong\t#d73a4a" || lines[1] != "docs\t\t#ededed" {
		t.Errorf("gh label list:\n%s", out)
	}
}

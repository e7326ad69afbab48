package pulls_test

import (
	"net/http"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// TestPullAccess checks who may do what: anonymous callers read a public
// repository's pull requests and get 404 on a private one's; fine-grained
// tokens open pull requests with Pull requests write (403 with read), and
// merge only with Contents write as well; a stranger gets 404 on a
// private repository; bad input is a 422; the feed shows
// PullRequestEvent.
func TestPullAccess(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo, eve := env.User("octo"), env.User("eve")
	env.Repo(octo, "hello")
	env.Repo(octo, "secret", apptest.RepoOpts{Private: true})
	token := env.Token(octo, "repo")
	owner := env.Client(token)
	proj := newProject(t, env, "octo", "hello", "octo", token)
	proj.commitOn("one", "One", map[string]string{"one.txt": "1\n"})
	proj.commitOn("two", "Two", map[string]string{"two.txt": "2\n"})
	secret := newProject(t, env, "octo", "secret", "octo", token)
	secret.commitOn("hidden", "Hidden", map[string]string{"h.txt": "h\n"})
	_, _, err := owner.PullRequests.Create(ctx, "octo", "secret", github.CreatePullRequest{Title: github.Ptr("Hidden"), Head: "hidden", Base: "main"})
	apptest.Must(t, "open in the private repository", err)

	reader := env.Client(env.FineGrainedToken(octo, octo, apptest.AllRepos, "pull_requests:read"))
	_, resp, _ := reader.PullRequests.Create(ctx, "octo", "hello", github.CreatePullRequest{Title: github.Ptr("One"), Head: "one", Base: "main"})
	status(t, "open with Pull requests read", resp, http.StatusForbidden)
	writer := env.Client(env.FineGrainedToken(octo, octo, apptest.AllRepos, "pull_requests:write"))
	one, resp, err := writer.PullRequests.Create(ctx, "octo", "hello", github.CreatePullRequest{Title: github.Ptr("One"), Head: "one", Base: "main"})
	apptest.Must(t, "open with Pull requests write", err)
	status(t, "open with Pull requests write", resp, http.StatusCreated)
	_, resp, _ = writer.PullRequests.Merge(ctx, "octo", "hello", one.GetNumber(), "", nil)
	status(t, "merge without Contents write", resp, http.StatusForbidden)
	merger := env.Client(env.FineGrainedToken(octo, octo, apptest.AllRepos, "pull_requests:write,contents:write"))
	_, _, err = merger.PullRequests.Merge(ctx, "octo", "hello", one.GetNumber(), "", nil)
	apptest.Must(t, "merge with Contents write", err)

	if resp, body := env.Do("GET", "/repos/octo/hello/pulls?state=all", "", nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("anonymous list: %d %s", resp.StatusCode, body)
	}
	if resp, _ := env.Do("GET", "/repos/octo/hello/pulls/1", "", nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("anonymous get: %d", resp.StatusCode)
	}
	if resp, _ := env.Do("GET", "/repos/octo/secret/pulls/1", "", nil); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("anonymous get of a private pull request: %d", resp.StatusCode)
	}
	stranger := env.Client(env.Token(eve, "repo"))
	_, resp, _ = stranger.PullRequests.Get(ctx, "octo", "secret", 1)
	status(t, "a stranger reads a private repository's", resp, http.StatusNotFound)
	_, resp, _ = stranger.PullRequests.Edit(ctx, "octo", "hello", one.GetNumber(), &github.PullRequest{Title: github.Ptr("Mine")})
	status(t, "a stranger edits", resp, http.StatusForbidden)

	for _, q := range []string{"state=weird", "sort=size", "direction=up"} {
		if resp, body := env.Do("GET", "/repos/octo/hello/pulls?"+q, token, nil); resp.StatusCode != http.StatusUnprocessableEntity {
			t.Fatalf("list ?%s: %d %s", q, resp.StatusCode, body)
		}
	}
	for _, b := range []string{`{"title":"x","head":"two"}`, `{"title":"x","head":"nobody:two","base":"main"}`,
		`{"title":"x","head":"two","base":"nowhere"}`, `{"head":"two","base":"main","issue":99}`} {
		if resp, body := env.DoJSON("POST", "/repos/octo/hello/pulls", token, b); resp.StatusCode != http.StatusUnprocessableEntity {
			t.Fatalf("create %s: %d %s", b, resp.StatusCode, body)
		}
	}
	if resp, body := env.DoJSON("PUT", "/repos/octo/hello/pulls/1/merge", token, `{"merge_method":"octopus"}`); resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("merge_method octopus: %d %s", resp.StatusCode, body)
	}
	for _, p := range []string{"/repos/octo/hello/pulls/99", "/repos/octo/hello/pulls/x"} {
		if resp, _ := env.Do("GET", p, token, nil); resp.StatusCode != http.StatusNotFound {
			t.Fatalf("GET %s: %d", p, resp.StatusCode)
		}
	}

	issue, _, err := owner.Issues.Create(ctx, "octo", "hello", github.CreateIssueRequest{Title: "Do two"})
	apptest.Must(t, "issue", err)
	two, resp, err := owner.PullRequests.Create(ctx, "octo", "hello", github.CreatePullRequest{Head: "two", Base: "main", Issue: github.Ptr(issue.GetNumber())})
	apptest.Must(t, "open from an issue", err)
	if two.GetNumber() != issue.GetNumber() || two.GetTitle() != "Do two" {
		t.Fatalf("from an issue: #%d %q", two.GetNumber(), two.GetTitle())
	}
	feed, _, err := owner.Activity.ListRepositoryEvents(ctx, "octo", "hello", nil)
	apptest.Must(t, "feed", err)
	found := false
	for _, e := range feed {
		found = found || e.GetType() == "PullRequestEvent"
	}
	if !found {
		t.Fatal("no PullRequestEvent in the repository feed")
	}
}

// TestOnePullRequestForAHeadOpenedTwiceAtOnce opens two pull requests
// for one head and base at once, each held at its commit until both have
// looked for an open one (apptest.CommitGate): one is created, the other
// refused (422), and one is open. Without a lock on the head and base,
// each found none and both were created. PostgreSQL only.
func TestOnePullRequestForAHeadOpenedTwiceAtOnce(t *testing.T) {
	apptest.SkipUnlessPostgres(t, "concurrent transactions that overlap (CommitGate)")
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo")
	owner := env.Client(token)
	newProject(t, env, "octo", "hello", "octo", token).commitOn("one", "One", map[string]string{"one.txt": "1\n"})

	create := func() int {
		_, resp, _ := owner.PullRequests.Create(ctx, "octo", "hello", github.CreatePullRequest{Title: github.Ptr("One"),
			Head: "one", Base: "main"})
		return apptest.ResponseStatus(resp)
	}
	got := env.CommitGate(t, "INSERT", "pull_requests", "true").Run(create, create)
	if got[0]+got[1] != http.StatusCreated+http.StatusUnprocessableEntity {
		t.Errorf("the two creations answered %v, want one 201 and one 422", got)
	}
	open, _, err := owner.PullRequests.List(ctx, "octo", "hello", nil)
	apptest.Must(t, "list the pull requests", err)
	if len(open) != 1 {
		t.Fatalf("%d pull requests open, want 1", len(open))
	}
}

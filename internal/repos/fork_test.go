package repos_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// TestForks: go-github's CreateFork makes a real fork (the source's
// branches and tags, or its default branch only) for the caller or an
// organization, ForkEvent and the fork webhook event go to the source,
// and asking again answers the same fork.
func TestForks(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo")
	hubot := env.User("hubot")
	env.Org("acme", hubot)
	env.Repo(octo, "hello")
	octoToken := env.Token(octo, "repo")
	work := apptest.WorkTree(t, map[string]string{"README.md": "hi\n"})
	apptest.Git(t, work, "tag", "v1")
	apptest.Git(t, work, "push", "-q", env.GitURL("octo", "hello", "octo", octoToken), "HEAD:refs/heads/main", "HEAD:refs/heads/topic", "v1")
	hubotToken := env.Token(hubot, "repo")
	c := env.Client(hubotToken)

	fork, resp, err := c.Repositories.CreateFork(ctx, "octo", "hello", nil)
	if _, accepted := err.(*github.AcceptedError); err != nil && !accepted {
		t.Fatalf("fork: %v", err)
	}
	if apptest.ResponseStatus(resp) != http.StatusAccepted {
		t.Fatalf("fork: %d", apptest.ResponseStatus(resp))
	}
	got, _, err := c.Repositories.Get(ctx, "hubot", "hello")
	apptest.Must(t, "get fork", err)
	if !got.GetFork() || got.GetFullName() != "hubot/hello" || got.GetParent().GetFullName() != "octo/hello" {
		t.Fatalf("fork %+v %+v", fork, got)
	}
	clone := t.TempDir()
	apptest.Git(t, clone, "clone", "-q", env.GitURL("hubot", "hello", "hubot", hubotToken), "c")
	if refs := apptest.Git(t, clone+"/c", "ls-remote", "origin"); !strings.Contains(refs, "refs/heads/topic") || !strings.Contains(refs, "refs/tags/v1") {
		t.Fatalf("the fork's refs:\n%s", refs)
	}
	// Into an organization, default branch only.
	_, _, err = c.Repositories.CreateFork(ctx, "octo", "hello", &github.RepositoryCreateForkOptions{Organization: "acme", DefaultBranchOnly: true})
	if _, accepted := err.(*github.AcceptedError); err != nil && !accepted {
		t.Fatalf("fork into acme: %v", err)
	}
	if refs := apptest.Git(t, clone+"/c", "ls-remote", env.GitURL("acme", "hello", "hubot", hubotToken)); strings.Contains(refs, "topic") || !strings.Contains(refs, "refs/heads/main") {
		t.Fatalf("default-branch-only fork refs:\n%s", refs)
	}
	if resp, body := env.DoJSON("POST", "/repos/octo/hello/forks", hubotToken, `{"organization":"nope"}`); resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("fork into an unknown organization: %d %s", resp.StatusCode, body)
	}
	// Again: the same fork.
	resp2, body := env.DoJSON("POST", "/repos/octo/hello/forks", hubotToken, `{}`)
	if resp2.StatusCode != http.StatusAccepted || !strings.Contains(string(body), `"full_name":"hubot/hello"`) {
		t.Fatalf("fork again: %d %s", resp2.StatusCode, body)
	}
	forks, _, err := env.Client("").Repositories.ListForks(ctx, "octo", "hello", nil)
	apptest.Must(t, "forks", err)
	if len(forks) != 2 {
		t.Fatalf("%d forks, want 2", len(forks))
	}
	events, _, err := env.Client("").Activity.ListRepositoryEvents(ctx, "octo", "hello", nil)
	apptest.Must(t, "source events", err)
	forkEvents := 0
	for _, e := range events {
		if e.GetType() == "ForkEvent" {
			forkEvents++
		}
	}
	if forkEvents != 2 {
		t.Fatalf("%d ForkEvents on the source, want 2", forkEvents)
	}
}

// TestForkRefusedToABlockedUser: a user the owner blocks cannot fork its
// repositories (403), as they cannot star or watch them.
func TestForkRefusedToABlockedUser(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo := env.User("octo")
	troll := env.User("troll")
	env.Repo(octo, "hello")
	if resp, body := env.DoJSON("PUT", "/user/blocks/troll", env.Token(octo, "user"), ``); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("block: %d %s", resp.StatusCode, body)
	}
	if resp, body := env.DoJSON("POST", "/repos/octo/hello/forks", env.Token(troll, "repo"), `{}`); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a blocked user forks: %d %s", resp.StatusCode, body)
	}
	if resp, _ := env.Do("GET", "/repos/troll/hello", env.Token(troll, "repo"), nil); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("the refused fork exists: %d", resp.StatusCode)
	}
}

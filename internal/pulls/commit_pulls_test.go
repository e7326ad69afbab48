package pulls_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// TestPullRequestsWithCommit lists the pull requests of a commit with
// go-github's ListPullRequestsWithCommit, as the platform answers: an
// open pull request's commit lists it; a commit of a closed unmerged one
// lists nothing; once merged into the default branch, the commit and the
// merge commit list the pull request that brought them; a squash's
// commit lists its pull request, as do the squashed commits; a commit of
// the default branch alone lists none; an unknown SHA is a 422.
func TestPullRequestsWithCommit(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo")
	c := env.Client(token)
	proj := newProject(t, env, "octo", "hello", "octo", token)
	open := func(t *testing.T, head string) *github.PullRequest {
		t.Helper()
		pr, _, err := c.PullRequests.Create(ctx, "octo", "hello", github.CreatePullRequest{Title: github.Ptr(head), Head: head, Base: "main"})
		apptest.Must(t, "open "+head, err)
		return pr
	}
	numbers := func(t *testing.T, sha string) string {
		t.Helper()
		list, resp, err := c.PullRequests.ListPullRequestsWithCommit(ctx, "octo", "hello", sha, nil)
		apptest.Must(t, "pulls of "+sha, err)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("pulls of %s: %d", sha, resp.StatusCode)
		}
		var out []string
		for _, p := range list {
			out = append(out, itoa(p.GetNumber()))
		}
		return strings.Join(out, ",")
	}
	var feature string
	var first *github.PullRequest

	apptest.Step(t, "open and closed pull requests", func(t *testing.T) {
		p := proj.in(t)
		feature = p.commitOn("feature", "Feature", map[string]string{"f.txt": "f\n"})
		first = open(t, "feature")
		abandoned := p.commitOn("abandoned", "Abandoned", map[string]string{"a.txt": "a\n"})
		second := open(t, "abandoned")
		_, _, err := c.PullRequests.Edit(ctx, "octo", "hello", second.GetNumber(), &github.PullRequest{State: github.Ptr("closed")})
		apptest.Must(t, "close", err)
		if got := numbers(t, feature); got != itoa(first.GetNumber()) {
			t.Fatalf("an open pull request's commit: %q", got)
		}
		if got := numbers(t, abandoned); got != "" {
			t.Fatalf("a closed pull request's commit: %q", got)
		}
		if got := numbers(t, p.remoteRef("refs/heads/main")); got != "" {
			t.Fatalf("main's commit: %q", got)
		}
	})
	apptest.Step(t, "merged into the default branch", func(t *testing.T) {
		res, _, err := c.PullRequests.Merge(ctx, "octo", "hello", first.GetNumber(), "", nil)
		apptest.Must(t, "merge", err)
		if got := numbers(t, feature); got != itoa(first.GetNumber()) {
			t.Fatalf("a merged commit: %q", got)
		}
		if got := numbers(t, res.GetSHA()); got != itoa(first.GetNumber()) {
			t.Fatalf("the merge commit: %q", got)
		}
	})
	apptest.Step(t, "squashed", func(t *testing.T) {
		p := proj.in(t)
		apptest.Git(t, p.dir, "pull", "-q", "--ff-only", "origin", "main")
		one := p.commitOn("squashed", "One", map[string]string{"s.txt": "1\n"})
		p.commitOn("squashed", "Two", map[string]string{"s.txt": "2\n"})
		pr := open(t, "squashed")
		res, _, err := c.PullRequests.Merge(ctx, "octo", "hello", pr.GetNumber(), "", &github.PullRequestOptions{MergeMethod: "squash"})
		apptest.Must(t, "squash", err)
		if got := numbers(t, res.GetSHA()); got != itoa(pr.GetNumber()) {
			t.Fatalf("the squash commit: %q", got)
		}
		if got := numbers(t, one); got != itoa(pr.GetNumber()) {
			t.Fatalf("a squashed commit: %q", got)
		}
	})
	apptest.Step(t, "an unknown commit", func(t *testing.T) {
		resp, body := env.Get("/repos/octo/hello/commits/"+strings.Repeat("0", 40)+"/pulls", "token "+token)
		apptest.WantError(t, "an unknown commit", resp, body, http.StatusUnprocessableEntity)
	})
}

package e2e_test

import (
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// TestGitHubCLIStatus runs `gh status` against a server on --tls, through
// the validating proxy: what the user is assigned, whose review is
// requested and what mentions them, from real activity. gh searches
// with assignee:@me, review-requested:@me and archived:false.
func TestGitHubCLIStatus(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithTLS())
	ctx := apptest.Ctx()
	octo, bob := env.User("octo"), env.User("bob")
	env.Repo(octo, "hello")
	c := env.Client(env.Token(octo, "repo"))
	inv, _, err := c.Repositories.AddCollaborator(ctx, "octo", "hello", "bob", nil)
	apptest.Must(t, "invite", err)
	_, err = env.Client(env.Token(bob, "repo")).Users.AcceptInvitation(ctx, inv.GetID())
	apptest.Must(t, "accept", err)
	_, _, err = c.Issues.Create(ctx, "octo", "hello", github.CreateIssueRequest{Title: "Fix the crash", Assignees: []string{"bob"}})
	apptest.Must(t, "issue", err)
	_, _, err = c.Issues.Create(ctx, "octo", "hello", github.CreateIssueRequest{Title: "Ask @bob", Body: github.Ptr("what do you think, @bob?")})
	apptest.Must(t, "mention", err)
	work := apptest.WorkTree(t, map[string]string{"README.md": "hello\n"})
	apptest.Git(t, work, "-c", "http.sslCAInfo="+env.Main.CAFile(), "push", "-q", env.GitURL("octo", "hello", "octo", env.Token(octo, "repo")), "HEAD:refs/heads/main")
	apptest.Commit(t, work, "Faster", map[string]string{"fast.txt": "fast\n"})
	apptest.Git(t, work, "-c", "http.sslCAInfo="+env.Main.CAFile(), "push", "-q", env.GitURL("octo", "hello", "octo", env.Token(octo, "repo")), "HEAD:refs/heads/fast")
	pr, _, err := c.PullRequests.Create(ctx, "octo", "hello", github.CreatePullRequest{Title: github.Ptr("Make it faster"), Head: "fast", Base: "main"})
	apptest.Must(t, "pull request", err)
	_, _, err = c.PullRequests.RequestReviewers(ctx, "octo", "hello", pr.GetNumber(), github.ReviewersRequest{Reviewers: []string{"bob"}})
	apptest.Must(t, "review request", err)
	gh := apptest.GH(t, env, env.Token(bob, "repo", "read:org", "notifications"), true)
	out := gh.Run(t, "status")
	for _, want := range []string{"Assigned Issues", "octo/hello#1", "Fix the crash", "Review Requests", "octo/hello#3", "Make it faster", "Mentions", "octo/hello#2"} {
		if !strings.Contains(out, want) {
			t.Errorf("gh status lacks %q:\n%s", want, out)
		}
	}
}

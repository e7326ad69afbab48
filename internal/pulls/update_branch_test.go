package pulls_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/webhooks"
)

// TestUpdateBranch updates pull request branches with go-github's
// PullRequests.UpdateBranch, as the platform's "Update branch" button:
// the base's new commit is merged into the head as a push (the pull
// request's head follows and pull_request synchronize arrives signed);
// a stale expected_head_sha, nothing to update and a conflict are 422s;
// a reader without push access is refused; a fork's owner updates the
// fork's branch, the base's commits fetched into the fork.
func TestUpdateBranch(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	ctx := apptest.Ctx()
	octo, bob := env.User("octo"), env.User("bob")
	base := env.Repo(octo, "hello")
	token := env.Token(octo, "repo", "admin:repo_hook")
	c := env.Client(token)
	proj := newProject(t, env, "octo", "hello", "octo", token)
	rc := apptest.NewReceiver(t, "s")
	_, _, err := c.Repositories.CreateHook(ctx, "octo", "hello", &github.Hook{Events: []string{"pull_request"},
		Config: &github.HookConfig{URL: github.Ptr(rc.URL), ContentType: github.Ptr("json"), Secret: github.Ptr("s")}})
	apptest.Must(t, "hook", err)
	status := func(t *testing.T, what string, resp *github.Response, want int) {
		t.Helper()
		if got := apptest.ResponseStatus(resp); got != want {
			t.Fatalf("%s: %d, want %d", what, got, want)
		}
	}
	var pr *github.PullRequest
	var feature string

	apptest.Step(t, "the base moves and the branch follows", func(t *testing.T) {
		p := proj.in(t)
		feature = p.commitOn("feature", "Feature", map[string]string{"f.txt": "f\n"})
		pr, _, err = c.PullRequests.Create(ctx, "octo", "hello", github.CreatePullRequest{Title: github.Ptr("Feature"), Head: "feature", Base: "main"})
		apptest.Must(t, "open", err)
		mainTip := apptest.Commit(t, p.dir, "On main", map[string]string{"m.txt": "m\n"})
		apptest.Git(t, p.dir, "push", "-q", "origin", "main")

		_, resp, err := c.PullRequests.UpdateBranch(ctx, "octo", "hello", pr.GetNumber(),
			&github.PullRequestBranchUpdateOptions{ExpectedHeadSHA: github.Ptr(mainTip)})
		status(t, "a stale expected_head_sha", resp, http.StatusUnprocessableEntity)
		if e, ok := errors.AsType[*github.ErrorResponse](err); !ok || e.Message != "expected head sha didn’t match current head ref." {
			t.Fatalf("a stale expected_head_sha: %v", err)
		}

		_, resp, err = c.PullRequests.UpdateBranch(ctx, "octo", "hello", pr.GetNumber(),
			&github.PullRequestBranchUpdateOptions{ExpectedHeadSHA: github.Ptr(feature)})
		res := accepted(t, resp, err)
		if res.GetMessage() != "Updating pull request branch." || !strings.HasSuffix(res.GetURL(), "/repos/octo/hello/pulls/"+itoa(pr.GetNumber())) {
			t.Fatalf("update: %+v", res)
		}
		head := p.remoteRef("refs/heads/feature")
		parents := strings.Fields(apptest.Git(t, p.dir, "show", "-s", "--format=%P", head))
		subject := strings.TrimSpace(apptest.Git(t, p.dir, "show", "-s", "--format=%s|%cn", head))
		if len(parents) != 2 || parents[0] != feature || parents[1] != mainTip || subject != "Merge branch 'main' into feature|octo" {
			t.Fatalf("update commit %s: parents %v, %q", head, parents, subject)
		}
		got, _, err := c.PullRequests.Get(ctx, "octo", "hello", pr.GetNumber())
		apptest.Must(t, "get", err)
		if got.GetHead().GetSHA() != head {
			t.Fatalf("the pull request's head %s, want %s", got.GetHead().GetSHA(), head)
		}
		rc.WaitFor(t, func(d apptest.Delivery) string {
			if e, ok := d.Parsed.(*github.PullRequestEvent); ok && e.GetAfter() == head {
				return e.GetAction() + " " + e.GetBefore()
			}
			return ""
		}, "synchronize "+feature)
	})
	apptest.Step(t, "nothing to update, readers and conflicts", func(t *testing.T) {
		_, resp, _ := c.PullRequests.UpdateBranch(ctx, "octo", "hello", pr.GetNumber(), nil)
		status(t, "nothing to update", resp, http.StatusUnprocessableEntity)
		_, resp, _ = env.Client(env.Token(bob, "public_repo")).PullRequests.UpdateBranch(ctx, "octo", "hello", pr.GetNumber(), nil)
		status(t, "a reader", resp, http.StatusForbidden)
		p := proj.in(t)
		p.commitOn("left", "Left", map[string]string{"app.txt": "one\nleft\nthree\n"})
		left, _, err := c.PullRequests.Create(ctx, "octo", "hello", github.CreatePullRequest{Title: github.Ptr("Left"), Head: "left", Base: "main"})
		apptest.Must(t, "open left", err)
		apptest.Git(t, p.dir, "pull", "-q", "--ff-only", "origin", "main")
		apptest.Commit(t, p.dir, "Right on main", map[string]string{"app.txt": "one\nright\nthree\n"})
		apptest.Git(t, p.dir, "push", "-q", "origin", "main")
		_, resp, _ = c.PullRequests.UpdateBranch(ctx, "octo", "hello", left.GetNumber(), nil)
		status(t, "a conflict", resp, http.StatusUnprocessableEntity)
	})
	apptest.Step(t, "a fork's branch", func(t *testing.T) {
		fork, err := env.App.Repos.Fork(ctx, base, bob, "hello", false, bob)
		apptest.Must(t, "fork", err)
		bobToken := env.Token(bob, "public_repo")
		forkProj := &project{t: t, dir: apptest.WorkTree(t, nil)}
		apptest.Git(t, forkProj.dir, "remote", "add", "origin", env.GitURL("bob", fork.Name, "bob", bobToken))
		apptest.Git(t, forkProj.dir, "fetch", "-q", "origin", "main")
		apptest.Git(t, forkProj.dir, "checkout", "-q", "-b", "main", "FETCH_HEAD")
		idea := forkProj.commitOn("idea", "Idea", map[string]string{"idea.txt": "idea\n"})
		bobClient := env.Client(bobToken)
		fpr, _, err := bobClient.PullRequests.Create(ctx, "octo", "hello", github.CreatePullRequest{Title: github.Ptr("Idea"), Head: "bob:idea", Base: "main"})
		apptest.Must(t, "open from the fork", err)
		p := proj.in(t)
		mainTip := apptest.Commit(t, p.dir, "More on main", map[string]string{"more.txt": "more\n"})
		apptest.Git(t, p.dir, "push", "-q", "origin", "main")
		_, resp, _ := c.PullRequests.UpdateBranch(ctx, "octo", "hello", fpr.GetNumber(), nil)
		status(t, "the base's owner on bob's fork", resp, http.StatusForbidden)
		_, resp, err = bobClient.PullRequests.UpdateBranch(ctx, "octo", "hello", fpr.GetNumber(), nil)
		accepted(t, resp, err)
		head := forkProj.remoteRef("refs/heads/idea")
		parents := strings.Fields(apptest.Git(t, forkProj.dir, "show", "-s", "--format=%P", head))
		if len(parents) != 2 || parents[0] != idea || parents[1] != mainTip {
			t.Fatalf("the fork's update: parents %v", parents)
		}
		if got := p.remoteRef("refs/pull/" + itoa(fpr.GetNumber()) + "/head"); got != head {
			t.Fatalf("refs/pull head %s, want %s", got, head)
		}
	})
}

// accepted is the body of UpdateBranch's 202, which go-github reports as
// an *AcceptedError holding it.
func accepted(t *testing.T, resp *github.Response, err error) *github.PullRequestBranchUpdateResponse {
	t.Helper()
	var acc *github.AcceptedError
	if apptest.ResponseStatus(resp) != http.StatusAccepted || !errors.As(err, &acc) {
		t.Fatalf("update branch: %d %v", apptest.ResponseStatus(resp), err)
	}
	var res github.PullRequestBranchUpdateResponse
	if err := json.Unmarshal(acc.Raw, &res); err != nil {
		t.Fatalf("update branch's body %q: %v", acc.Raw, err)
	}
	return &res
}

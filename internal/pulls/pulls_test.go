package pulls_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/testwait"
	"forgeapi/internal/webhooks"
)

// pullEvent names a delivery "event action", and a push "push ref".
func pullEvent(d apptest.Delivery) string {
	if e, ok := d.Parsed.(*github.PushEvent); ok {
		return "push " + e.GetRef()
	}
	return apptest.EventAction(d)
}

// waitFor waits until every wanted pullEvent name arrived and returns the
// pull_request events received so far.
func waitFor(t *testing.T, rc *apptest.Receiver, want ...string) []*github.PullRequestEvent {
	t.Helper()
	rc.WaitFor(t, pullEvent, want...)
	var pulls []*github.PullRequestEvent
	for _, d := range rc.Deliveries() {
		if e, ok := d.Parsed.(*github.PullRequestEvent); ok {
			pulls = append(pulls, e)
		}
	}
	return pulls
}

func status(t *testing.T, what string, resp *github.Response, want int) {
	t.Helper()
	if got := apptest.ResponseStatus(resp); got != want {
		t.Fatalf("%s: status %d, want %d", what, got, want)
	}
}

// waitMergeable polls the pull request until its mergeability is known
// and returns it.
func waitMergeable(t *testing.T, c *github.Client, owner, repo string, number int) *github.PullRequest {
	t.Helper()
	var pr *github.PullRequest
	testwait.Until(t, fmt.Sprintf("pull request %d's mergeability to be computed", number), func() bool {
		var err error
		pr, _, err = c.PullRequests.Get(apptest.Ctx(), owner, repo, number)
		apptest.Must(t, "get pull request", err)
		return pr.Mergeable != nil
	})
	return pr
}

// project is a local clone pushing to a repository of the server.
type project struct {
	t   *testing.T
	dir string
}

func newProject(t *testing.T, env *apptest.Env, owner, repo, login, token string) *project {
	dir := apptest.WorkTree(t, map[string]string{"README.md": "# hello\n", "app.txt": "one\ntwo\nthree\n"})
	apptest.Git(t, dir, "remote", "add", "origin", env.GitURL(owner, repo, login, token))
	apptest.Git(t, dir, "push", "-q", "origin", "main")
	return &project{t: t, dir: dir}
}

// in returns the project failing t (a story's step) when git fails.
func (p *project) in(t *testing.T) *project { return &project{t: t, dir: p.dir} }

// commitOn commits the files on branch (created from main when new) and
// pushes it; it returns the commit.
func (p *project) commitOn(branch, message string, files map[string]string) string {
	if out, _ := apptest.TryGit(p.t, p.dir, "rev-parse", "--verify", "-q", "refs/heads/"+branch); strings.TrimSpace(out) == "" {
		apptest.Git(p.t, p.dir, "branch", branch, "main")
	}
	apptest.Git(p.t, p.dir, "checkout", "-q", branch)
	sha := apptest.Commit(p.t, p.dir, message, files)
	apptest.Git(p.t, p.dir, "push", "-q", "origin", branch)
	apptest.Git(p.t, p.dir, "checkout", "-q", "main")
	return sha
}

// remoteRef fetches ref from origin and returns the commit it names.
func (p *project) remoteRef(ref string) string {
	apptest.Git(p.t, p.dir, "fetch", "-q", "origin", "+"+ref+":refs/remotes/check/x")
	return strings.TrimSpace(apptest.Git(p.t, p.dir, "rev-parse", "refs/remotes/check/x"))
}

// TestPullRequestFlow opens, lists, edits, synchronizes and merges a pull
// request through go-github and git: refs/pull/1/head follows the head
// branch, mergeability is computed in the background (null first), the
// sha guard refuses a stale head, the merge moves main (seen by git
// fetch) as a push, and every delivery matches the webhook schemas.
func TestPullRequestFlow(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	ctx := apptest.Ctx()
	octo, bob := env.User("octo"), env.User("bob")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo", "admin:repo_hook")
	owner := env.Client(token)
	reader := env.Client(env.Token(bob, "public_repo"))
	rc := apptest.NewReceiver(t, "s")
	_, _, err := owner.Repositories.CreateHook(ctx, "octo", "hello", &github.Hook{Events: []string{"pull_request", "push"},
		Config: &github.HookConfig{URL: github.Ptr(rc.URL), ContentType: github.Ptr("json"), Secret: github.Ptr("s")}})
	apptest.Must(t, "hook", err)
	proj := newProject(t, env, "octo", "hello", "octo", token)
	first := proj.commitOn("feature", "Add a feature", map[string]string{"feature.txt": "new\n"})

	apptest.Step(t, "a pull request without commits, head or title is refused", func(t *testing.T) {
		_, resp, _ := owner.PullRequests.Create(ctx, "octo", "hello", github.CreatePullRequest{Title: github.Ptr("Nothing"),
			Head: "main", Base: "main"})
		status(t, "no commits between", resp, http.StatusUnprocessableEntity)
		_, resp, _ = owner.PullRequests.Create(ctx, "octo", "hello", github.CreatePullRequest{Title: github.Ptr("Ghost"),
			Head: "ghost", Base: "main"})
		status(t, "head not found", resp, http.StatusUnprocessableEntity)
		_, resp, _ = owner.PullRequests.Create(ctx, "octo", "hello", github.CreatePullRequest{Head: "feature", Base: "main"})
		status(t, "no title", resp, http.StatusUnprocessableEntity)
	})

	apptest.Step(t, "a reader opens a pull request from the owner's branch", func(t *testing.T) {
		pr, resp, err := reader.PullRequests.Create(ctx, "octo", "hello", github.CreatePullRequest{Title: github.Ptr("Add a feature"),
			Head: "octo:feature", Base: "main", Body: github.Ptr("Please review.")})
		apptest.Must(t, "open", err)
		status(t, "open", resp, http.StatusCreated)
		if pr.GetNumber() != 1 || pr.GetState() != "open" || pr.GetHead().GetSHA() != first || pr.GetHead().GetRef() != "feature" ||
			pr.GetBase().GetRef() != "main" || pr.GetHead().GetRepo().GetFullName() != "octo/hello" || pr.GetMerged() ||
			pr.GetCommits() != 1 || pr.GetAdditions() != 1 || pr.GetChangedFiles() != 1 || pr.GetUser().GetLogin() != "bob" {
			t.Fatalf("opened: %+v", pr)
		}
		_, resp, _ = owner.PullRequests.Create(ctx, "octo", "hello", github.CreatePullRequest{Title: github.Ptr("Again"),
			Head: "feature", Base: "main"})
		status(t, "already open", resp, http.StatusUnprocessableEntity)
		if got := proj.in(t).remoteRef("refs/pull/1/head"); got != first {
			t.Fatalf("refs/pull/1/head = %s, want %s", got, first)
		}
		issue, _, err := owner.Issues.Get(ctx, "octo", "hello", 1)
		apptest.Must(t, "its issue", err)
		if !issue.IsPullRequest() {
			t.Fatalf("issue 1 has no pull_request key: %+v", issue)
		}
	})

	apptest.Step(t, "mergeability is computed in the background, with refs/pull/1/merge", func(t *testing.T) {
		pr := waitMergeable(t, owner, "octo", "hello", 1)
		if !pr.GetMergeable() || pr.GetMergeableState() != "clean" {
			t.Fatalf("mergeable %v %q", pr.GetMergeable(), pr.GetMergeableState())
		}
		mergeRef := proj.in(t).remoteRef("refs/pull/1/merge")
		if parents := strings.Fields(apptest.Git(t, proj.dir, "show", "-s", "--format=%P", mergeRef)); len(parents) != 2 || parents[1] != first {
			t.Fatalf("refs/pull/1/merge parents %v", parents)
		}
	})

	apptest.Step(t, "the owner lists pull requests by head and by state", func(t *testing.T) {
		list, _, err := owner.PullRequests.List(ctx, "octo", "hello", &github.PullRequestListOptions{Head: "octo:feature", Base: "main"})
		apptest.Must(t, "list", err)
		if len(list) != 1 || list[0].GetNumber() != 1 {
			t.Fatalf("list by head: %d", len(list))
		}
		list, _, err = owner.PullRequests.List(ctx, "octo", "hello", &github.PullRequestListOptions{State: "closed"})
		apptest.Must(t, "list closed", err)
		if len(list) != 0 {
			t.Fatalf("closed list: %d", len(list))
		}
		_, resp, _ := owner.PullRequests.List(ctx, "octo", "hello", &github.PullRequestListOptions{State: "weird"})
		status(t, "bad state", resp, http.StatusUnprocessableEntity)
	})

	var second string
	apptest.Step(t, "the author edits it and a push to its head synchronizes it", func(t *testing.T) {
		_, resp, _ := reader.PullRequests.Edit(ctx, "octo", "hello", 1, &github.PullRequest{Title: github.Ptr("Add the feature")})
		status(t, "author edits", resp, http.StatusOK)

		second = proj.in(t).commitOn("feature", "Polish", map[string]string{"feature.txt": "new\npolished\n"})
		events := waitFor(t, rc, "pull_request opened", "pull_request edited", "pull_request synchronize")
		for _, e := range events {
			if e.GetAction() == "synchronize" && (e.GetBefore() != first || e.GetAfter() != second) {
				t.Fatalf("synchronize before %s after %s", e.GetBefore(), e.GetAfter())
			}
			if e.GetAction() == "edited" && e.GetChanges().GetTitle().GetFrom() != "Add a feature" {
				t.Fatalf("edited changes %+v", e.GetChanges())
			}
		}
		if got := proj.in(t).remoteRef("refs/pull/1/head"); got != second {
			t.Fatalf("refs/pull/1/head after push = %s, want %s", got, second)
		}
	})

	apptest.Step(t, "its commits and files show both commits", func(t *testing.T) {
		checkCommitsAndFiles(t, owner, first, second)
	})

	apptest.Step(t, "a stale head sha and a reader may not merge", func(t *testing.T) {
		_, resp, _ := owner.PullRequests.Merge(ctx, "octo", "hello", 1, "", &github.PullRequestOptions{SHA: first})
		status(t, "stale sha", resp, http.StatusConflict)
		_, resp, _ = reader.PullRequests.Merge(ctx, "octo", "hello", 1, "", nil)
		status(t, "reader merges", resp, http.StatusForbidden)
		_, resp, _ = owner.PullRequests.IsMerged(ctx, "octo", "hello", 1)
		status(t, "not merged yet", resp, http.StatusNotFound)
	})

	var merge string
	apptest.Step(t, "the owner merges: main moves to the merge commit", func(t *testing.T) {
		res, _, err := owner.PullRequests.Merge(ctx, "octo", "hello", 1, "", &github.PullRequestOptions{SHA: second})
		apptest.Must(t, "merge", err)
		if !res.GetMerged() || res.GetSHA() == "" {
			t.Fatalf("merge result %+v", res)
		}
		merge = res.GetSHA()
		if got := proj.in(t).remoteRef("refs/heads/main"); got != merge {
			t.Fatalf("main = %s, want the merge %s", got, merge)
		}
		msg := apptest.Git(t, proj.dir, "show", "-s", "--format=%s%n%P", merge)
		if !strings.HasPrefix(msg, "Merge pull request #1 from octo/feature\n") || !strings.Contains(msg, second) {
			t.Fatalf("merge commit: %q", msg)
		}
	})

	apptest.Step(t, "the merged pull request is closed and cannot merge again", func(t *testing.T) {
		_, resp, _ := owner.PullRequests.IsMerged(ctx, "octo", "hello", 1)
		status(t, "merged", resp, http.StatusNoContent)
		pr, _, err := owner.PullRequests.Get(ctx, "octo", "hello", 1)
		apptest.Must(t, "get merged", err)
		if !pr.GetMerged() || pr.GetState() != "closed" || pr.GetMergedBy().GetLogin() != "octo" || pr.GetMergeCommitSHA() != merge {
			t.Fatalf("merged pull request: %+v", pr)
		}
		_, resp, _ = owner.PullRequests.Merge(ctx, "octo", "hello", 1, "", nil)
		status(t, "merge again", resp, http.StatusMethodNotAllowed)
		checkCommitsAndFiles(t, owner, first, second)
	})

	apptest.Step(t, "the merge is delivered as the pull request closed and a push to main", func(t *testing.T) {
		events := waitFor(t, rc, "pull_request closed", "push refs/heads/main")
		for _, e := range events {
			if e.GetAction() == "closed" && (!e.GetPullRequest().GetMerged() || e.GetPullRequest().GetMergeCommitSHA() != merge) {
				t.Fatalf("closed event: %+v", e.GetPullRequest())
			}
		}
	})
}

// checkCommitsAndFiles reads pull request 1's commits (first, second,
// oldest first) and its one file, and pages the commits.
func checkCommitsAndFiles(t *testing.T, c *github.Client, first, second string) {
	t.Helper()
	ctx := apptest.Ctx()
	commits, _, err := c.PullRequests.ListCommits(ctx, "octo", "hello", 1, nil)
	apptest.Must(t, "commits", err)
	if len(commits) != 2 || commits[0].GetSHA() != first || commits[1].GetSHA() != second ||
		strings.TrimSpace(commits[1].GetCommit().GetMessage()) != "Polish" || commits[0].GetCommit().GetAuthor().GetName() != "Test Author" {
		t.Fatalf("commits: %d %s %s %q %q", len(commits), commits[0].GetSHA(), commits[len(commits)-1].GetSHA(), commits[len(commits)-1].GetCommit().GetMessage(), commits[0].GetCommit().GetAuthor().GetName())
	}
	page, resp, err := c.PullRequests.ListCommits(ctx, "octo", "hello", 1, &github.ListOptions{PerPage: 1, Page: 2})
	apptest.Must(t, "commits page 2", err)
	if len(page) != 1 || page[0].GetSHA() != second || resp.PrevPage != 1 {
		t.Fatalf("commits page 2: %d, prev %d", len(page), resp.PrevPage)
	}
	files, _, err := c.PullRequests.ListFiles(ctx, "octo", "hello", 1, nil)
	apptest.Must(t, "files", err)
	if len(files) != 1 || files[0].GetFilename() != "feature.txt" || files[0].GetStatus() != "added" || files[0].GetAdditions() != 2 ||
		files[0].GetChanges() != 2 || !strings.Contains(files[0].GetPatch(), "+polished") || !strings.Contains(files[0].GetRawURL(), second) {
		t.Fatalf("files: %+v", files)
	}
}

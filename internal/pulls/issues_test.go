package pulls_test

import (
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/webhooks"
)

// TestPullRequestThroughIssues changes a pull request through the issues
// endpoints (label, assignee, title) and merges it: the hook subscribed to
// both issues and pull_request receives pull_request labeled, assigned and
// edited and no issues event, as on the platform; the issue view shows
// pull_request.merged_at after the merge, and the pull request's history
// has labeled, assigned, renamed, merged and closed.
func TestPullRequestThroughIssues(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	ctx := apptest.Ctx()
	octo := env.User("octo")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo", "admin:repo_hook")
	owner := env.Client(token)
	rc := apptest.NewReceiver(t, "s")
	_, _, err := owner.Repositories.CreateHook(ctx, "octo", "hello", &github.Hook{Events: []string{"pull_request", "issues"},
		Config: &github.HookConfig{URL: github.Ptr(rc.URL), ContentType: github.Ptr("json"), Secret: github.Ptr("s")}})
	apptest.Must(t, "hook", err)
	proj := newProject(t, env, "octo", "hello", "octo", token)
	proj.commitOn("feature", "Add a feature", map[string]string{"feature.txt": "new\n"})
	_, _, err = owner.PullRequests.Create(ctx, "octo", "hello", github.CreatePullRequest{Title: github.Ptr("Feature"),
		Head: "feature", Base: "main"})
	apptest.Must(t, "open", err)

	_, _, err = owner.Issues.AddLabelsToIssue(ctx, "octo", "hello", 1, []string{"enhancement"})
	apptest.Must(t, "label", err)
	_, _, err = owner.Issues.AddAssignees(ctx, "octo", "hello", 1, []string{"octo"})
	apptest.Must(t, "assign", err)
	_, _, err = owner.Issues.Update(ctx, "octo", "hello", 1, github.UpdateIssueRequest{Title: github.Ptr("A feature")})
	apptest.Must(t, "rename", err)
	events := waitFor(t, rc, "pull_request opened", "pull_request labeled", "pull_request assigned", "pull_request edited")
	for _, e := range events {
		if e.GetAction() == "labeled" && e.GetLabel().GetName() != "enhancement" {
			t.Fatalf("labeled event names %+v", e.GetLabel())
		}
		if e.GetAction() == "edited" && (e.GetChanges().GetTitle().GetFrom() != "Feature" || e.GetPullRequest().GetTitle() != "A feature") {
			t.Fatalf("edited event %+v", e.GetChanges())
		}
	}

	waitMergeable(t, owner, "octo", "hello", 1)
	merged, _, err := owner.PullRequests.Merge(ctx, "octo", "hello", 1, "", nil)
	apptest.Must(t, "merge", err)
	waitFor(t, rc, "pull_request closed")
	issue, _, err := owner.Issues.Get(ctx, "octo", "hello", 1)
	apptest.Must(t, "issue view", err)
	if issue.GetPullRequestLinks().MergedAt == nil || issue.GetState() != "closed" {
		t.Fatalf("issue view of the merged pull request: %+v", issue.GetPullRequestLinks())
	}
	history, _, err := owner.Issues.ListIssueEvents(ctx, "octo", "hello", 1, nil)
	apptest.Must(t, "history", err)
	var names []string
	for _, e := range history {
		names = append(names, e.GetEvent())
	}
	if got := strings.Join(names, " "); got != "labeled assigned renamed merged closed" {
		t.Fatalf("history %q", got)
	}
	if sha := history[3].GetCommitID(); sha != merged.GetSHA() || history[4].GetCommitID() != sha {
		t.Fatalf("merged and closed name commit %q and %q, want %q", sha, history[4].GetCommitID(), merged.GetSHA())
	}
	for _, e := range rc.Described(pullEvent) {
		if strings.HasPrefix(e, "issues ") {
			t.Fatalf("an issues event for a pull request: %v", rc.Described(pullEvent))
		}
	}
}

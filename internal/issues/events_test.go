package issues_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

func eventNames(list []*github.IssueEvent) []string {
	var out []string
	for _, e := range list {
		out = append(out, e.GetEvent())
	}
	return out
}

// TestIssueEventsAndTimeline plays changes on an issue through go-github
// and reads them back as the issue's events, the repository's events (with
// the issue, newest first), one event, and the timeline with the comments
// in between; a label deleted later keeps its name in the history.
func TestIssueEventsAndTimeline(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo")
	env.Repo(octo, "hello")
	env.Repo(octo, "secret", apptest.RepoOpts{Private: true})
	owner := env.Client(env.Token(octo, "repo"))
	anon := env.Client("")

	_, _, err := owner.Issues.CreateLabel(ctx, "octo", "hello", github.CreateIssueLabelRequest{Name: "bug", Color: github.Ptr("d73a4a")})
	apptest.Must(t, "label", err)
	v1, _, err := owner.Issues.CreateMilestone(ctx, "octo", "hello", github.CreateMilestoneRequest{Title: "v1"})
	apptest.Must(t, "milestone", err)
	_, _, err = owner.Issues.Create(ctx, "octo", "hello", github.CreateIssueRequest{Title: "Plan", Labels: []string{"bug"},
		Assignees: []string{"octo"}, Milestone: github.Ptr(v1.GetNumber())})
	apptest.Must(t, "open", err)
	_, _, err = owner.Issues.Update(ctx, "octo", "hello", 1, github.UpdateIssueRequest{Title: github.Ptr("Better plan")})
	apptest.Must(t, "rename", err)
	_, _, err = owner.Issues.CreateComment(ctx, "octo", "hello", 1, github.IssueCommentRequest{Body: "on it"})
	apptest.Must(t, "comment", err)
	_, _, err = owner.Issues.Update(ctx, "octo", "hello", 1, github.UpdateIssueRequest{State: github.Ptr("closed"),
		StateReason: github.Ptr("not_planned")})
	apptest.Must(t, "close", err)
	_, _, err = owner.Issues.Update(ctx, "octo", "hello", 1, github.UpdateIssueRequest{State: github.Ptr("open")})
	apptest.Must(t, "reopen", err)
	_, err = owner.Issues.Lock(ctx, "octo", "hello", 1, &github.LockIssueOptions{LockReason: "resolved"})
	apptest.Must(t, "lock", err)
	_, err = owner.Issues.Unlock(ctx, "octo", "hello", 1)
	apptest.Must(t, "unlock", err)
	_, err = owner.Issues.RemoveLabelForIssue(ctx, "octo", "hello", 1, "bug")
	apptest.Must(t, "unlabel", err)
	_, err = owner.Issues.DeleteLabel(ctx, "octo", "hello", "bug")
	apptest.Must(t, "delete label", err)

	list, _, err := anon.Issues.ListIssueEvents(ctx, "octo", "hello", 1, nil)
	apptest.Must(t, "issue events", err)
	want := "labeled assigned milestoned renamed closed reopened locked unlocked unlabeled"
	if got := strings.Join(eventNames(list), " "); got != want {
		t.Fatalf("issue events %q, want %q", got, want)
	}
	labeled, assigned, renamed, locked := list[0], list[1], list[3], list[6]
	if labeled.GetLabel().GetName() != "bug" || labeled.GetLabel().GetColor() != "d73a4a" || labeled.GetActor().GetLogin() != "octo" ||
		labeled.Issue != nil {
		t.Fatalf("labeled event %+v", labeled)
	}
	if assigned.GetAssignee().GetLogin() != "octo" || assigned.GetAssigner().GetLogin() != "octo" || list[2].GetMilestone().GetTitle() != "v1" {
		t.Fatalf("assigned and milestoned events %+v %+v", assigned, list[2])
	}
	if renamed.GetRename().GetFrom() != "Plan" || renamed.GetRename().GetTo() != "Better plan" || locked.GetLockReason() != "resolved" {
		t.Fatalf("renamed and locked events %+v %+v", renamed.GetRename(), locked)
	}

	page, resp, err := owner.Issues.ListRepositoryEvents(ctx, "octo", "hello", &github.ListOptions{PerPage: 2})
	apptest.Must(t, "repository events", err)
	if got := strings.Join(eventNames(page), " "); got != "unlabeled unlocked" || resp.NextPage != 2 ||
		page[0].GetIssue().GetNumber() != 1 || page[0].GetIssue().GetTitle() != "Better plan" {
		t.Fatalf("repository events page %q next %d: %+v", got, resp.NextPage, page)
	}
	one, _, err := owner.Issues.GetEvent(ctx, "octo", "hello", renamed.GetID())
	apptest.Must(t, "one event", err)
	if one.GetEvent() != "renamed" || one.GetIssue().GetNumber() != 1 {
		t.Fatalf("one event %+v", one)
	}
	_, resp, _ = owner.Issues.GetEvent(ctx, "octo", "hello", renamed.GetID()+1000)
	status(t, "unknown event", resp, http.StatusNotFound)
	_, resp, _ = owner.Issues.ListIssueEvents(ctx, "octo", "hello", 99, nil)
	status(t, "events of no issue", resp, http.StatusNotFound)

	timeline, _, err := anon.Issues.ListIssueTimeline(ctx, "octo", "hello", 1, nil)
	apptest.Must(t, "timeline", err)
	var kinds []string
	for _, e := range timeline {
		kinds = append(kinds, e.GetEvent())
	}
	if got := strings.Join(kinds, " "); got != "labeled assigned milestoned renamed commented closed reopened locked unlocked unlabeled" {
		t.Fatalf("timeline %q", got)
	}
	if c := timeline[4]; c.GetBody() != "on it" || c.GetActor().GetLogin() != "octo" {
		t.Fatalf("timeline comment %+v", c)
	}

	_, _, err = owner.Issues.Create(ctx, "octo", "secret", github.CreateIssueRequest{Title: "hidden", Labels: []string{"x"}})
	apptest.Must(t, "private issue", err)
	_, resp, _ = anon.Issues.ListIssueEvents(ctx, "octo", "secret", 1, nil)
	status(t, "anonymous on a private repository", resp, http.StatusNotFound)
	private, _, err := owner.Issues.ListRepositoryEvents(ctx, "octo", "secret", nil)
	apptest.Must(t, "private repository events", err)
	if got := strings.Join(eventNames(private), " "); got != "labeled" {
		t.Fatalf("private repository events %q", got)
	}
}

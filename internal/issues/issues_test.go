package issues_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/webhooks"
)

// issueAction names an issues delivery "#number action".
func issueAction(d apptest.Delivery) string {
	if e, ok := d.Parsed.(*github.IssuesEvent); ok {
		return fmt.Sprintf("#%d %s", e.GetIssue().GetNumber(), e.GetAction())
	}
	return ""
}

func status(t *testing.T, what string, resp *github.Response, want int) {
	t.Helper()
	if got := apptest.ResponseStatus(resp); got != want {
		t.Fatalf("%s: status %d, want %d", what, got, want)
	}
}

func numbers(list []*github.Issue) []int {
	var out []int
	for _, is := range list {
		out = append(out, is.GetNumber())
	}
	return out
}

// TestIssueFlow plays a repository's issue life through go-github: a
// reader opens an issue (labels they may not set are ignored), the owner
// creates labels and a milestone and files a triaged issue, filters the
// list, closes, locks and comments; the reader is refused labelling and
// editing others' issues; every delivery the hook receives parses and
// matches the platform's webhook schema.
func TestIssueFlow(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	ctx := apptest.Ctx()
	octo, bob := env.User("octo"), env.User("bob")
	env.Repo(octo, "hello")
	owner := env.Client(env.Token(octo, "repo", "admin:repo_hook"))
	reader := env.Client(env.Token(bob, "public_repo"))
	rc := apptest.NewReceiver(t, "s")
	_, _, err := owner.Repositories.CreateHook(ctx, "octo", "hello", &github.Hook{
		Events: []string{"issues", "issue_comment", "label", "milestone"},
		Config: &github.HookConfig{URL: github.Ptr(rc.URL), ContentType: github.Ptr("json"), Secret: github.Ptr("s")}})
	apptest.Must(t, "hook", err)

	apptest.Step(t, "a reader opens an issue with a label they may not set", func(t *testing.T) {
		first, resp, err := reader.Issues.Create(ctx, "octo", "hello", github.CreateIssueRequest{Title: "It breaks",
			Body: github.Ptr("Steps: run it. cc @octo"), Labels: []string{"bug"}})
		apptest.Must(t, "reader opens", err)
		status(t, "open", resp, http.StatusCreated)
		if first.GetNumber() != 1 || first.GetUser().GetLogin() != "bob" || len(first.Labels) != 0 || first.GetState() != "open" ||
			first.GetAuthorAssociation() != "NONE" || !strings.HasSuffix(first.GetHTMLURL(), "/octo/hello/issues/1") {
			t.Fatalf("first issue: %+v", first)
		}
		_, resp, _ = reader.Issues.Create(ctx, "octo", "hello", github.CreateIssueRequest{})
		status(t, "no title", resp, http.StatusUnprocessableEntity)
	})

	var v1 *github.Milestone
	apptest.Step(t, "the owner creates labels and a milestone; the reader may not", func(t *testing.T) {
		bug, _, err := owner.Issues.CreateLabel(ctx, "octo", "hello", github.CreateIssueLabelRequest{Name: "bug", Color: github.Ptr("#D73A4A")})
		apptest.Must(t, "label", err)
		if bug.GetColor() != "d73a4a" {
			t.Fatalf("label color %q", bug.GetColor())
		}
		_, resp, _ := owner.Issues.CreateLabel(ctx, "octo", "hello", github.CreateIssueLabelRequest{Name: "BUG", Color: github.Ptr("ffffff")})
		status(t, "taken label name", resp, http.StatusUnprocessableEntity)
		_, resp, _ = owner.Issues.CreateLabel(ctx, "octo", "hello", github.CreateIssueLabelRequest{Name: "odd", Color: github.Ptr("zzz")})
		status(t, "bad color", resp, http.StatusUnprocessableEntity)
		_, resp, _ = reader.Issues.CreateLabel(ctx, "octo", "hello", github.CreateIssueLabelRequest{Name: "mine", Color: github.Ptr("ffffff")})
		status(t, "reader creates a label", resp, http.StatusForbidden)
		v1, _, err = owner.Issues.CreateMilestone(ctx, "octo", "hello", github.CreateMilestoneRequest{Title: "v1"})
		apptest.Must(t, "milestone", err)
	})

	apptest.Step(t, "the owner files a triaged issue", func(t *testing.T) {
		second, _, err := owner.Issues.Create(ctx, "octo", "hello", github.CreateIssueRequest{Title: "Plan", Labels: []string{"bug"},
			Assignees: []string{"octo"}, Milestone: github.Ptr(v1.GetNumber())})
		apptest.Must(t, "owner opens", err)
		if second.GetNumber() != 2 || len(second.Labels) != 1 || second.GetAssignee().GetLogin() != "octo" ||
			second.GetMilestone().GetNumber() != 1 || second.GetAuthorAssociation() != "OWNER" {
			t.Fatalf("second issue: %+v", second)
		}
		// Opened with a label, an assignee and a milestone: the platform sends
		// labeled, assigned and milestoned after opened.
		rc.WaitFor(t, issueAction, "#2 opened", "#2 labeled", "#2 assigned", "#2 milestoned")
		_, resp, _ := owner.Issues.Create(ctx, "octo", "hello", github.CreateIssueRequest{Title: "x", Assignees: []string{"bob"}})
		status(t, "assignee without access", resp, http.StatusUnprocessableEntity)
	})

	apptest.Step(t, "the reader edits only their own issue and may not label; the owner labels", func(t *testing.T) {
		_, _, err := reader.Issues.Update(ctx, "octo", "hello", 1, github.UpdateIssueRequest{Title: github.Ptr("It breaks badly")})
		apptest.Must(t, "author edits", err)
		_, resp, _ := reader.Issues.Update(ctx, "octo", "hello", 2, github.UpdateIssueRequest{Title: github.Ptr("mine now")})
		status(t, "reader edits another's issue", resp, http.StatusForbidden)
		_, resp, _ = reader.Issues.AddLabelsToIssue(ctx, "octo", "hello", 1, []string{"bug"})
		status(t, "reader labels", resp, http.StatusForbidden)
		labels, _, err := owner.Issues.AddLabelsToIssue(ctx, "octo", "hello", 1, []string{"bug", "triage"})
		apptest.Must(t, "owner labels", err)
		if len(labels) != 2 || labels[1].GetName() != "triage" || labels[1].GetColor() != "ededed" {
			t.Fatalf("labels %+v", labels)
		}
	})

	apptest.Step(t, "the owner filters and pages the list", func(t *testing.T) {
		list, _, err := owner.Issues.ListByRepo(ctx, "octo", "hello", &github.IssueListByRepoOptions{Labels: []string{"bug"}})
		apptest.Must(t, "list by label", err)
		if got := numbers(list); !slices.Equal(got, []int{2, 1}) {
			t.Fatalf("labelled bug: %v", got)
		}
		for query, want := range map[string][]int{"assignee=octo": {2}, "assignee=none": {1}, "assignee=*": {2}, "creator=bob": {1},
			"mentioned=octo": {1}, "milestone=1": {2}, "state=closed": nil, "sort=created&direction=asc": {1, 2}} {
			var got []*github.Issue
			req, err := owner.NewRequest(ctx, "GET", "repos/octo/hello/issues?"+query, nil)
			apptest.Must(t, query, err)
			_, err = owner.Do(req, &got)
			apptest.Must(t, query, err)
			if !slices.Equal(numbers(got), want) {
				t.Errorf("%s: %v, want %v", query, numbers(got), want)
			}
		}
		page, resp, err := owner.Issues.ListByRepo(ctx, "octo", "hello", &github.IssueListByRepoOptions{ListOptions: github.ListOptions{PerPage: 1}})
		apptest.Must(t, "page", err)
		if len(page) != 1 || resp.NextPage != 2 {
			t.Fatalf("first page: %v, next %d", numbers(page), resp.NextPage)
		}
	})

	apptest.Step(t, "the owner closes and reopens an issue", func(t *testing.T) {
		closed, _, err := owner.Issues.Update(ctx, "octo", "hello", 1, github.UpdateIssueRequest{State: github.Ptr("closed"),
			StateReason: github.Ptr("not_planned")})
		apptest.Must(t, "close", err)
		if closed.GetState() != "closed" || closed.GetStateReason() != "not_planned" || closed.GetClosedBy().GetLogin() != "octo" || closed.ClosedAt == nil {
			t.Fatalf("closed: %+v", closed)
		}
		_, _, err = owner.Issues.Update(ctx, "octo", "hello", 1, github.UpdateIssueRequest{State: github.Ptr("open")})
		apptest.Must(t, "reopen", err)
	})

	apptest.Step(t, "the owner locks an issue: only they comment on it", func(t *testing.T) {
		resp, err := owner.Issues.Lock(ctx, "octo", "hello", 2, &github.LockIssueOptions{LockReason: "resolved"})
		apptest.Must(t, "lock", err)
		status(t, "lock", resp, http.StatusNoContent)
		resp, _ = reader.Issues.Lock(ctx, "octo", "hello", 1, nil)
		status(t, "reader locks", resp, http.StatusForbidden)
		_, resp, _ = reader.Issues.CreateComment(ctx, "octo", "hello", 2, github.IssueCommentRequest{Body: "me too"})
		status(t, "comment on a locked issue", resp, http.StatusForbidden)
		_, _, err = owner.Issues.CreateComment(ctx, "octo", "hello", 2, github.IssueCommentRequest{Body: "closing words"})
		apptest.Must(t, "owner comments on the locked issue", err)
		got, _, err := owner.Issues.Get(ctx, "octo", "hello", 2)
		apptest.Must(t, "get", err)
		if !got.GetLocked() || got.GetActiveLockReason() != "resolved" || got.GetComments() != 1 {
			t.Fatalf("locked issue: %+v", got)
		}
		_, err = owner.Issues.Unlock(ctx, "octo", "hello", 2)
		apptest.Must(t, "unlock", err)
	})

	apptest.Step(t, "the reader comments and edits the comment; the owner lists and deletes it", func(t *testing.T) {
		comment, _, err := reader.Issues.CreateComment(ctx, "octo", "hello", 1, github.IssueCommentRequest{Body: "more detail"})
		apptest.Must(t, "comment", err)
		_, resp, _ := reader.Issues.CreateComment(ctx, "octo", "hello", 1, github.IssueCommentRequest{})
		status(t, "empty comment", resp, http.StatusUnprocessableEntity)
		edited, _, err := reader.Issues.UpdateComment(ctx, "octo", "hello", comment.GetID(), github.IssueCommentRequest{Body: "even more"})
		apptest.Must(t, "edit comment", err)
		if edited.GetBody() != "even more" || !strings.HasSuffix(edited.GetIssueURL(), "/repos/octo/hello/issues/1") {
			t.Fatalf("edited comment %+v", edited)
		}
		all, _, err := owner.Issues.ListComments(ctx, "octo", "hello", 0, nil)
		apptest.Must(t, "repository comments", err)
		mine, _, err := owner.Issues.ListComments(ctx, "octo", "hello", 1, nil)
		apptest.Must(t, "issue comments", err)
		if len(all) != 2 || len(mine) != 1 {
			t.Fatalf("comments: %d in the repository, %d on #1", len(all), len(mine))
		}
		one, _, err := owner.Issues.GetComment(ctx, "octo", "hello", comment.GetID())
		apptest.Must(t, "get comment", err)
		if one.GetUser().GetLogin() != "bob" {
			t.Fatalf("comment %+v", one)
		}
		_, err = owner.Issues.DeleteComment(ctx, "octo", "hello", comment.GetID())
		apptest.Must(t, "delete comment", err)
	})

	apptest.Step(t, "only those with push access are assignable", func(t *testing.T) {
		assignees, _, err := owner.Issues.ListAssignees(ctx, "octo", "hello", nil)
		apptest.Must(t, "assignees", err)
		isOcto, _, err := owner.Issues.IsAssignee(ctx, "octo", "hello", "octo")
		apptest.Must(t, "is assignee", err)
		isBob, _, err := owner.Issues.IsAssignee(ctx, "octo", "hello", "bob")
		apptest.Must(t, "is not assignee", err)
		if len(assignees) != 1 || assignees[0].GetLogin() != "octo" || !isOcto || isBob {
			t.Fatalf("assignees %v, octo %v, bob %v", assignees, isOcto, isBob)
		}
		withOcto, resp, err := owner.Issues.AddAssignees(ctx, "octo", "hello", 1, []string{"octo", "bob"})
		apptest.Must(t, "add assignees", err)
		status(t, "add assignees", resp, http.StatusCreated)
		without, _, err := owner.Issues.RemoveAssignees(ctx, "octo", "hello", 1, []string{"octo"})
		apptest.Must(t, "remove assignees", err)
		if len(withOcto.Assignees) != 1 || len(without.Assignees) != 0 {
			t.Fatalf("assignees after add %d, after remove %d", len(withOcto.Assignees), len(without.Assignees))
		}
	})

	apptest.Step(t, "the owner replaces, removes, renames and deletes labels", func(t *testing.T) {
		_, _, err := owner.Issues.ReplaceLabelsForIssue(ctx, "octo", "hello", 1, []string{"triage"})
		apptest.Must(t, "replace labels", err)
		_, err = owner.Issues.RemoveLabelForIssue(ctx, "octo", "hello", 1, "triage")
		apptest.Must(t, "remove label", err)
		resp, _ := owner.Issues.RemoveLabelForIssue(ctx, "octo", "hello", 1, "triage")
		status(t, "remove a label the issue lacks", resp, http.StatusNotFound)
		_, _, err = owner.Issues.UpdateLabel(ctx, "octo", "hello", "bug", github.UpdateIssueLabelRequest{NewName: github.Ptr("defect")})
		apptest.Must(t, "rename label", err)
		byIssue, _, err := owner.Issues.ListLabelsByIssue(ctx, "octo", "hello", 2, nil)
		apptest.Must(t, "issue labels", err)
		if len(byIssue) != 1 || byIssue[0].GetName() != "defect" {
			t.Fatalf("issue 2 labels %+v", byIssue)
		}
		_, err = owner.Issues.DeleteLabel(ctx, "octo", "hello", "triage")
		apptest.Must(t, "delete label", err)
		_, err = owner.Issues.RemoveLabelsForIssue(ctx, "octo", "hello", 2)
		apptest.Must(t, "remove all labels", err)
	})

	apptest.Step(t, "the owner sets, edits, closes and deletes a milestone", func(t *testing.T) {
		withMs, _, err := owner.Issues.Update(ctx, "octo", "hello", 1, github.UpdateIssueRequest{Milestone: github.Ptr(1)})
		apptest.Must(t, "set milestone", err)
		withoutMs, _, err := owner.Issues.RemoveMilestone(ctx, "octo", "hello", 1)
		apptest.Must(t, "remove milestone", err)
		if withMs.GetMilestone().GetTitle() != "v1" || withoutMs.Milestone != nil {
			t.Fatalf("milestone set %+v, removed %+v", withMs.Milestone, withoutMs.Milestone)
		}
		_, _, err = owner.Issues.UpdateMilestone(ctx, "octo", "hello", 1, github.UpdateMilestoneRequest{Title: github.Ptr("v1.0"),
			DueOn: &github.Timestamp{Time: time.Date(2030, 1, 2, 0, 0, 0, 0, time.UTC)}})
		apptest.Must(t, "edit milestone", err)
		ms, _, err := owner.Issues.UpdateMilestone(ctx, "octo", "hello", 1, github.UpdateMilestoneRequest{State: github.Ptr("closed")})
		apptest.Must(t, "close milestone", err)
		if ms.GetState() != "closed" || ms.GetOpenIssues() != 1 || ms.ClosedAt == nil {
			t.Fatalf("milestone %+v", ms)
		}
		open, _, err := owner.Issues.ListMilestones(ctx, "octo", "hello", nil)
		apptest.Must(t, "open milestones", err)
		everyMs, _, err := owner.Issues.ListMilestones(ctx, "octo", "hello", &github.MilestoneListOptions{State: "all"})
		apptest.Must(t, "all milestones", err)
		if len(open) != 0 || len(everyMs) != 1 || everyMs[0].GetTitle() != "v1.0" || everyMs[0].GetDueOn().Year() != 2030 {
			t.Fatalf("milestones: %d open, %d in all", len(open), len(everyMs))
		}
		_, _, err = owner.Issues.UpdateMilestone(ctx, "octo", "hello", 1, github.UpdateMilestoneRequest{State: github.Ptr("open")})
		apptest.Must(t, "reopen milestone", err)
		_, err = owner.Issues.DeleteMilestone(ctx, "octo", "hello", 1)
		apptest.Must(t, "delete milestone", err)
		if is, _, _ := owner.Issues.Get(ctx, "octo", "hello", 2); is.Milestone != nil {
			t.Fatalf("issue keeps a deleted milestone: %+v", is.Milestone)
		}
	})

	apptest.Step(t, "the repository's feed shows the issues and comments", func(t *testing.T) {
		feed, _, err := owner.Activity.ListRepositoryEvents(ctx, "octo", "hello", nil)
		apptest.Must(t, "repository events", err)
		types := map[string]int{}
		for _, e := range feed {
			types[e.GetType()]++
		}
		if types["IssuesEvent"] < 3 || types["IssueCommentEvent"] != 2 {
			t.Fatalf("feed event types %v", types)
		}
	})

	apptest.Step(t, "the hook receives a delivery for every change", func(t *testing.T) {
		rc.WaitFor(t, apptest.EventAction, "issues opened", "issues opened", "issues edited", "issues labeled", "issues labeled", "issues closed",
			"issues reopened", "issues locked", "issues unlocked", "issues assigned", "issues unassigned", "issues unlabeled",
			"issue_comment created", "issue_comment created", "issue_comment edited", "issue_comment deleted",
			"label created", "label edited", "label deleted", "milestone created", "milestone closed", "milestone deleted",
			"issues milestoned", "issues demilestoned", "milestone edited", "milestone opened")
	})
}

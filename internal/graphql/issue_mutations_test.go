package graphql_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/repos"
	"forgeapi/internal/webhooks"
	"forgeapi/internal/wire"
)

// gqlData runs a query that must succeed and decodes its data into out
// (a map is emptied first).
func gqlData(t *testing.T, env *apptest.Env, token, query string, vars map[string]any, out any) {
	t.Helper()
	if m, ok := out.(*map[string]any); ok {
		*m = nil
	}
	r := post(t, env, token, query, vars)
	if len(r.Errors) != 0 {
		t.Fatalf("%s: %+v", query, r.Errors)
	}
	raw, _ := json.Marshal(r.Data)
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatal(err)
	}
}

// eventsOf are the names of the issue's events, as REST lists them.
func eventsOf(t *testing.T, env *apptest.Env, token string, number int) []string {
	t.Helper()
	list, _, err := env.Client(token).Issues.ListIssueEvents(apptest.Ctx(), "octo", "hello", number, nil)
	apptest.Must(t, "events", err)
	var out []string
	for _, e := range list {
		out = append(out, e.GetEvent())
	}
	return out
}

// TestIssueMutations runs createIssue, updateIssue, closeIssue,
// reopenIssue, addComment, addLabelsToLabelable and
// removeLabelsFromLabelable, and checks through REST that each made the
// change and recorded the events REST's change records, and that the
// repository's hook received the webhooks REST's changes send.
func TestIssueMutations(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	octo := env.User("octo")
	hello := env.Repo(octo, "hello")
	token := env.Token(octo, "repo", "admin:repo_hook")
	rest := env.Client(token)
	ctx := apptest.Ctx()
	rc := apptest.NewReceiver(t, "s")
	_, _, err := rest.Repositories.CreateHook(ctx, "octo", "hello", &github.Hook{Events: []string{"issues", "issue_comment"},
		Config: &github.HookConfig{URL: github.Ptr(rc.URL), ContentType: github.Ptr("json"), Secret: github.Ptr("s")}})
	apptest.Must(t, "hook", err)
	bug, _, err := rest.Issues.CreateLabel(ctx, "octo", "hello", github.CreateIssueLabelRequest{Name: "bug"})
	apptest.Must(t, "label", err)
	docs, _, err := rest.Issues.CreateLabel(ctx, "octo", "hello", github.CreateIssueLabelRequest{Name: "docs"})
	apptest.Must(t, "label", err)
	ms, _, err := rest.Issues.CreateMilestone(ctx, "octo", "hello", github.CreateMilestoneRequest{Title: "v1"})
	apptest.Must(t, "milestone", err)

	var created struct {
		CreateIssue struct {
			ClientMutationID string
			Issue            struct {
				ID     string
				Number int
				URL    string
				Labels struct{ Nodes []struct{ Name string } }
			}
		}
	}
	gqlData(t, env, token, `mutation($input: CreateIssueInput!) { createIssue(input: $input) { clientMutationId issue { id number url labels(first: 5) { nodes { name } } } } }`,
		map[string]any{"input": map[string]any{"repositoryId": wire.NodeID("R", hello.ID), "title": "Broken", "body": "It broke.",
			"labelIds": []string{bug.GetNodeID()}, "assigneeIds": []string{wire.NodeID("U", octo.ID)}, "milestoneId": ms.GetNodeID(),
			"clientMutationId": "c1"}}, &created)
	is, _, err := rest.Issues.Get(ctx, "octo", "hello", 1)
	apptest.Must(t, "REST issue", err)
	if c := created.CreateIssue; c.ClientMutationID != "c1" || c.Issue.ID != is.GetNodeID() || c.Issue.URL != is.GetHTMLURL() ||
		len(c.Issue.Labels.Nodes) != 1 || is.GetTitle() != "Broken" || is.GetBody() != "It broke." || len(is.Labels) != 1 ||
		len(is.Assignees) != 1 || is.GetMilestone().GetNumber() != ms.GetNumber() {
		t.Fatalf("createIssue: %+v\nREST: %+v", c, is)
	}
	id := is.GetNodeID()
	if got := eventsOf(t, env, token, 1); !slices.Equal(got, []string{"labeled", "assigned", "milestoned"}) {
		t.Errorf("events after createIssue: %v", got)
	}

	var out map[string]any
	gqlData(t, env, token, `mutation($id: ID!) { updateIssue(input: {id: $id, title: "Broken badly", milestoneId: null}) { issue { title milestone { title } } } }`,
		map[string]any{"id": id}, &out)
	gqlData(t, env, token, `mutation($id: ID!) { closeIssue(input: {issueId: $id, stateReason: NOT_PLANNED}) { issue { state stateReason closed } } }`,
		map[string]any{"id": id}, &out)
	if b, _ := json.Marshal(out); string(b) != `{"closeIssue":{"issue":{"closed":true,"state":"CLOSED","stateReason":"NOT_PLANNED"}}}` {
		t.Errorf("closeIssue: %s", b)
	}
	is, _, err = rest.Issues.Get(ctx, "octo", "hello", 1)
	apptest.Must(t, "REST issue", err)
	if is.GetTitle() != "Broken badly" || is.Milestone != nil || is.GetState() != "closed" || is.GetStateReason() != "not_planned" {
		t.Errorf("after update and close: %+v", is)
	}
	gqlData(t, env, token, `mutation($id: ID!) { reopenIssue(input: {issueId: $id}) { issue { state } } }`, map[string]any{"id": id}, &out)
	gqlData(t, env, token, `mutation($id: ID!) { addComment(input: {subjectId: $id, body: "Looking."}) { commentEdge { node { body url } } subject { id } } }`,
		map[string]any{"id": id}, &out)
	comments, _, err := rest.Issues.ListComments(ctx, "octo", "hello", 1, nil)
	apptest.Must(t, "comments", err)
	if b, _ := json.Marshal(out); len(comments) != 1 || string(b) != `{"addComment":{"commentEdge":{"node":{"body":"Looking.","url":"`+
		comments[0].GetHTMLURL()+`"}},"subject":{"id":"`+id+`"}}}` {
		t.Errorf("addComment: %s, REST %v", b, comments)
	}
	gqlData(t, env, token, `mutation($id: ID!, $labels: [ID!]!) { addLabelsToLabelable(input: {labelableId: $id, labelIds: $labels}) {
		labelable { ... on Issue { number } labels(first: 5) { nodes { name } } } } }`, map[string]any{"id": id, "labels": []string{docs.GetNodeID()}}, &out)
	if b, _ := json.Marshal(out); string(b) != `{"addLabelsToLabelable":{"labelable":{"labels":{"nodes":[{"name":"bug"},{"name":"docs"}]},"number":1}}}` {
		t.Errorf("addLabelsToLabelable: %s", b)
	}
	gqlData(t, env, token, `mutation($id: ID!, $labels: [ID!]!) { removeLabelsFromLabelable(input: {labelableId: $id, labelIds: $labels}) {
		labelable { labels(first: 5) { nodes { name } } } } }`, map[string]any{"id": id, "labels": []string{bug.GetNodeID()}}, &out)
	if b, _ := json.Marshal(out); string(b) != `{"removeLabelsFromLabelable":{"labelable":{"labels":{"nodes":[{"name":"docs"}]}}}}` {
		t.Errorf("removeLabelsFromLabelable: %s", b)
	}
	want := []string{"labeled", "assigned", "milestoned", "renamed", "demilestoned", "closed", "reopened", "labeled", "unlabeled"}
	if got := eventsOf(t, env, token, 1); !slices.Equal(got, want) {
		t.Errorf("events: %v, want %v", got, want)
	}
	rc.WaitFor(t, apptest.EventAction, "issues opened", "issues labeled", "issues assigned", "issues milestoned", "issues edited",
		"issues demilestoned", "issues closed", "issues reopened", "issue_comment created", "issues unlabeled")

	// A pull request takes comments and labels through the same mutations.
	pr := pushFeature(t, env, "hello", token)
	gqlData(t, env, token, `mutation($id: ID!, $labels: [ID!]!) { addLabelsToLabelable(input: {labelableId: $id, labelIds: $labels}) {
		labelable { ... on PullRequest { number } } } }`, map[string]any{"id": pr.GetNodeID(), "labels": []string{bug.GetNodeID()}}, &out)
	gqlData(t, env, token, `mutation($id: ID!) { addComment(input: {subjectId: $id, body: "LGTM"}) { subject { ... on PullRequest { number } } } }`,
		map[string]any{"id": pr.GetNodeID()}, &out)
	prIssue, _, err := rest.Issues.Get(ctx, "octo", "hello", pr.GetNumber())
	apptest.Must(t, "pull request's issue", err)
	if len(prIssue.Labels) != 1 || prIssue.GetComments() != 1 {
		t.Errorf("pull request: labels %v, %d comments", prIssue.Labels, prIssue.GetComments())
	}
	gqlData(t, env, token, `query($n: Int!) { repository(owner: "octo", name: "hello") { pullRequest(number: $n) { author { login }
		labels(first: 5) { nodes { name } } comments(last: 1) { totalCount nodes { body } } assignees(first: 5) { totalCount } milestone { title }
		projectCards(first: 5) { totalCount } } } }`, map[string]any{"n": pr.GetNumber()}, &out)
	if b, _ := json.Marshal(out); string(b) != `{"repository":{"pullRequest":{"assignees":{"totalCount":0},"author":{"login":"octo"},`+
		`"comments":{"nodes":[{"body":"LGTM"}],"totalCount":1},"labels":{"nodes":[{"name":"bug"}]},"milestone":null,"projectCards":{"totalCount":0}}}}` {
		t.Errorf("pull request's issue fields: %s", b)
	}
}

// TestIssueMutationAccess: a stranger opens issues on a public
// repository but may neither label nor close another's (FORBIDDEN); a
// private repository is NOT_FOUND to them; a fine-grained token reads
// and writes a private repository's issues only with Issues read and
// write (FORBIDDEN otherwise).
func TestIssueMutationAccess(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo, bob := env.User("octo"), env.User("bob")
	hello := env.Repo(octo, "hello")
	secret := env.Repo(octo, "secret", apptest.RepoOpts{Private: true})
	rest := env.Client(env.Token(octo, "repo"))
	bug, _, err := rest.Issues.CreateLabel(apptest.Ctx(), "octo", "hello", github.CreateIssueLabelRequest{Name: "bug"})
	apptest.Must(t, "label", err)
	mine, _, err := rest.Issues.Create(apptest.Ctx(), "octo", "hello", github.CreateIssueRequest{Title: "octo's"})
	apptest.Must(t, "issue", err)
	bobToken := env.Token(bob, "public_repo")

	var out map[string]any
	gqlData(t, env, bobToken, `mutation($repo: ID!, $bug: ID!) { createIssue(input: {repositoryId: $repo, title: "From bob", labelIds: [$bug]}) {
		issue { number viewerCanUpdate labels(first: 5) { totalCount } } } }`, map[string]any{"repo": wire.NodeID("R", hello.ID), "bug": bug.GetNodeID()}, &out)
	if b, _ := json.Marshal(out); string(b) != `{"createIssue":{"issue":{"labels":{"totalCount":0},"number":2,"viewerCanUpdate":true}}}` {
		t.Errorf("stranger's createIssue: %s (labels are a triager's)", b)
	}
	for name, q := range map[string]string{
		"close another's": `mutation($id: ID!) { closeIssue(input: {issueId: $id}) { issue { state } } }`,
		"label":           `mutation($id: ID!) { addLabelsToLabelable(input: {labelableId: $id, labelIds: ["` + bug.GetNodeID() + `"]}) { clientMutationId } }`,
	} {
		r := post(t, env, bobToken, q, map[string]any{"id": mine.GetNodeID()})
		if len(r.Errors) != 1 || r.Errors[0].Type != "FORBIDDEN" {
			t.Errorf("stranger %s: %+v, want FORBIDDEN", name, r)
		}
	}
	r := post(t, env, env.Token(bob, "repo"), `mutation($repo: ID!) { createIssue(input: {repositoryId: $repo, title: "x"}) { issue { id } } }`,
		map[string]any{"repo": wire.NodeID("R", secret.ID)})
	if len(r.Errors) != 1 || r.Errors[0].Type != "NOT_FOUND" {
		t.Errorf("stranger on a private repository: %+v, want NOT_FOUND", r)
	}

	const list = `{ repository(owner: "octo", name: "secret") { issues(first: 5) { totalCount } } }`
	const create = `mutation($repo: ID!) { createIssue(input: {repositoryId: $repo, title: "fine"}) { issue { number } } }`
	vars := map[string]any{"repo": wire.NodeID("R", secret.ID)}
	selected := []*repos.Repository{secret}
	metadata := env.FineGrainedToken(octo, octo, selected, "metadata:read")
	if r := post(t, env, metadata, list, nil); len(r.Errors) != 1 || r.Errors[0].Type != "FORBIDDEN" {
		t.Errorf("fine-grained without Issues, read: %+v, want FORBIDDEN", r)
	}
	reader := env.FineGrainedToken(octo, octo, selected, "issues:read")
	if r := post(t, env, reader, list, nil); len(r.Errors) != 0 {
		t.Errorf("fine-grained with Issues read: %+v", r)
	}
	if r := post(t, env, reader, create, vars); len(r.Errors) != 1 || r.Errors[0].Type != "FORBIDDEN" {
		t.Errorf("fine-grained with Issues read, write: %+v, want FORBIDDEN", r)
	}
	if r := post(t, env, env.FineGrainedToken(octo, octo, selected, "issues:write"), create, vars); len(r.Errors) != 0 {
		t.Errorf("fine-grained with Issues write: %+v", r)
	}
}

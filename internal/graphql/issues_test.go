package graphql_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-github/v92/github"
	"github.com/shurcooL/githubv4"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apptest"
	"forgeapi/internal/issues"
	"forgeapi/internal/repos"
)

// openIssue opens an issue through the server's service (REST's), as
// author, with the labels and assignees a triager gives.
func openIssue(t *testing.T, env *apptest.Env, repo *repos.Repository, author *accounts.Account, title string, labels, assignees []string) *issues.Issue {
	t.Helper()
	is, err := env.App.Issues.Create(env.Context(), repo, author, issues.NewIssue{Title: title, Body: "About " + title,
		Labels: labels, Assignees: assignees}, true)
	apptest.Must(t, "open "+title, err)
	return is
}

// TestIssuesConnection pages Repository.issues with the filters gh sends
// (states, labels, filterBy assignee, createdBy, mentioned, milestone)
// and orders, leaves pull requests out, and answers each issue's fields
// as REST shows them.
func TestIssuesConnection(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo, bob := env.User("octo"), env.User("bob")
	repo := env.Repo(octo, "hello")
	token := env.Token(octo, "repo")
	rest := env.Client(token)
	ms, _, err := rest.Issues.CreateMilestone(apptest.Ctx(), "octo", "hello", github.CreateMilestoneRequest{Title: "v1"})
	apptest.Must(t, "milestone", err)
	first := openIssue(t, env, repo, octo, "first", []string{"bug"}, []string{"octo"})
	openIssue(t, env, repo, bob, "second, for @octo", []string{"docs"}, nil)
	openIssue(t, env, repo, octo, "third", []string{"bug", "docs"}, nil)
	pushFeature(t, env, "hello", token) // pull request #4, not an issue
	_, _, err = rest.Issues.Update(apptest.Ctx(), "octo", "hello", 3, github.UpdateIssueRequest{State: github.Ptr("closed"), Milestone: github.Ptr(int(ms.GetNumber()))})
	apptest.Must(t, "close third", err)
	_, _, err = rest.Issues.CreateComment(apptest.Ctx(), "octo", "hello", 1, github.IssueCommentRequest{Body: "first comment"})
	apptest.Must(t, "comment", err)
	last, _, err := rest.Issues.CreateComment(apptest.Ctx(), "octo", "hello", 1, github.IssueCommentRequest{Body: "last comment"})
	apptest.Must(t, "comment", err)

	// Asked neither first nor last, a connection answers its
	// totalCount, as the platform's do.
	repoLabels, _, err := rest.Issues.ListLabels(apptest.Ctx(), "octo", "hello", &github.ListOptions{PerPage: 100})
	apptest.Must(t, "REST labels", err)
	assignees, _, err := rest.Issues.ListAssignees(apptest.Ctx(), "octo", "hello", nil)
	apptest.Must(t, "REST assignees", err)
	counts := post(t, env, token, `{ repository(owner: "octo", name: "hello") {
		open: issues(states: OPEN) { totalCount } all: issues { totalCount } labels { totalCount } milestones { totalCount }
		pullRequests { totalCount } assignableUsers { totalCount } mentionableUsers { totalCount } refs(refPrefix: "refs/heads/") { totalCount }
		branchProtectionRules { totalCount } releases { totalCount } deployments { totalCount } environments { totalCount }
		issue(number: 1) { comments { totalCount } labels { totalCount } assignees { totalCount } } } }`, nil)
	wantCounts := fmt.Sprintf(`{"open":{"totalCount":2},"all":{"totalCount":3},"labels":{"totalCount":%d},"milestones":{"totalCount":1},`+
		`"pullRequests":{"totalCount":1},"assignableUsers":{"totalCount":%d},"mentionableUsers":{"totalCount":%[2]d},"refs":{"totalCount":2},`+
		`"branchProtectionRules":{"totalCount":0},"releases":{"totalCount":0},"deployments":{"totalCount":0},"environments":{"totalCount":0},`+
		`"issue":{"comments":{"totalCount":2},"labels":{"totalCount":1},"assignees":{"totalCount":1}}}`, len(repoLabels), len(assignees))
	if len(counts.Errors) != 0 || string(counts.Data["repository"]) != wantCounts {
		t.Errorf("totalCount without first or last: %+v\n%s\nwant\n%s", counts.Errors, counts.Data["repository"], wantCounts)
	}
	var searchCounts map[string]any
	gqlData(t, env, token, `{ prs: search(query: "repo:octo/hello is:pr", type: ISSUE) { issueCount }
		issues: search(query: "repo:octo/hello is:issue", type: ISSUE) { issueCount }
		repos: search(query: "user:octo", type: REPOSITORY) { repositoryCount } }`, nil, &searchCounts)
	if b, _ := json.Marshal(searchCounts); string(b) != `{"issues":{"issueCount":3},"prs":{"issueCount":1},"repos":{"repositoryCount":1}}` {
		t.Errorf("search counts without first or last: %s", b)
	}

	numbers := func(filter string) []int {
		t.Helper()
		r := post(t, env, token, `{ repository(owner: "octo", name: "hello") { issues(first: 10, `+filter+`) { totalCount nodes { number } } } }`, nil)
		var got struct {
			Issues struct {
				TotalCount int
				Nodes      []struct{ Number int }
			}
		}
		if len(r.Errors) != 0 || json.Unmarshal(r.Data["repository"], &got) != nil {
			t.Fatalf("%s: %+v", filter, r)
		}
		out := []int{}
		for _, n := range got.Issues.Nodes {
			out = append(out, n.Number)
		}
		if got.Issues.TotalCount != len(out) {
			t.Errorf("%s: totalCount %d for %v", filter, got.Issues.TotalCount, out)
		}
		return out
	}
	for filter, want := range map[string][]int{
		`states: [OPEN, CLOSED]`: {1, 2, 3},
		`states: OPEN`:           {1, 2},
		`states: CLOSED`:         {3},
		`orderBy: {field: CREATED_AT, direction: DESC}`: {3, 2, 1},
		`labels: ["docs"]`:                                            {2, 3},
		`labels: ["bug", "docs"], states: OPEN`:                       {1, 2},
		`filterBy: {assignee: "octo"}`:                                {1},
		`filterBy: {assignee: "*"}`:                                   {1},
		`filterBy: {createdBy: "bob"}`:                                {2},
		`filterBy: {createdBy: "nobody"}`:                             {},
		`filterBy: {mentioned: "octo"}`:                               {2},
		`filterBy: {milestoneNumber: "1"}`:                            {3},
		`filterBy: {milestone: "none"}`:                               {1, 2},
		`filterBy: {milestone: "` + fmt.Sprint(ms.GetID()) + `"}`:     {3},
		`filterBy: {states: [OPEN], labels: ["bug"]}`:                 {1},
		`states: CLOSED, filterBy: {states: OPEN}`:                    {},
		`orderBy: {field: COMMENTS, direction: DESC}, states: [OPEN]`: {1, 2},
		`filterBy: {since: "2000-01-01T00:00:00Z"}, orderBy: {field: UPDATED_AT, direction: ASC}`: {2, 3, 1},
	} {
		if got := numbers(filter); !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", filter, got, want)
		}
	}

	// Paging as gh issue list does: first, after, pageInfo.
	type page struct {
		Repository struct {
			HasIssuesEnabled bool
			Issues           struct {
				TotalCount int
				Nodes      []struct{ Number int }
				PageInfo   struct {
					HasNextPage bool
					EndCursor   githubv4.String
				}
			} `graphql:"issues(first: 2, after: $after, states: [OPEN, CLOSED], orderBy: {field: CREATED_AT, direction: DESC})"`
		} `graphql:"repository(owner: \"octo\", name: \"hello\")"`
	}
	var got []int
	var after *githubv4.String
	for {
		var p page
		apptest.Must(t, "page", client(env, token).Query(context.Background(), &p, map[string]any{"after": after}))
		for _, n := range p.Repository.Issues.Nodes {
			got = append(got, n.Number)
		}
		if !p.Repository.Issues.PageInfo.HasNextPage {
			break
		}
		after = &p.Repository.Issues.PageInfo.EndCursor
	}
	if !slices.Equal(got, []int{3, 2, 1}) {
		t.Errorf("pages: %v", got)
	}

	// One issue's fields, as REST shows them.
	var q struct {
		Repository struct {
			Issue struct {
				ID                githubv4.ID
				DatabaseID        int64
				Number            int
				Title, Body       string
				State             githubv4.IssueState
				StateReason       *githubv4.IssueStateReason
				Closed, Locked    bool
				URL               githubv4.URI
				CreatedAt         githubv4.DateTime
				ClosedAt          *githubv4.DateTime
				ViewerCanUpdate   bool
				AuthorAssociation githubv4.CommentAuthorAssociation
				Author            struct {
					Login string
					User  struct{ ID githubv4.ID } `graphql:"... on User"`
				}
				Assignees struct {
					TotalCount int
					Nodes      []struct{ Login string }
				} `graphql:"assignees(first: 10)"`
				Labels struct {
					Nodes []struct {
						ID, Name, Color string
						URL             githubv4.URI
					}
				} `graphql:"labels(first: 10, orderBy: {field: NAME, direction: DESC})"`
				Milestone *struct {
					ID     githubv4.ID
					Number int
					Title  string
					State  githubv4.MilestoneState
				}
				Comments struct {
					TotalCount int
					Nodes      []struct {
						ID                githubv4.ID
						DatabaseID        int64
						Body              string
						URL               githubv4.URI
						ViewerDidAuthor   bool
						AuthorAssociation githubv4.CommentAuthorAssociation
						Author            struct{ Login string }
					}
				} `graphql:"comments(last: 1)"`
				ReactionGroups []struct {
					Content githubv4.ReactionContent
					Users   struct{ TotalCount int }
				}
				Repository struct{ NameWithOwner string }
			} `graphql:"issue(number: $number)"`
		} `graphql:"repository(owner: \"octo\", name: \"hello\")"`
	}
	apptest.Must(t, "issue 1", client(env, token).Query(context.Background(), &q, map[string]any{"number": githubv4.Int(1)}))
	restFirst, _, err := rest.Issues.Get(apptest.Ctx(), "octo", "hello", 1)
	apptest.Must(t, "REST issue", err)
	is := q.Repository.Issue
	if is.ID != restFirst.GetNodeID() || is.DatabaseID != first.ID || is.URL.String() != restFirst.GetHTMLURL() || is.Title != "first" ||
		is.State != githubv4.IssueStateOpen || is.StateReason != nil || is.Closed || is.ClosedAt != nil || !is.ViewerCanUpdate ||
		is.AuthorAssociation != githubv4.CommentAuthorAssociationOwner || is.Author.Login != "octo" || is.Author.User.ID != restFirst.GetUser().GetNodeID() ||
		is.Assignees.TotalCount != 1 || is.Assignees.Nodes[0].Login != "octo" || len(is.Labels.Nodes) != 1 ||
		is.Labels.Nodes[0].ID != restFirst.Labels[0].GetNodeID() || is.Labels.Nodes[0].URL.String() != env.URL+"/octo/hello/labels/bug" ||
		is.Milestone != nil || is.Comments.TotalCount != 2 || len(is.Comments.Nodes) != 1 || is.Comments.Nodes[0].Body != "last comment" ||
		is.Comments.Nodes[0].ID != last.GetNodeID() || is.Comments.Nodes[0].URL.String() != last.GetHTMLURL() || !is.Comments.Nodes[0].ViewerDidAuthor ||
		len(is.ReactionGroups) != 8 || is.ReactionGroups[0].Users.TotalCount != 0 || is.Repository.NameWithOwner != "octo/hello" ||
		!is.CreatedAt.Equal(restFirst.GetCreatedAt().Time) {
		t.Errorf("issue 1: %+v\nREST: %+v", is, restFirst)
	}
	apptest.Must(t, "issue 3", client(env, token).Query(context.Background(), &q, map[string]any{"number": githubv4.Int(3)}))
	if is := q.Repository.Issue; is.State != githubv4.IssueStateClosed || is.StateReason == nil || *is.StateReason != githubv4.IssueStateReasonCompleted ||
		is.ClosedAt == nil || is.Milestone == nil || is.Milestone.Title != "v1" || is.Milestone.ID != ms.GetNodeID() || is.Labels.Nodes[0].Name != "docs" {
		t.Errorf("issue 3: %+v", is)
	}

	// issueOrPullRequest answers either; issue(number:) only issues.
	r := post(t, env, token, `{ repository(owner: "octo", name: "hello") { a: issueOrPullRequest(number: 4) { __typename ... on PullRequest { number } }
		b: issueOrPullRequest(number: 1) { __typename } } }`, nil)
	if len(r.Errors) != 0 || string(r.Data["repository"]) != `{"a":{"__typename":"PullRequest","number":4},"b":{"__typename":"Issue"}}` {
		t.Errorf("issueOrPullRequest: %+v %s", r, r.Data["repository"])
	}
	// gh's form: the same field of another enum type in each fragment,
	// which the platform accepts.
	r = post(t, env, token, `query($n: Int!) { repository(owner: "octo", name: "hello") { a: issueOrPullRequest(number: 4) { ...f } b: issueOrPullRequest(number: $n) { ...f } } }
		fragment f on IssueOrPullRequest { ... on Issue { number state } ... on PullRequest { number state } }`, map[string]any{"n": 3})
	if len(r.Errors) != 0 || string(r.Data["repository"]) != `{"a":{"number":4,"state":"OPEN"},"b":{"number":3,"state":"CLOSED"}}` {
		t.Errorf("fields of both types: %+v %s", r, r.Data["repository"])
	}
	r = post(t, env, token, `{ repository(owner: "octo", name: "hello") { issue(number: 4) { id } } }`, nil)
	if len(r.Errors) != 1 || r.Errors[0].Type != "NOT_FOUND" || r.Errors[0].Message != "Could not resolve to an Issue with the number of 4." {
		t.Errorf("issue(number: pull request): %+v", r)
	}

	// Labels and milestones of the repository.
	r = post(t, env, token, `{ repository(owner: "octo", name: "hello") { labels(first: 10, orderBy: {field: NAME, direction: ASC}) { totalCount nodes { name color isDefault } }
		docs: labels(first: 10, query: "DOC") { nodes { name } } label(name: "BUG") { name } none: label(name: "nope") { name }
		milestones(first: 10, states: [OPEN]) { totalCount nodes { number title state closed dueOn url } } milestone(number: 1) { title } } }`, nil)
	want := `{"labels":{"totalCount":2,"nodes":[{"name":"bug","color":"ededed","isDefault":false},{"name":"docs","color":"ededed","isDefault":false}]},` +
		`"docs":{"nodes":[{"name":"docs"}]},"label":{"name":"bug"},"none":null,` +
		`"milestones":{"totalCount":1,"nodes":[{"number":1,"title":"v1","state":"OPEN","closed":false,"dueOn":null,"url":"` + ms.GetHTMLURL() + `"}]},"milestone":{"title":"v1"}}`
	if len(r.Errors) != 0 || string(r.Data["repository"]) != want {
		t.Errorf("labels and milestones: %+v\n%s\nwant %s", r.Errors, r.Data["repository"], want)
	}

	// node(id:) resolves each new type.
	for _, id := range []string{restFirst.GetNodeID(), restFirst.Labels[0].GetNodeID(), ms.GetNodeID(), last.GetNodeID()} {
		r := post(t, env, token, `query($id: ID!) { node(id: $id) { id __typename } }`, map[string]any{"id": id})
		if len(r.Errors) != 0 || !json.Valid(r.Data["node"]) || !containsID(r.Data["node"], id) {
			t.Errorf("node(%s): %+v %s", id, r, r.Data["node"])
		}
	}
}

// containsID reports whether the node's JSON has that id.
func containsID(raw json.RawMessage, id string) bool {
	var n struct{ ID string }
	return json.Unmarshal(raw, &n) == nil && n.ID == id
}

// TestHundredIssuesWithLabels reads a page of 100 issues, each by its
// own author with labels and an assignee, and checks every one.
func TestHundredIssuesWithLabels(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo := env.User("octo")
	repo := env.Repo(octo, "big")
	for i := range 100 {
		author := env.User(fmt.Sprintf("user%d", i))
		openIssue(t, env, repo, author, fmt.Sprintf("issue %d", i), []string{"bug", fmt.Sprintf("l%d", i%5)}, []string{"octo"})
	}
	r := post(t, env, env.Token(octo, "repo"), `{ repository(owner: "octo", name: "big") { issues(first: 100) { totalCount
		nodes { number title author { login } authorAssociation assignees(first: 5) { nodes { login } } labels(first: 5) { nodes { name } } } } } }`, nil)
	var got struct {
		Issues struct {
			TotalCount int
			Nodes      []struct {
				Number, Title     any
				Author            struct{ Login string }
				AuthorAssociation string
				Assignees         struct{ Nodes []struct{ Login string } }
				Labels            struct{ Nodes []struct{ Name string } }
			}
		}
	}
	if len(r.Errors) != 0 || json.Unmarshal(r.Data["repository"], &got) != nil || got.Issues.TotalCount != 100 || len(got.Issues.Nodes) != 100 {
		t.Fatalf("page: %+v", r.Errors)
	}
	for i, n := range got.Issues.Nodes {
		if n.Author.Login != fmt.Sprintf("user%d", i) || n.AuthorAssociation != "NONE" || len(n.Assignees.Nodes) != 1 || n.Assignees.Nodes[0].Login != "octo" ||
			len(n.Labels.Nodes) != 2 || n.Labels.Nodes[0].Name != "bug" || n.Labels.Nodes[1].Name != fmt.Sprintf("l%d", i%5) {
			t.Fatalf("issue %d: %+v", i+1, n)
		}
	}
}

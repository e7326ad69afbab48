package graphql_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"
	"github.com/shurcooL/githubv4"

	"forgeapi/internal/apptest"
	"forgeapi/internal/repos"
	"forgeapi/internal/wire"
)

// pushBranches pushes main and one branch a commit ahead of it per name
// to octo's repository, and opens a pull request of each into main, in
// order (numbers 1, 2, ...).
func pushBranches(t *testing.T, env *apptest.Env, repo, token string, names ...string) string {
	t.Helper()
	dir := apptest.WorkTree(t, map[string]string{"README.md": "# hello\n"})
	remote := env.GitURL("octo", repo, "octo", token)
	apptest.Git(t, dir, "push", "-q", remote, "main")
	for _, name := range names {
		apptest.Git(t, dir, "checkout", "-q", "-b", name, "main")
		apptest.Commit(t, dir, "Change "+name+"\n\nThe body of "+name+".", map[string]string{name + ".txt": "new\nlines\n"})
	}
	apptest.Git(t, dir, append([]string{"push", "-q", remote}, names...)...)
	for _, name := range names {
		_, _, err := env.Client(token).PullRequests.Create(apptest.Ctx(), "octo", repo, github.CreatePullRequest{
			Title: github.Ptr("Pull " + name), Head: name, Base: "main", Body: github.Ptr("About " + name)})
		apptest.Must(t, "open "+name, err)
	}
	return dir
}

// TestPullRequestsConnection pages Repository.pullRequests as gh pr list
// does and filters it by states, labels and head; a page of 30 pull
// requests answers their labels, assignees and authors.
func TestPullRequestsConnection(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo := env.User("octo")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo")
	var names []string
	for i := 1; i <= 32; i++ {
		names = append(names, fmt.Sprintf("f%d", i))
	}
	pushBranches(t, env, "hello", token, names...)
	rest := env.Client(token)
	ctx := apptest.Ctx()
	for n := 2; n <= 32; n += 2 {
		_, _, err := rest.Issues.AddLabelsToIssue(ctx, "octo", "hello", n, []string{"bug"})
		apptest.Must(t, "label", err)
	}
	_, _, err := rest.Issues.AddAssignees(ctx, "octo", "hello", 3, []string{"octo"})
	apptest.Must(t, "assign", err)
	_, _, err = rest.PullRequests.Edit(ctx, "octo", "hello", 5, &github.PullRequest{State: github.Ptr("closed")})
	apptest.Must(t, "close", err)
	_, _, err = rest.PullRequests.Merge(ctx, "octo", "hello", 4, "", &github.PullRequestOptions{MergeMethod: "squash"})
	apptest.Must(t, "merge", err)

	numbers := func(query string, vars map[string]any) ([]int, int) {
		t.Helper()
		r := post(t, env, token, query, vars)
		var got struct {
			PullRequests struct {
				TotalCount int
				Nodes      []struct{ Number int }
			}
		}
		if len(r.Errors) != 0 || json.Unmarshal(r.Data["repository"], &got) != nil {
			t.Fatalf("%s: %+v", query, r)
		}
		var out []int
		for _, n := range got.PullRequests.Nodes {
			out = append(out, n.Number)
		}
		return out, got.PullRequests.TotalCount
	}
	for q, want := range map[string][]int{
		`states: MERGED`:           {4},
		`states: CLOSED`:           {5},
		`states: [CLOSED, MERGED]`: {4, 5},
		`labels: ["BUG"], last: 2`: {30, 32},
		`headRefName: "f3"`:        {3},
		`baseRefName: "nope"`:      nil,
		`orderBy: {field: CREATED_AT, direction: DESC}, states: OPEN, first: 3`: {32, 31, 30},
	} {
		args := q
		if !strings.Contains(q, "first") && !strings.Contains(q, "last") {
			args += ", first: 100"
		}
		got, _ := numbers(`{ repository(owner: "octo", name: "hello") { pullRequests(`+args+`) { totalCount nodes { number } } } }`, nil)
		if !slices.Equal(got, want) {
			t.Errorf("pullRequests(%s): %v, want %v", q, got, want)
		}
	}
	if _, total := numbers(`{ repository(owner: "octo", name: "hello") { pullRequests(states: OPEN) { totalCount } } }`, nil); total != 30 {
		t.Errorf("open totalCount without paging: %d, want 30", total)
	}

	// gh pr list's query, paged as gh pages it.
	type page struct {
		Repository struct {
			PullRequests struct {
				TotalCount int
				Nodes      []struct {
					Number      int
					Title       string
					State       githubv4.PullRequestState
					HeadRefName string
					Author      struct{ Login string }
					Labels      struct {
						Nodes []struct{ Name, Color string }
					} `graphql:"labels(first: 100)"`
					Assignees struct {
						TotalCount int
						Nodes      []struct{ Login string }
					} `graphql:"assignees(first: 100)"`
					HeadRepositoryOwner struct{ Login string }
					IsCrossRepository   bool
				}
				PageInfo struct {
					HasNextPage bool
					EndCursor   githubv4.String
				}
			} `graphql:"pullRequests(states: $states, first: $limit, after: $after, orderBy: {field: CREATED_AT, direction: DESC})"`
		} `graphql:"repository(owner: \"octo\", name: \"hello\")"`
	}
	var seen []int
	var after *githubv4.String
	for {
		var p page
		apptest.Must(t, "page", client(env, token).Query(context.Background(), &p, map[string]any{
			"states": []githubv4.PullRequestState{githubv4.PullRequestStateOpen}, "limit": githubv4.Int(30), "after": after}))
		conn := p.Repository.PullRequests
		for _, n := range conn.Nodes {
			seen = append(seen, n.Number)
			labelled := len(n.Labels.Nodes) == 1 && n.Labels.Nodes[0].Name == "bug"
			if n.Title != fmt.Sprintf("Pull f%d", n.Number) || n.State != githubv4.PullRequestStateOpen || n.Author.Login != "octo" ||
				n.HeadRefName != fmt.Sprintf("f%d", n.Number) || labelled != (n.Number%2 == 0) || (n.Assignees.TotalCount == 1) != (n.Number == 3) ||
				n.HeadRepositoryOwner.Login != "octo" || n.IsCrossRepository {
				t.Errorf("pull request %d: %+v", n.Number, n)
			}
		}
		if conn.TotalCount != 30 || !conn.PageInfo.HasNextPage {
			break
		}
		after = &conn.PageInfo.EndCursor
	}
	if len(seen) != 30 || seen[0] != 32 || seen[29] != 1 || slices.Contains(seen, 4) || slices.Contains(seen, 5) {
		t.Errorf("paged open pull requests: %v", seen)
	}
}

// TestPullRequestFields: a merged pull request's fields against REST's,
// its commits, files, status check rollup, reviews and review decision,
// and node(id:) of a review.
func TestPullRequestFields(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo, bob := env.User("octo"), env.User("bob")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo")
	pushBranches(t, env, "hello", token, "feature")
	rest := env.Client(token)
	ctx := apptest.Ctx()
	restPR, _, err := rest.PullRequests.Get(ctx, "octo", "hello", 1)
	apptest.Must(t, "REST get", err)
	head := restPR.GetHead().GetSHA()
	for _, st := range []string{"pending", "failure"} {
		_, _, err = rest.Repositories.CreateStatus(ctx, "octo", "hello", head, github.RepoStatus{State: github.Ptr(st), Context: github.Ptr("ci"),
			Description: github.Ptr("The build"), TargetURL: github.Ptr("https://ci.example/" + st)})
		apptest.Must(t, "status", err)
	}
	bobRest := env.Client(env.Token(bob, "public_repo"))
	review, _, err := bobRest.PullRequests.CreateReview(ctx, "octo", "hello", 1, &github.PullRequestReviewRequest{Event: github.Ptr("REQUEST_CHANGES"), Body: github.Ptr("Fix it.")})
	apptest.Must(t, "review", err)

	const q = `query($n: Int!) { repository(owner: "octo", name: "hello") { pullRequest(number: $n) {
		state mergeable mergeStateStatus reviewDecision headRefOid baseRefOid additions deletions changedFiles createdAt
		author { login ... on User { id name } } headRepository { name } headRepositoryOwner { login } isCrossRepository
		commits(first: 10) { totalCount nodes { commit { oid messageHeadline messageBody authors(first: 10) { nodes { name email user { login } } } } } }
		files(first: 10) { totalCount nodes { path additions deletions } }
		reviews(first: 10) { totalCount nodes { id author { login } state body commit { oid } } }
		latestReviews(first: 10) { nodes { author { login } state } }
		statusCheckRollup { state contexts(first: 10) { nodes { __typename ... on StatusContext { context state targetUrl description } ... on CheckRun { name } } } }
		projectCards(first: 10) { totalCount }
		reactionGroups { content users { totalCount } }
	} } }`
	r := post(t, env, token, q, map[string]any{"n": 1})
	var got struct {
		PullRequest struct {
			State, Mergeable, MergeStateStatus, HeadRefOid, BaseRefOid, CreatedAt string
			ReviewDecision                                                        *string
			Additions, Deletions, ChangedFiles                                    int
			Author                                                                struct{ Login, ID string }
			HeadRepository                                                        struct{ Name string }
			IsCrossRepository                                                     bool
			Commits                                                               struct {
				TotalCount int
				Nodes      []struct {
					Commit struct {
						Oid, MessageHeadline, MessageBody string
					}
				}
			}
			Files struct {
				TotalCount int
				Nodes      []struct {
					Path      string
					Additions int
				}
			}
			Reviews struct {
				Nodes []struct{ ID, State, Body string }
			}
			StatusCheckRollup struct {
				State    string
				Contexts struct {
					Nodes []map[string]any
				}
			}
			ReactionGroups []struct{ Content string }
		}
	}
	if len(r.Errors) != 0 || json.Unmarshal(r.Data["repository"], &got) != nil {
		t.Fatalf("fields: %+v", r)
	}
	p := got.PullRequest
	if p.State != "OPEN" || p.HeadRefOid != head || p.BaseRefOid != restPR.GetBase().GetSHA() || p.Additions != 2 || p.Deletions != 0 ||
		p.ChangedFiles != 1 || p.Author.Login != "octo" || p.Author.ID != wire.NodeID("U", octo.ID) || p.HeadRepository.Name != "hello" ||
		p.IsCrossRepository || p.ReviewDecision == nil || *p.ReviewDecision != "CHANGES_REQUESTED" || len(p.ReactionGroups) != 8 {
		t.Errorf("pull request: %+v", p)
	}
	if p.Commits.TotalCount != 1 || len(p.Commits.Nodes) != 1 || p.Commits.Nodes[0].Commit.Oid != head ||
		p.Commits.Nodes[0].Commit.MessageHeadline != "Change feature" || p.Commits.Nodes[0].Commit.MessageBody != "The body of feature." {
		t.Errorf("commits: %+v", p.Commits)
	}
	if p.Files.TotalCount != 1 || p.Files.Nodes[0].Path != "feature.txt" || p.Files.Nodes[0].Additions != 2 {
		t.Errorf("files: %+v", p.Files)
	}
	if len(p.Reviews.Nodes) != 1 || p.Reviews.Nodes[0].ID != review.GetNodeID() || p.Reviews.Nodes[0].State != "CHANGES_REQUESTED" {
		t.Errorf("reviews: %+v", p.Reviews)
	}
	want := map[string]any{"__typename": "StatusContext", "context": "ci", "state": "FAILURE", "targetUrl": "https://ci.example/failure", "description": "The build"}
	if p.StatusCheckRollup.State != "FAILURE" || len(p.StatusCheckRollup.Contexts.Nodes) != 1 || fmt.Sprint(p.StatusCheckRollup.Contexts.Nodes[0]) != fmt.Sprint(want) {
		t.Errorf("statusCheckRollup: %+v", p.StatusCheckRollup)
	}

	r = post(t, env, token, `query($id: ID!) { node(id: $id) { __typename ... on PullRequestReview { state pullRequest { number } } } }`,
		map[string]any{"id": review.GetNodeID()})
	if len(r.Errors) != 0 || string(r.Data["node"]) != `{"__typename":"PullRequestReview","state":"CHANGES_REQUESTED","pullRequest":{"number":1}}` {
		t.Errorf("node of a review: %+v %s", r, r.Data["node"])
	}
	r = post(t, env, token, `{ repository(owner: "octo", name: "hello") { pullRequest(number: 1) { commits(first: 1) { totalCount } } } }`, nil)
	if len(r.Errors) != 0 {
		t.Errorf("commits(first: 1): %+v", r)
	}
	r = post(t, env, token, `{ repository(owner: "octo", name: "hello") { pullRequest(number: 1) { commits { nodes { commit { oid } } } } } }`, nil)
	if len(r.Errors) != 1 || r.Errors[0].Type != "MISSING_PAGINATION_BOUNDARIES" {
		t.Errorf("commits nodes without first or last: %+v, want MISSING_PAGINATION_BOUNDARIES", r)
	}
}

// mutate posts a mutation and fails the test on any error.
func mutate(t *testing.T, env *apptest.Env, token, query string, input map[string]any) json.RawMessage {
	t.Helper()
	r := post(t, env, token, query, map[string]any{"input": input})
	if len(r.Errors) != 0 {
		t.Fatalf("%s: %+v", query, r.Errors)
	}
	for _, v := range r.Data {
		return v
	}
	return nil
}

// TestPullRequestMutations: each mutation changes what REST shows, and
// is refused as REST refuses it.
func TestPullRequestMutations(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo, bob := env.User("octo"), env.User("bob")
	hello := env.Repo(octo, "hello")
	token := env.Token(octo, "repo")
	pushBranches(t, env, "hello", token, "one", "two")
	rest := env.Client(token)
	ctx := apptest.Ctx()
	get := func(n int) *github.PullRequest {
		pr, _, err := rest.PullRequests.Get(ctx, "octo", "hello", n)
		apptest.Must(t, "REST get", err)
		return pr
	}
	inv, _, err := rest.Repositories.AddCollaborator(ctx, "octo", "hello", "bob", &github.RepositoryAddCollaboratorOptions{Permission: "pull"})
	apptest.Must(t, "invite", err)
	bobToken := env.Token(bob, "repo")
	_, err = env.Client(bobToken).Users.AcceptInvitation(ctx, inv.GetID())
	apptest.Must(t, "accept", err)
	label, _, err := rest.Issues.CreateLabel(ctx, "octo", "hello", github.CreateIssueLabelRequest{Name: "bug", Color: github.Ptr("d73a4a")})
	apptest.Must(t, "label", err)

	// createPullRequest of a new branch.
	dir := apptest.WorkTree(t, map[string]string{"README.md": "# hello\n"})
	apptest.Git(t, dir, "checkout", "-q", "-b", "three")
	apptest.Commit(t, dir, "Three", map[string]string{"three.txt": "3\n"})
	apptest.Git(t, dir, "push", "-q", env.GitURL("octo", "hello", "octo", token), "three")
	out := mutate(t, env, token, `mutation($input: CreatePullRequestInput!) { createPullRequest(input: $input) { pullRequest { number url isDraft } clientMutationId } }`,
		map[string]any{"repositoryId": wire.NodeID("R", hello.ID), "headRefName": "three", "baseRefName": "main", "title": "Three", "body": "Adds three.",
			"draft": true, "clientMutationId": "c1"})
	if string(out) != `{"pullRequest":{"number":3,"url":"`+env.URL+`/octo/hello/pull/3","isDraft":true},"clientMutationId":"c1"}` {
		t.Errorf("createPullRequest: %s", out)
	}
	if pr := get(3); pr.GetTitle() != "Three" || pr.GetBody() != "Adds three." || !pr.GetDraft() {
		t.Errorf("created: %+v", pr)
	}
	r := post(t, env, token, `mutation($input: CreatePullRequestInput!) { createPullRequest(input: $input) { pullRequest { number } } }`,
		map[string]any{"input": map[string]any{"repositoryId": wire.NodeID("R", hello.ID), "headRefName": "three", "baseRefName": "main", "title": "Again"}})
	if len(r.Errors) != 1 || r.Errors[0].Type != "UNPROCESSABLE" {
		t.Errorf("a second pull request of the same head: %+v, want UNPROCESSABLE", r)
	}

	// updatePullRequest: title, labels, assignees.
	one := get(1).GetNodeID()
	mutate(t, env, token, `mutation($input: UpdatePullRequestInput!) { updatePullRequest(input: $input) { pullRequest { title } } }`,
		map[string]any{"pullRequestId": one, "title": "First", "labelIds": []string{label.NodeID}, "assigneeIds": []string{wire.NodeID("U", octo.ID)}})
	if pr := get(1); pr.GetTitle() != "First" || len(pr.Labels) != 1 || pr.Labels[0].Name != "bug" || len(pr.Assignees) != 1 {
		t.Errorf("updatePullRequest: %+v", pr)
	}

	// requestReviews, then bob's pending review submitted.
	mutate(t, env, token, `mutation($input: RequestReviewsInput!) { requestReviews(input: $input) { pullRequest { reviewRequests(first: 5) { totalCount } } } }`,
		map[string]any{"pullRequestId": one, "userIds": []string{wire.NodeID("U", bob.ID)}})
	if pr := get(1); len(pr.RequestedReviewers) != 1 || pr.RequestedReviewers[0].GetLogin() != "bob" {
		t.Errorf("requestReviews: %+v", pr.RequestedReviewers)
	}
	out = mutate(t, env, bobToken, `mutation($input: AddPullRequestReviewInput!) { addPullRequestReview(input: $input) { pullRequestReview { id state } } }`,
		map[string]any{"pullRequestId": one, "body": "Hmm."})
	var added struct{ PullRequestReview struct{ ID, State string } }
	if json.Unmarshal(out, &added) != nil || added.PullRequestReview.State != "PENDING" {
		t.Errorf("addPullRequestReview without event: %s", out)
	}
	mutate(t, env, bobToken, `mutation($input: SubmitPullRequestReviewInput!) { submitPullRequestReview(input: $input) { pullRequestReview { state } } }`,
		map[string]any{"pullRequestReviewId": added.PullRequestReview.ID, "event": "APPROVE"})
	reviews, _, err := rest.PullRequests.ListReviews(ctx, "octo", "hello", 1, nil)
	apptest.Must(t, "reviews", err)
	if len(reviews) != 1 || reviews[0].GetState() != "APPROVED" || reviews[0].GetNodeID() != added.PullRequestReview.ID {
		t.Errorf("submitPullRequestReview: %+v", reviews)
	}

	// closePullRequest, reopenPullRequest, mergePullRequest.
	two := get(2).GetNodeID()
	for _, m := range []struct{ mutation, state string }{{"closePullRequest", "CLOSED"}, {"reopenPullRequest", "OPEN"}} {
		out = mutate(t, env, token, fmt.Sprintf(`mutation($input: %sInput!) { %s(input: $input) { pullRequest { state } } }`,
			strings.ToUpper(m.mutation[:1])+m.mutation[1:], m.mutation), map[string]any{"pullRequestId": two})
		if string(out) != `{"pullRequest":{"state":"`+m.state+`"}}` {
			t.Errorf("%s: %s", m.mutation, out)
		}
	}
	r = post(t, env, bobToken, `mutation($input: MergePullRequestInput!) { mergePullRequest(input: $input) { pullRequest { state } } }`,
		map[string]any{"input": map[string]any{"pullRequestId": two}})
	if len(r.Errors) != 1 || r.Errors[0].Type != "FORBIDDEN" || get(2).GetMerged() {
		t.Errorf("merge by a reader: %+v, want FORBIDDEN", r)
	}
	out = mutate(t, env, token, `mutation($input: MergePullRequestInput!) { mergePullRequest(input: $input) { pullRequest { state merged mergedBy { login } mergeCommit { oid } } } }`,
		map[string]any{"pullRequestId": two, "mergeMethod": "SQUASH", "commitHeadline": "Two, squashed"})
	if pr := get(2); !pr.GetMerged() || string(out) != `{"pullRequest":{"state":"MERGED","merged":true,"mergedBy":{"login":"octo"},"mergeCommit":{"oid":"`+pr.GetMergeCommitSHA()+`"}}}` {
		t.Errorf("mergePullRequest: %s", out)
	}

	// A fine-grained token that reads pull requests may not change them;
	// one without Pull requests does not read them.
	readOnly := env.FineGrainedToken(octo, octo, []*repos.Repository{hello}, "pull_requests:read")
	noContents := env.FineGrainedToken(octo, octo, []*repos.Repository{hello}, "pull_requests:write")
	r = post(t, env, noContents, `mutation($input: MergePullRequestInput!) { mergePullRequest(input: $input) { pullRequest { state } } }`,
		map[string]any{"input": map[string]any{"pullRequestId": one}})
	if len(r.Errors) != 1 || r.Errors[0].Type != "FORBIDDEN" || get(1).GetMerged() {
		t.Errorf("merge without Contents write: %+v, want FORBIDDEN", r)
	}
	r = post(t, env, readOnly, `mutation($input: ClosePullRequestInput!) { closePullRequest(input: $input) { pullRequest { state } } }`,
		map[string]any{"input": map[string]any{"pullRequestId": one}})
	if len(r.Errors) != 1 || r.Errors[0].Type != "FORBIDDEN" || get(1).GetState() != "open" {
		t.Errorf("close with Pull requests read: %+v, want FORBIDDEN", r)
	}
	private := env.Repo(octo, "secret", apptest.RepoOpts{Private: true})
	noPulls := env.FineGrainedToken(octo, octo, []*repos.Repository{private}, "contents:read")
	r = post(t, env, noPulls, `{ repository(owner: "octo", name: "secret") { pullRequests(first: 1) { totalCount } } }`, nil)
	if len(r.Errors) != 1 || r.Errors[0].Type != "FORBIDDEN" {
		t.Errorf("pullRequests without Pull requests read: %+v, want FORBIDDEN", r)
	}
	r = post(t, env, env.Token(bob, "repo"), `{ repository(owner: "octo", name: "secret") { pullRequests(first: 1) { totalCount } } }`, nil)
	if len(r.Errors) != 1 || r.Errors[0].Type != "NOT_FOUND" {
		t.Errorf("pullRequests of a private repository to a stranger: %+v, want NOT_FOUND", r)
	}
}

// TestSearchPullRequests: search(type: ISSUE) finds one repository's
// pull requests by qualifiers, and refuses what it cannot search.
func TestSearchPullRequests(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo := env.User("octo")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo")
	pushBranches(t, env, "hello", token, "alpha", "beta")
	const q = `query($q: String!) { search(query: $q, type: ISSUE, first: 10) { issueCount nodes { ... on PullRequest { number } } } }`
	for query, want := range map[string]string{
		"repo:octo/hello is:pr is:open author:@me":        `{"issueCount":2,"nodes":[{"number":2},{"number":1}]}`,
		"repo:octo/hello is:pr beta":                      `{"issueCount":1,"nodes":[{"number":2}]}`,
		"repo:octo/hello is:pr sort:created-asc":          `{"issueCount":2,"nodes":[{"number":1},{"number":2}]}`,
		"repo:octo/hello state:open review-requested:bob": `{"issueCount":0,"nodes":[]}`,
		"repo:octo/nothing is:pr":                         `{"issueCount":0,"nodes":[]}`,
	} {
		r := post(t, env, token, q, map[string]any{"q": query})
		if len(r.Errors) != 0 || string(r.Data["search"]) != want {
			t.Errorf("%s: %+v %s, want %s", query, r.Errors, r.Data["search"], want)
		}
	}
	// Any other search runs across repositories, as REST's search/issues.
	_, _, err := env.Client(token).Issues.Create(apptest.Ctx(), "octo", "hello", github.CreateIssueRequest{Title: "A bug"})
	apptest.Must(t, "issue", err)
	const both = `query($q: String!) { search(query: $q, type: ISSUE, first: 10) { issueCount
		nodes { __typename ... on PullRequest { number } ... on Issue { number title } } } }`
	for query, want := range map[string]string{
		"is:pr author:octo sort:created-asc": `{"issueCount":2,"nodes":[{"__typename":"PullRequest","number":1},{"__typename":"PullRequest","number":2}]}`,
		"repo:octo/hello is:issue":           `{"issueCount":1,"nodes":[{"__typename":"Issue","number":3,"title":"A bug"}]}`,
		"bug user:octo":                      `{"issueCount":1,"nodes":[{"__typename":"Issue","number":3,"title":"A bug"}]}`,
		"repo:octo/hello is:pr comments:>3":  `{"issueCount":0,"nodes":[]}`,
	} {
		r := post(t, env, token, both, map[string]any{"q": query})
		if len(r.Errors) != 0 || string(r.Data["search"]) != want {
			t.Errorf("%s: %+v %s, want %s", query, r.Errors, r.Data["search"], want)
		}
	}
	for _, query := range []string{"", "created:yesterday"} {
		if r := post(t, env, token, q, map[string]any{"q": query}); len(r.Errors) != 1 {
			t.Errorf("%q: %+v, want an error", query, r)
		}
	}
}

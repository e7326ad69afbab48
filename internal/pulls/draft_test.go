package pulls_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/repos"
	"forgeapi/internal/testwait"
	"forgeapi/internal/webhooks"
)

// graphqlResult is a GraphQL response: data by root field, and errors.
type graphqlResult struct {
	Data   map[string]json.RawMessage `json:"data"`
	Errors []struct {
		Type    string `json:"type"`
		Message string `json:"message"`
		Path    []any  `json:"path"`
	} `json:"errors"`
}

// graphql posts a query with variables to /api/graphql as gh does and
// decodes the answer, which is always HTTP 200.
func graphql(t *testing.T, env *apptest.Env, token, query string, vars map[string]any) graphqlResult {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	resp, out := env.DoJSON("POST", "/api/graphql", token, string(body))
	var r graphqlResult
	if resp.StatusCode != http.StatusOK || json.Unmarshal(out, &r) != nil {
		t.Fatalf("graphql %q: %d %s", query, resp.StatusCode, out)
	}
	return r
}

// waitMergeableState polls the pull request until its mergeable_state is
// want.
func waitMergeableState(t *testing.T, c *github.Client, number int, want string) *github.PullRequest {
	t.Helper()
	var pr *github.PullRequest
	testwait.For(t, fmt.Sprintf("pull request %d's mergeable_state %q", number, want), func() error {
		var err error
		pr, _, err = c.PullRequests.Get(apptest.Ctx(), "octo", "hello", number)
		apptest.Must(t, "get pull request", err)
		if pr.GetMergeableState() != want {
			return fmt.Errorf("mergeable_state %q", pr.GetMergeableState())
		}
		return nil
	})
	return pr
}

// TestDraftThroughGraphQL: a draft pull request (REST draft: true) is
// marked ready for review by a maintainer through the GraphQL mutation
// as gh sends it (input as a variable), converted back to draft by its
// author who only reads the repository (id inline), REST shows draft and
// mergeable_state follow, the hook receives ready_for_review and
// converted_to_draft (signed, valid against the schema) once each (a
// repeated mutation is a no-op), the feed shows neither, callers
// without rights or with an unknown id get FORBIDDEN / NOT_FOUND, and a
// closed pull request UNPROCESSABLE.
func TestDraftThroughGraphQL(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	ctx := apptest.Ctx()
	octo, bob, carol := env.User("octo"), env.User("bob"), env.User("carol")
	hello := env.Repo(octo, "hello")
	token := env.Token(octo, "repo", "admin:repo_hook")
	bobToken := env.Token(bob, "public_repo")
	owner := env.Client(token)
	rc := apptest.NewReceiver(t, "s")
	_, _, err := owner.Repositories.CreateHook(ctx, "octo", "hello", &github.Hook{Events: []string{"pull_request"},
		Config: &github.HookConfig{URL: github.Ptr(rc.URL), ContentType: github.Ptr("json"), Secret: github.Ptr("s")}})
	apptest.Must(t, "hook", err)
	proj := newProject(t, env, "octo", "hello", "octo", token)
	proj.commitOn("feature", "Add a feature", map[string]string{"feature.txt": "new\n"})
	pr, _, err := env.Client(bobToken).PullRequests.Create(ctx, "octo", "hello", github.CreatePullRequest{Title: github.Ptr("WIP"),
		Head: "feature", Base: "main", Draft: github.Ptr(true)})
	apptest.Must(t, "open a draft", err)
	if !pr.GetDraft() {
		t.Fatalf("opened: draft %v", pr.GetDraft())
	}
	waitMergeableState(t, owner, 1, "draft")

	// gh pr ready: the input as a variable; the selection as asked.
	const ready = `mutation PullRequestReadyForReview($input: MarkPullRequestReadyForReviewInput!) {
		markPullRequestReadyForReview(input: $input) { clientMutationId pr: pullRequest { id number isDraft url state } } }`
	vars := map[string]any{"input": map[string]any{"pullRequestId": pr.GetNodeID(), "clientMutationId": "m1"}}
	r := graphql(t, env, token, ready, vars)
	var payload struct {
		ClientMutationID string `json:"clientMutationId"`
		PR               struct {
			ID      string `json:"id"`
			Number  int    `json:"number"`
			IsDraft bool   `json:"isDraft"`
			URL     string `json:"url"`
			State   string `json:"state"`
		} `json:"pr"`
	}
	if len(r.Errors) != 0 || json.Unmarshal(r.Data["markPullRequestReadyForReview"], &payload) != nil {
		t.Fatalf("ready: %+v", r)
	}
	if payload.ClientMutationID != "m1" || payload.PR.ID != pr.GetNodeID() || payload.PR.Number != 1 || payload.PR.IsDraft ||
		payload.PR.URL != pr.GetHTMLURL() || payload.PR.State != "OPEN" {
		t.Fatalf("ready: %+v", payload)
	}
	if got := waitMergeableState(t, owner, 1, "clean"); got.GetDraft() {
		t.Fatalf("after ready: draft %v", got.GetDraft())
	}
	if r := graphql(t, env, token, ready, vars); len(r.Errors) != 0 {
		t.Fatalf("ready again: %+v", r)
	}

	// The author (read access only) converts it back, the id inline.
	toDraft := `mutation { convertPullRequestToDraft(input: {pullRequestId: "` + pr.GetNodeID() + `"}) { pullRequest { isDraft } } }`
	if r := graphql(t, env, bobToken, toDraft, nil); len(r.Errors) != 0 || string(r.Data["convertPullRequestToDraft"]) != `{"pullRequest":{"isDraft":true}}` {
		t.Fatalf("to draft: %+v %s", r, r.Data["convertPullRequestToDraft"])
	}
	if got := waitMergeableState(t, owner, 1, "draft"); !got.GetDraft() {
		t.Fatalf("after convert: draft %v", got.GetDraft())
	}
	events := waitFor(t, rc, "pull_request ready_for_review", "pull_request converted_to_draft")
	var actions []string
	for _, e := range events {
		actions = append(actions, e.GetAction())
		switch e.GetAction() {
		case "ready_for_review":
			if e.GetPullRequest().GetDraft() || e.GetSender().GetLogin() != "octo" || e.GetNumber() != 1 {
				t.Errorf("ready_for_review: draft %v sender %s", e.GetPullRequest().GetDraft(), e.GetSender().GetLogin())
			}
		case "converted_to_draft":
			if !e.GetPullRequest().GetDraft() || e.GetSender().GetLogin() != "bob" {
				t.Errorf("converted_to_draft: draft %v sender %s", e.GetPullRequest().GetDraft(), e.GetSender().GetLogin())
			}
		}
	}
	// Each once; in any order, as the platform promises no order between
	// deliveries (two can be in flight at once).
	slices.Sort(actions)
	if want := []string{"converted_to_draft", "opened", "ready_for_review"}; !slices.Equal(actions, want) {
		t.Fatalf("deliveries %v, want %v", actions, want)
	}
	feed, _, err := owner.Activity.ListRepositoryEvents(ctx, "octo", "hello", nil)
	apptest.Must(t, "feed", err)
	for _, e := range feed {
		if e.GetType() == "PullRequestEvent" {
			if p, err := e.ParsePayload(); err == nil && p.(*github.PullRequestEvent).GetAction() != "opened" {
				t.Errorf("feed shows PullRequestEvent %s", p.(*github.PullRequestEvent).GetAction())
			}
		}
	}

	// Errors: a reader who is not the author, a token without a scope, a
	// fine-grained token with Pull requests read or not selecting
	// the repository, an unknown id.
	for _, c := range []struct {
		name, token, id, typ string
	}{
		{"stranger", env.Token(carol, "public_repo"), pr.GetNodeID(), "FORBIDDEN"},
		{"no scope", env.Token(octo), pr.GetNodeID(), "FORBIDDEN"},
		{"read only", env.FineGrainedToken(octo, octo, []*repos.Repository{hello}, "pull_requests:read"), pr.GetNodeID(), "FORBIDDEN"},
		{"not selected", env.FineGrainedToken(octo, octo, nil, "pull_requests:write"), pr.GetNodeID(), "FORBIDDEN"},
		{"unknown id", token, "PR_bm9wZQ", "NOT_FOUND"},
		{"other type", token, "U_MQ", "NOT_FOUND"},
	} {
		r := graphql(t, env, c.token, ready, map[string]any{"input": map[string]any{"pullRequestId": c.id}})
		if len(r.Errors) != 1 || r.Errors[0].Type != c.typ || r.Errors[0].Message == "" ||
			string(r.Data["markPullRequestReadyForReview"]) != "null" {
			t.Errorf("%s: %+v, want one %s error and null data", c.name, r, c.typ)
		}
	}
	fine := env.FineGrainedToken(octo, octo, []*repos.Repository{hello}, "pull_requests:write")
	if r := graphql(t, env, fine, ready, vars); len(r.Errors) != 0 {
		t.Fatalf("fine-grained Pull requests write: %+v", r)
	}
	if got := waitMergeableState(t, owner, 1, "clean"); got.GetDraft() {
		t.Fatal("fine-grained ready: still a draft")
	}
	_, _, err = owner.PullRequests.Edit(ctx, "octo", "hello", 1, &github.PullRequest{State: github.Ptr("closed")})
	apptest.Must(t, "close", err)
	if r := graphql(t, env, bobToken, toDraft, nil); len(r.Errors) != 1 || r.Errors[0].Type != "UNPROCESSABLE" {
		t.Fatalf("closed: %+v, want UNPROCESSABLE", r)
	}
}

package graphql_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/testwait"
	"forgeapi/internal/webhooks"
)

const threadsQuery = `query($n: Int!) { repository(owner: "octo", name: "hello") { pullRequest(number: $n) {
	reviewThreads(first: 10) { totalCount nodes { id isResolved isOutdated path line diffSide viewerCanResolve viewerCanUnresolve
		resolvedBy { login } comments(first: 10) { totalCount nodes { databaseId body path author { login } replyTo { databaseId } } } } } } } }`

type threadNode struct {
	ID                                   string
	IsResolved, IsOutdated               bool
	Path, DiffSide                       string
	Line                                 *int
	ViewerCanResolve, ViewerCanUnresolve bool
	ResolvedBy                           *struct{ Login string }
	Comments                             struct {
		TotalCount int
		Nodes      []struct {
			DatabaseID int64
			Body, Path string
			Author     struct{ Login string }
			ReplyTo    *struct{ DatabaseID int64 }
		}
	}
}

// TestConversationResolution: with required_conversation_resolution on
// the base, a pull request with an unresolved review thread is blocked
// and its merge refused with the platform's 405 "All comments must be
// resolved." (administrators included under enforce_admins). Threads
// show in PullRequest.reviewThreads with their comments; a reader may
// not resolve, the author and writers may; resolveReviewThread and
// unresolveReviewThread send pull_request_review_thread resolved and
// unresolved, signed; once every thread is resolved the merge goes
// through.
func TestConversationResolution(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	ctx := apptest.Ctx()
	octo, bob, carol := env.User("octo"), env.User("bob"), env.User("carol")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo", "admin:repo_hook")
	rest := env.Client(token)
	pushBranches(t, env, "hello", token, "one")
	bobToken, carolToken := env.Token(bob, "repo"), env.Token(carol, "repo")
	for tok, perm := range map[string]string{bobToken: "push", carolToken: "pull"} {
		login := map[string]string{bobToken: "bob", carolToken: "carol"}[tok]
		inv, _, err := rest.Repositories.AddCollaborator(ctx, "octo", "hello", login, &github.RepositoryAddCollaboratorOptions{Permission: perm})
		apptest.Must(t, "invite "+login, err)
		_, err = env.Client(tok).Users.AcceptInvitation(ctx, inv.GetID())
		apptest.Must(t, login+" accepts", err)
	}
	rc := apptest.NewReceiver(t, "s")
	_, _, err := rest.Repositories.CreateHook(ctx, "octo", "hello", &github.Hook{Events: []string{"pull_request_review_thread"},
		Config: &github.HookConfig{URL: github.Ptr(rc.URL), ContentType: github.Ptr("json"), Secret: github.Ptr("s")}})
	apptest.Must(t, "hook", err)
	_, _, err = rest.Repositories.UpdateBranchProtection(ctx, "octo", "hello", "main", &github.ProtectionRequest{
		EnforceAdmins: true, RequiredConversationResolution: github.Ptr(true)})
	apptest.Must(t, "protect main", err)

	bobRest := env.Client(bobToken)
	pr, _, err := rest.PullRequests.Get(ctx, "octo", "hello", 1)
	apptest.Must(t, "get the pull request", err)
	head := pr.GetHead().GetSHA()
	first, _, err := bobRest.PullRequests.CreateComment(ctx, "octo", "hello", 1, github.CreatePullRequestCommentRequest{
		Body: "Why two lines?", CommitID: head, Path: "one.txt", Line: github.Ptr(2), Side: github.Ptr("RIGHT")})
	apptest.Must(t, "bob comments", err)
	reply, _, err := rest.PullRequests.CreateCommentInReplyTo(ctx, "octo", "hello", 1, "Because.", first.GetID())
	apptest.Must(t, "octo replies", err)
	second, _, err := bobRest.PullRequests.CreateComment(ctx, "octo", "hello", 1, github.CreatePullRequestCommentRequest{
		Body: "And this?", CommitID: head, Path: "one.txt", Line: github.Ptr(1), Side: github.Ptr("RIGHT")})
	apptest.Must(t, "bob comments again", err)

	threads := func(t *testing.T, tok string) []threadNode {
		t.Helper()
		var got struct {
			Repository struct {
				PullRequest struct {
					ReviewThreads struct {
						TotalCount int
						Nodes      []threadNode
					}
				}
			}
		}
		gqlData(t, env, tok, threadsQuery, map[string]any{"n": 1}, &got)
		return got.Repository.PullRequest.ReviewThreads.Nodes
	}
	refused := func(t *testing.T) {
		t.Helper()
		_, resp, err := rest.PullRequests.Merge(ctx, "octo", "hello", 1, "", nil)
		if apptest.ResponseStatus(resp) != http.StatusMethodNotAllowed {
			t.Fatalf("merge with unresolved threads: %d %v", apptest.ResponseStatus(resp), err)
		}
		if e, ok := err.(*github.ErrorResponse); !ok || e.Message != "All comments must be resolved." {
			t.Fatalf("refusal %v", err)
		}
	}
	var list []threadNode
	apptest.Step(t, "threads show with their comments", func(t *testing.T) {
		list = threads(t, token)
		if len(list) != 2 {
			t.Fatalf("threads %+v", list)
		}
		th := list[0]
		if th.IsResolved || th.IsOutdated || th.Path != "one.txt" || th.Line == nil || *th.Line != 2 || th.DiffSide != "RIGHT" ||
			!th.ViewerCanResolve || th.ViewerCanUnresolve || th.ResolvedBy != nil || th.Comments.TotalCount != 2 ||
			th.Comments.Nodes[0].DatabaseID != first.GetID() || th.Comments.Nodes[0].Author.Login != "bob" ||
			th.Comments.Nodes[1].DatabaseID != reply.GetID() || th.Comments.Nodes[1].ReplyTo == nil ||
			th.Comments.Nodes[1].ReplyTo.DatabaseID != first.GetID() {
			t.Fatalf("first thread %+v", th)
		}
		if list[1].Comments.Nodes[0].DatabaseID != second.GetID() {
			t.Fatalf("second thread %+v", list[1])
		}
		if carols := threads(t, carolToken); carols[0].ViewerCanResolve {
			t.Fatalf("a reader may resolve: %+v", carols[0])
		}
	})
	apptest.Step(t, "unresolved threads block the merge", func(t *testing.T) {
		testwait.For(t, "mergeable_state blocked", func() error {
			pr, _, err := rest.PullRequests.Get(ctx, "octo", "hello", 1)
			if err != nil || pr.GetMergeableState() != "blocked" {
				return fmt.Errorf("mergeable_state %q %v", pr.GetMergeableState(), err)
			}
			return nil
		})
		refused(t)
	})
	resolve := `mutation($input: ResolveReviewThreadInput!) { resolveReviewThread(input: $input) {
		clientMutationId thread { id isResolved resolvedBy { login } viewerCanResolve viewerCanUnresolve } } }`
	unresolve := `mutation($input: UnresolveReviewThreadInput!) { unresolveReviewThread(input: $input) {
		thread { id isResolved resolvedBy { login } } } }`
	apptest.Step(t, "a reader may not resolve", func(t *testing.T) {
		r := post(t, env, carolToken, resolve, map[string]any{"input": map[string]any{"threadId": list[0].ID}})
		if len(r.Errors) != 1 || r.Errors[0].Type != "FORBIDDEN" {
			t.Fatalf("carol resolves: %+v", r)
		}
		r = post(t, env, token, resolve, map[string]any{"input": map[string]any{"threadId": "PRRT_nope"}})
		if len(r.Errors) != 1 || r.Errors[0].Type != "NOT_FOUND" {
			t.Fatalf("an unknown thread: %+v", r)
		}
	})
	apptest.Step(t, "resolving one is not enough; unresolving counts again", func(t *testing.T) {
		var got struct {
			ClientMutationID string
			Thread           threadNode
		}
		raw := mutate(t, env, bobToken, resolve, map[string]any{"threadId": list[0].ID, "clientMutationId": "r1"})
		if json.Unmarshal(raw, &got) != nil || !got.Thread.IsResolved || got.Thread.ResolvedBy == nil ||
			got.Thread.ResolvedBy.Login != "bob" || got.ClientMutationID != "r1" || !got.Thread.ViewerCanUnresolve || got.Thread.ViewerCanResolve {
			t.Fatalf("resolved %s", raw)
		}
		mutate(t, env, token, resolve, map[string]any{"threadId": list[1].ID})
		raw = mutate(t, env, token, unresolve, map[string]any{"threadId": list[1].ID})
		if json.Unmarshal(raw, &got) != nil || got.Thread.IsResolved || got.Thread.ResolvedBy != nil {
			t.Fatalf("unresolved %s", raw)
		}
		refused(t)
	})
	apptest.Step(t, "all resolved, the merge goes through", func(t *testing.T) {
		mutate(t, env, token, resolve, map[string]any{"threadId": list[1].ID})
		if again := mutate(t, env, token, resolve, map[string]any{"threadId": list[1].ID}); again == nil {
			t.Fatal("resolving a resolved thread answers nothing")
		}
		if got := threads(t, token); !got[0].IsResolved || !got[1].IsResolved || got[1].ResolvedBy.Login != "octo" {
			t.Fatalf("threads %+v", got)
		}
		res, _, err := rest.PullRequests.Merge(ctx, "octo", "hello", 1, "", nil)
		apptest.Must(t, "merge", err)
		if !res.GetMerged() {
			t.Fatalf("merge %+v", res)
		}
	})
	apptest.Step(t, "pull_request_review_thread deliveries", func(t *testing.T) {
		rc.WaitFor(t, func(d apptest.Delivery) string {
			e, ok := d.Parsed.(*github.PullRequestReviewThreadEvent)
			if !ok {
				return ""
			}
			return e.GetAction() + " " + e.GetThread().GetNodeID()[:5] + " " + e.GetSender().GetLogin() + " " +
				strconv.Itoa(len(e.GetThread().Comments)) + " #" + strconv.Itoa(e.GetPullRequest().GetNumber())
		}, "resolved PRRT_ bob 2 #1", "resolved PRRT_ octo 1 #1", "unresolved PRRT_ octo 1 #1", "resolved PRRT_ octo 1 #1")
	})
}

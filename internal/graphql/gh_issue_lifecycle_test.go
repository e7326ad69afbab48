package graphql_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/repos"
	"forgeapi/internal/webhooks"
)

// pinnedQuery lists a repository's pinned issues.
const pinnedQuery = `query($o: String!, $n: String!) { repository(owner: $o, name: $n) {
	pinnedIssues(first: 5) { totalCount nodes { id issue { number isPinned } pinnedBy { login } } } } }`

// pinnedNumbers are the numbers of octo/hello's pinned issues, as
// Repository.pinnedIssues lists them; each must say it is pinned and
// that octo pinned it.
func pinnedNumbers(t *testing.T, env *apptest.Env, token string) []int {
	t.Helper()
	var got struct {
		Repository struct {
			PinnedIssues struct {
				TotalCount int
				Nodes      []struct {
					ID    string
					Issue struct {
						Number   int
						IsPinned bool
					}
					PinnedBy struct{ Login string }
				}
			}
		}
	}
	gqlData(t, env, token, pinnedQuery, map[string]any{"o": "octo", "n": "hello"}, &got)
	var out []int
	for _, n := range got.Repository.PinnedIssues.Nodes {
		if !n.Issue.IsPinned || n.PinnedBy.Login != "octo" || !strings.HasPrefix(n.ID, "PIN_") {
			t.Errorf("pinned issue %+v", n)
		}
		out = append(out, n.Issue.Number)
		var byID struct {
			Node struct{ Issue struct{ Number int } }
		}
		gqlData(t, env, token, `query($id: ID!) { node(id: $id) { ... on PinnedIssue { issue { number } } } }`, map[string]any{"id": n.ID}, &byID)
		if byID.Node.Issue.Number != n.Issue.Number {
			t.Errorf("node(id: %s) is issue %d, want %d", n.ID, byID.Node.Issue.Number, n.Issue.Number)
		}
	}
	if got.Repository.PinnedIssues.TotalCount != len(out) {
		t.Errorf("totalCount %d of %v", got.Repository.PinnedIssues.TotalCount, out)
	}
	return out
}

// TestGitHubCLIIssueLockPinTransferDelete runs gh 2.23's `issue lock`
// (with a reason), `unlock`, `pin`, `unpin`, `transfer` and `delete`
// against a server on --tls, and checks what each prints, what REST and
// GraphQL show after, and the issues webhooks each sends (validated
// against the platform's webhook schema by the receiver).
func TestGitHubCLIIssueLockPinTransferDelete(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithTLS(), apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	octo := env.User("octo")
	env.Repo(octo, "hello")
	env.Repo(octo, "other")
	token := env.Token(octo, "repo", "read:org", "admin:repo_hook")
	run, host := ghCLI(t, env, token)
	rest := env.Client(token)
	ctx := apptest.Ctx()
	rc := apptest.NewReceiver(t, "s")
	for _, name := range []string{"hello", "other"} {
		_, _, err := rest.Repositories.CreateHook(ctx, "octo", name, &github.Hook{Events: []string{"issues"},
			Config: &github.HookConfig{URL: github.Ptr(rc.URL), ContentType: github.Ptr("json"), Secret: github.Ptr("s")}})
		apptest.Must(t, "hook", err)
		_, _, err = rest.Issues.CreateLabel(ctx, "octo", name, github.CreateIssueLabelRequest{Name: "bug"})
		apptest.Must(t, "label", err)
	}
	_, _, err := rest.Issues.CreateLabel(ctx, "octo", "hello", github.CreateIssueLabelRequest{Name: "docs"})
	apptest.Must(t, "label", err)
	for _, title := range []string{"First", "Second", "Third", "Fourth", "Fifth"} {
		req := github.CreateIssueRequest{Title: title}
		if title == "Fourth" {
			req.Labels = []string{"bug", "docs"}
		}
		_, _, err := rest.Issues.Create(ctx, "octo", "hello", req)
		apptest.Must(t, "issue", err)
	}
	repo := host + "/octo/hello"
	issue := func(name string, n int) *github.Issue {
		is, _, err := rest.Issues.Get(ctx, "octo", name, n)
		apptest.Must(t, "REST issue", err)
		return is
	}

	// Lock with a reason, then unlock.
	// gh 2.23 prints nothing off a terminal for lock, unlock and delete:
	// REST shows what they did.
	run("issue", "lock", "1", "--repo", repo, "--reason", "too_heated")
	if is := issue("hello", 1); !is.GetLocked() || is.GetActiveLockReason() != "too heated" {
		t.Errorf("gh issue lock: %v %q", is.GetLocked(), is.GetActiveLockReason())
	}
	run("issue", "unlock", "1", "--repo", repo)
	if issue("hello", 1).GetLocked() {
		t.Error("gh issue unlock: still locked")
	}

	// Three pins, the platform's limit; then one unpinned.
	for _, n := range []string{"1", "2", "3"} {
		if out := run("issue", "pin", n, "--repo", repo); !strings.Contains(out, "Pinned issue #"+n) {
			t.Errorf("gh issue pin %s:\n%s", n, out)
		}
	}
	gh := apptest.GH(t, env, token, true)
	if out, err := gh.Try("issue", "pin", "4", "--repo", repo); err == nil || !strings.Contains(out, "You can only pin 3 issues") {
		t.Errorf("a fourth pin: %v\n%s", err, out)
	}
	if got := pinnedNumbers(t, env, token); !slices.Equal(got, []int{1, 2, 3}) {
		t.Errorf("pinned %v, want [1 2 3]", got)
	}
	if out := run("issue", "unpin", "2", "--repo", repo); !strings.Contains(out, "Unpinned issue #2") {
		t.Errorf("gh issue unpin:\n%s", out)
	}
	if got := pinnedNumbers(t, env, token); !slices.Equal(got, []int{1, 3}) {
		t.Errorf("pinned %v, want [1 3]", got)
	}

	// Transfer: a new number in the destination, the labels it has.
	out := run("issue", "transfer", "4", "octo/other", "--repo", repo)
	if strings.TrimSpace(out) != env.URL+"/octo/other/issues/1" {
		t.Errorf("gh issue transfer:\n%s", out)
	}
	if is := issue("other", 1); is.GetTitle() != "Fourth" || len(is.Labels) != 1 || is.Labels[0].GetName() != "bug" {
		t.Errorf("transferred: %q %v", is.GetTitle(), is.Labels)
	}
	// The old number redirects (the client follows) to the new one.
	resp, _ := env.Do("GET", "/repos/octo/hello/issues/4", token, nil)
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/repos/octo/other/issues/1" || resp.Request.Response == nil ||
		resp.Request.Response.StatusCode != http.StatusMovedPermanently {
		t.Errorf("the old number: %d at %s", resp.StatusCode, resp.Request.URL)
	}

	hello, _, err := rest.Repositories.Get(ctx, "octo", "hello")
	apptest.Must(t, "repo", err)
	if hello.GetOpenIssuesCount() != 4 {
		t.Errorf("hello has %d open issues, want 4", hello.GetOpenIssuesCount())
	}

	// Delete.
	run("issue", "delete", "5", "--repo", repo, "--yes")
	if _, resp, err := rest.Issues.Get(ctx, "octo", "hello", 5); err == nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("a deleted issue: %v", err)
	}

	got := rc.WaitFor(t, apptest.EventAction, "issues locked", "issues unlocked", "issues pinned", "issues pinned", "issues pinned",
		"issues unpinned", "issues transferred", "issues deleted")
	if n := strings.Count(strings.Join(got, ","), "issues opened"); n != 6 {
		t.Errorf("%d issues opened, want 6 (five, and the transferred one in other): %q", n, got)
	}
	for _, d := range rc.Deliveries() {
		var p struct {
			Action  string
			Changes struct {
				NewIssue      struct{ Number int } `json:"new_issue"`
				NewRepository struct {
					FullName string `json:"full_name"`
				} `json:"new_repository"`
			}
			Repository struct {
				FullName string `json:"full_name"`
			}
		}
		_ = json.Unmarshal(d.Body, &p)
		if p.Action == "transferred" && (p.Changes.NewIssue.Number != 1 || p.Changes.NewRepository.FullName != "octo/other" ||
			p.Repository.FullName != "octo/hello") {
			t.Errorf("transferred: %s", d.Body)
		}
	}
}

// TestIssueLifecycleMutationsNeedTheirAccess checks that lockLockable,
// pinIssue, deleteIssue and transferIssue ask what their REST twins (or
// the platform) ask: triage to lock, push to pin and transfer (on both
// repositories), admin to delete, Issues write of a fine-grained token;
// and that an archived repository's issues cannot be changed.
func TestIssueLifecycleMutationsNeedTheirAccess(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo := env.User("octo")
	bob := env.User("bob")
	hello := env.Repo(octo, "hello")
	other := env.Repo(octo, "other")
	token := env.Token(octo, "repo")
	rest := env.Client(token)
	ctx := apptest.Ctx()
	inv, _, err := rest.Repositories.AddCollaborator(ctx, "octo", "hello", "bob", &github.RepositoryAddCollaboratorOptions{Permission: "push"})
	apptest.Must(t, "invite", err)
	bobToken := env.Token(bob, "repo")
	_, err = env.Client(bobToken).Users.AcceptInvitation(ctx, inv.GetID())
	apptest.Must(t, "accept", err)
	is, _, err := rest.Issues.Create(ctx, "octo", "hello", github.CreateIssueRequest{Title: "One"})
	apptest.Must(t, "issue", err)
	id := is.GetNodeID()
	otherID := repoNodeID(t, env, token, "other")

	mutate := func(tok, query string) result {
		t.Helper()
		return post(t, env, tok, query, map[string]any{"id": id, "repo": otherID})
	}
	const (
		lock     = `mutation($id: ID!) { lockLockable(input: {lockableId: $id, lockReason: RESOLVED}) { lockedRecord { locked activeLockReason } } }`
		pin      = `mutation($id: ID!) { pinIssue(input: {issueId: $id}) { issue { isPinned } } }`
		del      = `mutation($id: ID!) { deleteIssue(input: {issueId: $id}) { repository { name } } }`
		transfer = `mutation($id: ID!, $repo: ID!) { transferIssue(input: {issueId: $id, repositoryId: $repo}) { issue { number } } }`
	)
	forbidden := func(r result, what string) {
		t.Helper()
		if len(r.Errors) != 1 || r.Errors[0].Type != "FORBIDDEN" {
			t.Errorf("%s: %+v", what, r.Errors)
		}
	}
	readOnly := env.FineGrainedToken(octo, octo, []*repos.Repository{hello, other}, "issues:read")
	forbidden(mutate(readOnly, lock), "lock with Issues read")
	forbidden(mutate(readOnly, pin), "pin with Issues read")
	forbidden(mutate(bobToken, del), "delete by a pusher")
	forbidden(mutate(bobToken, transfer), "transfer by one without push on the destination")
	if r := mutate(bobToken, lock); len(r.Errors) != 0 {
		t.Errorf("lock by a pusher: %+v", r.Errors)
	}
	if r := mutate(bobToken, pin); len(r.Errors) != 0 || !strings.Contains(string(r.Data["pinIssue"]), `"isPinned":true`) {
		t.Errorf("pin by a pusher: %+v %s", r.Errors, r.Data["pinIssue"])
	}
	writer := env.FineGrainedToken(octo, octo, []*repos.Repository{hello, other}, "issues:write")
	if r := mutate(writer, transfer); len(r.Errors) != 0 || string(r.Data["transferIssue"]) != `{"issue":{"number":1}}` {
		t.Errorf("transfer with Issues write: %+v %s", r.Errors, r.Data["transferIssue"])
	}

	// An archived repository's issues are read-only, through REST and
	// GraphQL alike.
	_, _, err = rest.Repositories.Edit(ctx, "octo", "other", &github.Repository{Archived: github.Ptr(true)})
	apptest.Must(t, "archive", err)
	forbidden(mutate(token, lock), "lock in an archived repository")
	if _, resp, err := rest.Issues.Create(ctx, "octo", "other", github.CreateIssueRequest{Title: "Two"}); err == nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("REST issue in an archived repository: %v", err)
	}
	if r := mutate(token, del); len(r.Errors) != 1 {
		t.Errorf("delete in an archived repository: %+v", r.Errors)
	}
}

// repoNodeID is the node id of octo's repository.
func repoNodeID(t *testing.T, env *apptest.Env, token, name string) string {
	t.Helper()
	r, _, err := env.Client(token).Repositories.Get(apptest.Ctx(), "octo", name)
	apptest.Must(t, "repo", err)
	return r.GetNodeID()
}

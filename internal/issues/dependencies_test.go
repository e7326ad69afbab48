package issues_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/webhooks"
)

// TestIssueDependencies drives issue dependencies through go-github: an
// issue is blocked by an issue of its repository and one of another
// repository; both lists and both sides' issue_dependencies_summary
// count them (open ones apart from all); closing a blocker lowers the
// open count; a reader may not add one, an issue cannot block itself
// nor be added twice, a hidden repository's issue cannot block; removing
// a dependency answers the issue without it. The repository hook
// receives issue_dependencies blocked_by_added, blocking_added and the
// removals.
func TestIssueDependencies(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	ctx := apptest.Ctx()
	octo, dev, eve := env.User("octo"), env.User("dev"), env.User("eve")
	acme := env.Org("acme", octo)
	env.Repo(acme, "app")
	env.Repo(acme, "lib")
	env.Repo(eve, "hidden", apptest.RepoOpts{Private: true})
	owner := env.Client(env.Token(octo, "repo", "admin:repo_hook"))
	devGH := env.Client(env.Token(dev, "repo"))
	eveGH := env.Client(env.Token(eve, "repo"))

	rc := apptest.NewReceiver(t, "s")
	_, _, err := owner.Repositories.CreateHook(ctx, "acme", "app", &github.Hook{Name: github.Ptr("web"),
		Events: []string{"issue_dependencies"},
		Config: &github.HookConfig{URL: github.Ptr(rc.URL), ContentType: github.Ptr("json"), Secret: github.Ptr("s")}})
	apptest.Must(t, "hook", err)

	open := func(repo, title string) *github.Issue {
		is, _, err := owner.Issues.Create(ctx, "acme", repo, github.CreateIssueRequest{Title: title})
		apptest.Must(t, "open "+title, err)
		return is
	}
	feature, bug, upstream := open("app", "feature"), open("app", "bug"), open("lib", "upstream")
	secret, _, err := eveGH.Issues.Create(ctx, "eve", "hidden", github.CreateIssueRequest{Title: "secret"})
	apptest.Must(t, "secret issue", err)

	summary := func(t *testing.T, repo string, n int) github.IssueDependenciesSummary {
		t.Helper()
		is, _, err := owner.Issues.Get(ctx, "acme", repo, n)
		apptest.Must(t, "get", err)
		if is.IssueDependenciesSummary == nil {
			t.Fatalf("#%d has no issue_dependencies_summary", n)
		}
		return *is.IssueDependenciesSummary
	}

	apptest.Step(t, "add blockers", func(t *testing.T) {
		is, resp, err := owner.Issues.AddBlockedBy(ctx, "acme", "app", int64(feature.GetNumber()), github.IssueDependencyRequest{IssueID: bug.GetID()})
		apptest.Must(t, "blocked by bug", err)
		if resp.StatusCode != http.StatusCreated || is.GetNumber() != feature.GetNumber() || is.GetIssueDependenciesSummary().GetTotalBlockedBy() != 1 {
			t.Fatalf("%d %+v", resp.StatusCode, is.GetIssueDependenciesSummary())
		}
		_, _, err = owner.Issues.AddBlockedBy(ctx, "acme", "app", int64(feature.GetNumber()), github.IssueDependencyRequest{IssueID: upstream.GetID()})
		apptest.Must(t, "blocked by another repository's issue", err)
		list, _, err := devGH.Issues.ListBlockedBy(ctx, "acme", "app", int64(feature.GetNumber()), nil)
		apptest.Must(t, "list blocked by", err)
		if len(list) != 2 || list[0].GetTitle() != "bug" || list[1].GetTitle() != "upstream" ||
			list[1].GetRepositoryURL() != env.URL+"/repos/acme/lib" {
			t.Fatalf("blocked by %v", list)
		}
		blocking, _, err := devGH.Issues.ListBlocking(ctx, "acme", "lib", int64(upstream.GetNumber()), nil)
		apptest.Must(t, "list blocking", err)
		if len(blocking) != 1 || blocking[0].GetTitle() != "feature" {
			t.Fatalf("blocking %v", blocking)
		}
		if s := summary(t, "lib", upstream.GetNumber()); s.GetBlocking() != 1 || s.GetTotalBlocking() != 1 {
			t.Fatalf("upstream's summary %+v", s)
		}
	})

	apptest.Step(t, "refusals", func(t *testing.T) {
		for name, c := range map[string]struct {
			gh   *github.Client
			id   int64
			want int
		}{
			"a reader":            {devGH, upstream.GetID(), http.StatusForbidden},
			"itself":              {owner, feature.GetID(), http.StatusUnprocessableEntity},
			"twice":               {owner, bug.GetID(), http.StatusUnprocessableEntity},
			"a hidden repository": {owner, secret.GetID(), http.StatusUnprocessableEntity},
			"no such issue":       {owner, 999999, http.StatusUnprocessableEntity},
		} {
			_, resp, _ := c.gh.Issues.AddBlockedBy(ctx, "acme", "app", int64(feature.GetNumber()), github.IssueDependencyRequest{IssueID: c.id})
			if apptest.ResponseStatus(resp) != c.want {
				t.Errorf("%s: %d, want %d", name, apptest.ResponseStatus(resp), c.want)
			}
		}
	})

	apptest.Step(t, "a closed blocker no longer blocks", func(t *testing.T) {
		_, _, err := owner.Issues.Update(ctx, "acme", "app", bug.GetNumber(), github.UpdateIssueRequest{State: github.Ptr("closed")})
		apptest.Must(t, "close bug", err)
		if s := summary(t, "app", feature.GetNumber()); s.GetBlockedBy() != 1 || s.GetTotalBlockedBy() != 2 {
			t.Fatalf("feature's summary %+v", s)
		}
	})

	apptest.Step(t, "remove a blocker", func(t *testing.T) {
		is, _, err := owner.Issues.RemoveBlockedBy(ctx, "acme", "app", int64(feature.GetNumber()), upstream.GetID())
		apptest.Must(t, "remove", err)
		if is.GetIssueDependenciesSummary().GetTotalBlockedBy() != 1 {
			t.Fatalf("after removal %+v", is.GetIssueDependenciesSummary())
		}
		if _, resp, _ := owner.Issues.RemoveBlockedBy(ctx, "acme", "app", int64(feature.GetNumber()), upstream.GetID()); apptest.ResponseStatus(resp) != http.StatusNotFound {
			t.Fatalf("removed twice: %d", apptest.ResponseStatus(resp))
		}
		if resp, _ := env.Do("DELETE", "/repos/acme/app/issues/1/dependencies/blocked_by/1", "", nil); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("anonymous removal: %d", resp.StatusCode)
		}
		list, _, err := owner.Issues.ListBlocking(ctx, "acme", "lib", int64(upstream.GetNumber()), nil)
		apptest.Must(t, "list blocking", err)
		if len(list) != 0 {
			t.Fatalf("blocking %v", list)
		}
	})

	describe := func(d apptest.Delivery) string {
		if d.Event != "issue_dependencies" {
			return ""
		}
		var p struct {
			Action        string                 `json:"action"`
			BlockedIssue  struct{ Title string } `json:"blocked_issue"`
			BlockingIssue struct{ Title string } `json:"blocking_issue"`
		}
		_ = json.Unmarshal(d.Body, &p)
		return p.Action + " " + p.BlockedIssue.Title + "<" + p.BlockingIssue.Title
	}
	rc.WaitFor(t, describe, "blocked_by_added feature<bug", "blocking_added feature<bug",
		"blocked_by_added feature<upstream", "blocked_by_removed feature<upstream")
}

// TestOneDependencyAddedTwiceAtOnce adds one blocker to an issue twice
// at once, each addition held at its commit until both have counted the
// issue's blockers (apptest.CommitGate): one is added (201), the other
// refused as a duplicate (422), never a 500. PostgreSQL only.
func TestOneDependencyAddedTwiceAtOnce(t *testing.T) {
	apptest.SkipUnlessPostgres(t, "concurrent transactions that overlap (CommitGate)")
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo")
	env.Repo(octo, "app")
	owner := env.Client(env.Token(octo, "repo"))
	var opened []*github.Issue
	for _, title := range []string{"feature", "bug"} {
		is, _, err := owner.Issues.Create(ctx, "octo", "app", github.CreateIssueRequest{Title: title})
		apptest.Must(t, "open "+title, err)
		opened = append(opened, is)
	}

	add := func() int {
		_, resp, _ := owner.Issues.AddBlockedBy(ctx, "octo", "app", int64(opened[0].GetNumber()),
			github.IssueDependencyRequest{IssueID: opened[1].GetID()})
		return apptest.ResponseStatus(resp)
	}
	got := env.CommitGate(t, "INSERT", "issue_dependencies", "true").Run(add, add)
	if got[0]+got[1] != http.StatusCreated+http.StatusUnprocessableEntity {
		t.Errorf("the two additions answered %v, want one 201 and one 422", got)
	}
}

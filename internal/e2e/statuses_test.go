package e2e_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/repos"
	"forgeapi/internal/webhooks"
)

// TestCommitStatuses posts statuses with go-github as a CI system does,
// reads them back one by one and combined, and receives each one's status
// event with go-github's webhook parser.
func TestCommitStatuses(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	ctx := apptest.Ctx()
	octo := env.User("octo", apptest.UserOpts{Email: "author@example.com"})
	repo := env.Repo(octo, "hello")
	token := env.Token(octo, "repo", "admin:repo_hook")
	c := env.Client(token)
	rc := apptest.NewReceiver(t, "s")
	_, _, err := c.Repositories.CreateHook(ctx, "octo", "hello", &github.Hook{Events: []string{"status"},
		Config: &github.HookConfig{URL: github.Ptr(rc.URL), ContentType: github.Ptr("json"), Secret: github.Ptr("s")}})
	apptest.Must(t, "hook", err)
	work := apptest.WorkTree(t, map[string]string{"a.txt": "1\n"})
	sha := strings.TrimSpace(apptest.Git(t, work, "rev-parse", "HEAD"))
	apptest.Git(t, work, "push", "-q", env.GitURL("octo", "hello", "octo", token), "HEAD:refs/heads/main")

	post := func(state, context string) *github.RepoStatus {
		t.Helper()
		st, resp, err := c.Repositories.CreateStatus(ctx, "octo", "hello", sha, github.RepoStatus{State: github.Ptr(state),
			Context: github.Ptr(context), TargetURL: github.Ptr("https://ci.example/build/1"), Description: github.Ptr(context + " " + state)})
		apptest.Must(t, "create status", err)
		if resp.StatusCode != http.StatusCreated || resp.Header.Get("Location") != st.GetURL() || st.GetCreator().GetLogin() != "octo" {
			t.Fatalf("created %d %+v", resp.StatusCode, st)
		}
		return st
	}
	post("pending", "ci")
	combined, _, err := c.Repositories.GetCombinedStatus(ctx, "octo", "hello", "main", nil)
	apptest.Must(t, "combined", err)
	if combined.GetState() != "pending" || combined.GetTotalCount() != 1 || combined.GetSHA() != sha {
		t.Fatalf("combined after pending: %+v", combined)
	}
	post("success", "ci")
	post("success", "lint")
	combined, _, err = c.Repositories.GetCombinedStatus(ctx, "octo", "hello", sha, nil)
	apptest.Must(t, "combined", err)
	if combined.GetState() != "success" || combined.GetTotalCount() != 2 {
		t.Fatalf("combined after successes: %+v", combined)
	}
	post("failure", "lint")
	combined, _, err = c.Repositories.GetCombinedStatus(ctx, "octo", "hello", "main", nil)
	apptest.Must(t, "combined", err)
	if combined.GetState() != "failure" {
		t.Fatalf("combined after a failure: %s", combined.GetState())
	}
	list, _, err := env.Client("").Repositories.ListStatuses(ctx, "octo", "hello", "main", nil)
	apptest.Must(t, "list anonymously", err)
	if len(list) != 4 || list[0].GetState() != "failure" || list[3].GetState() != "pending" {
		t.Fatalf("statuses: %d, first %s", len(list), list[0].GetState())
	}

	// Bad input.
	for _, c := range []struct{ path, body string }{
		{"/repos/octo/hello/statuses/" + sha, `{"state":"great"}`},
		{"/repos/octo/hello/statuses/" + sha, `{}`},
		{"/repos/octo/hello/statuses/" + sha, `{"state":"success","target_url":"not a url"}`},
		{"/repos/octo/hello/statuses/" + strings.Repeat("0", 40), `{"state":"success"}`},
		{"/repos/octo/hello/statuses/main", `{"state":"success"}`},
	} {
		if resp, body := env.DoJSON("POST", c.path, token, c.body); resp.StatusCode != http.StatusUnprocessableEntity {
			t.Errorf("POST %s %s: %d %s, want 422", c.path, c.body, resp.StatusCode, body)
		}
	}
	if resp, _ := env.Do("GET", "/repos/octo/hello/commits/nope/status", "", nil); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown ref: %d", resp.StatusCode)
	}
	// Fine-grained tokens: statuses:write posts, statuses:read does not.
	if resp, body := env.DoJSON("POST", "/repos/octo/hello/statuses/"+sha, env.FineGrainedToken(octo, octo, []*repos.Repository{repo}, "statuses:read"),
		`{"state":"success"}`); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("statuses:read posts: %d %s", resp.StatusCode, body)
	}
	if resp, body := env.DoJSON("POST", "/repos/octo/hello/statuses/"+sha, env.FineGrainedToken(octo, octo, []*repos.Repository{repo}, "statuses:write"),
		`{"state":"success","context":"fine"}`); resp.StatusCode != http.StatusCreated {
		t.Fatalf("statuses:write posts: %d %s", resp.StatusCode, body)
	}

	statusEvent := func(d apptest.Delivery) string {
		if d.Event != "status" {
			return ""
		}
		return d.Event
	}
	rc.WaitCount(t, statusEvent, 5)
	if n := len(rc.Described(statusEvent)); n != 5 {
		t.Fatalf("received %d status events, want 5", n)
	}
	for _, d := range rc.Deliveries() {
		e, ok := d.Parsed.(*github.StatusEvent)
		if !ok {
			continue
		}
		if e.GetSHA() != sha || e.GetCommit().GetSHA() != sha || e.GetRepo().GetFullName() != "octo/hello" ||
			len(e.Branches) != 1 || e.Branches[0].GetName() != "main" || e.GetSender().GetLogin() != "octo" {
			t.Fatalf("status event: %+v", e)
		}
	}
}

package githost_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"forgeapi/internal/app"
	"forgeapi/internal/apptest"
	"forgeapi/internal/githost"
)

// withImmediateRecovery lets the push recovery take push_log rows at
// once; it runs at start and then only when the test calls RunOnce.
func withImmediateRecovery(c *app.Config) {
	c.PushRecovery = githost.RecoveryConfig{Grace: -1, PollInterval: time.Hour}
}

func pushLogRows(t *testing.T, env *apptest.Env) int {
	t.Helper()
	var n int
	apptest.Must(t, "count push_log", env.Q().QueryRowContext(context.Background(), `SELECT COUNT(*) FROM push_log`).Scan(&n))
	return n
}

// apiPushEvents returns the heads of the PushEvents of GET /repos/{owner}/{repo}/events.
func apiPushEvents(t *testing.T, env *apptest.Env, fullName, token string) []string {
	t.Helper()
	resp, body := env.Do(http.MethodGet, "/repos/"+fullName+"/events", token, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET events: %d %s", resp.StatusCode, body)
	}
	var evs []struct {
		Type    string         `json:"type"`
		Payload map[string]any `json:"payload"`
	}
	apptest.Must(t, "decode events", json.Unmarshal(body, &evs))
	var heads []string
	for _, e := range evs {
		if e.Type == "PushEvent" {
			heads = append(heads, e.Payload["head"].(string))
		}
	}
	return heads
}

func TestPushLeavesNoPushLogRow(t *testing.T) {
	t.Parallel()
	rec := &apptest.Recorder{}
	env := apptest.Start(t, apptest.WithEventSink(rec))
	owner := env.User("octocat")
	env.Repo(owner, "hello")
	token := env.Token(owner, "repo")
	work := apptest.WorkTree(t, map[string]string{"README.md": "hello\n"})
	apptest.Git(t, work, "push", env.GitURL("octocat", "hello", "octocat", token), "main")

	if n := pushLogRows(t, env); n != 0 {
		t.Fatalf("%d push_log rows after a push", n)
	}
	if env.App.PushRecovery.RunOnce(context.Background()) != 0 {
		t.Fatal("recovery found a push to record")
	}
	if len(rec.Feed("PushEvent")) != 1 || len(rec.Hook("push")) != 1 || len(rec.Hook("create")) != 1 {
		t.Fatalf("events: %d PushEvent, %d push hooks, %d create hooks", len(rec.Feed("PushEvent")), len(rec.Hook("push")), len(rec.Hook("create")))
	}
}

// TestRecoverPushAfterFailedRecording pushes while the events transaction
// fails (as if the process died after git moved the references): the
// push stays applied with its push_log row, and the recovery records its
// events once.
func TestRecoverPushAfterFailedRecording(t *testing.T) {
	t.Parallel()
	rec := &apptest.Recorder{}
	env := apptest.Start(t, apptest.WithEventSink(rec), withImmediateRecovery)
	owner := env.User("octocat")
	env.Repo(owner, "hello")
	token := env.Token(owner, "repo")
	work := apptest.WorkTree(t, map[string]string{"README.md": "hello\n"})
	head := strings.TrimSpace(apptest.Git(t, work, "rev-parse", "HEAD"))

	rec.Fail(true)
	apptest.Git(t, work, "push", env.GitURL("octocat", "hello", "octocat", token), "main")
	rec.Fail(false)
	pushedBy := time.Now()
	if n := pushLogRows(t, env); n != 1 {
		t.Fatalf("%d push_log rows after a push whose recording failed, want 1", n)
	}
	if heads := apiPushEvents(t, env, "octocat/hello", token); len(heads) != 0 {
		t.Fatalf("push events before recovery: %v", heads)
	}

	if n := env.App.PushRecovery.RunOnce(context.Background()); n != 1 {
		t.Fatalf("recovered %d pushes, want 1", n)
	}
	if n := env.App.PushRecovery.RunOnce(context.Background()); n != 0 {
		t.Fatalf("second recovery recovered %d pushes", n)
	}
	if n := pushLogRows(t, env); n != 0 {
		t.Fatalf("%d push_log rows after recovery", n)
	}
	if heads := apiPushEvents(t, env, "octocat/hello", token); len(heads) != 1 || heads[0] != head {
		t.Fatalf("push events after recovery: %v, want [%s]", heads, head)
	}
	pushes, hooks := rec.Feed("PushEvent"), rec.Hook("push")
	if len(pushes) != 1 || len(hooks) != 1 || len(rec.Hook("create")) != 1 {
		t.Fatalf("sink saw %d PushEvent, %d push hooks, %d create hooks; want 1 each", len(pushes), len(hooks), len(rec.Hook("create")))
	}
	if at := pushes[0].CreatedAt; at.After(pushedBy) {
		t.Errorf("recovered PushEvent stamped %s, after the push ended (%s): want the time the push was logged", at, pushedBy)
	}
	if p := hooks[0].HookPayload; p["after"] != head || p["created"] != true {
		t.Fatalf("recovered push hook: %+v", p)
	}
}

// TestRecoverDropsUnappliedUpdate: a logged update git did not apply
// (the reference is still at its old SHA) records nothing, and its row
// goes.
func TestRecoverDropsUnappliedUpdate(t *testing.T) {
	t.Parallel()
	rec := &apptest.Recorder{}
	env := apptest.Start(t, apptest.WithEventSink(rec), withImmediateRecovery)
	owner := env.User("octocat")
	repo := env.Repo(owner, "hello")
	token := env.Token(owner, "repo")
	work := apptest.WorkTree(t, map[string]string{"README.md": "hello\n"})
	url := env.GitURL("octocat", "hello", "octocat", token)
	apptest.Git(t, work, "push", url, "main")
	old := strings.TrimSpace(apptest.Git(t, work, "rev-parse", "HEAD"))
	apptest.Commit(t, work, "second", map[string]string{"a.txt": "a\n"})

	rec.Fail(true)
	apptest.Git(t, work, "push", url, "main")
	rec.Fail(false)
	// As if git had refused the update after pre-receive logged it.
	apptest.Git(t, env.App.Repos.GitDir(repo.ID), "update-ref", "refs/heads/main", old)

	if n := env.App.PushRecovery.RunOnce(context.Background()); n != 1 {
		t.Fatalf("recovered %d pushes, want 1", n)
	}
	if n := pushLogRows(t, env); n != 0 {
		t.Fatalf("%d push_log rows after recovery", n)
	}
	if heads := apiPushEvents(t, env, "octocat/hello", token); len(heads) != 1 || heads[0] != old {
		t.Fatalf("push events: %v, want only the first push's [%s]", heads, old)
	}
	if len(rec.Feed("PushEvent")) != 1 || len(rec.Hook("push")) != 1 {
		t.Fatalf("sink saw %d PushEvent, %d push hooks; want the first push's only", len(rec.Feed("PushEvent")), len(rec.Hook("push")))
	}
}

package repository_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"forgeapi/internal/apptest"
	"forgeapi/internal/repos"
)

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
	env := apptest.Start(t, apptest.WithEventSink(rec), apptest.WithImmediatePushRecovery)
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

// TestRecoverDropsUnappliedUpdate: of a logged push whose events
// transaction failed, the update git did not apply (the reference was
// locked when receive-pack tried to move it) records nothing, even once a
// later push moved the reference to the same commit; the update it
// applied is recorded.
func TestRecoverDropsUnappliedUpdate(t *testing.T) {
	t.Parallel()
	f := startRecovery(t)
	rec, env, repo, work, url, first := f.rec, f.env, f.repo, f.work, f.url, f.first
	second := apptest.Commit(t, work, "second", map[string]string{"a.txt": "a\n"})

	// git runs pre-receive (which logs the push), creates feature, fails
	// to lock main and leaves it alone.
	lock := filepath.Join(env.App.Repos.GitDir(repo.ID), "refs", "heads", "main.lock")
	// (go-git, which reads the references, takes the lock file for one.)
	apptest.Must(t, "lock main", os.WriteFile(lock, []byte(first+"\n"), 0o644))
	rec.Fail(true)
	if out, err := apptest.TryGit(t, work, "push", url, "main", "main:refs/heads/feature"); err == nil {
		t.Fatalf("push to a locked reference succeeded: %s", out)
	}
	rec.Fail(false)
	apptest.Must(t, "unlock main", os.Remove(lock))
	if n := pushLogRows(t, env); n != 1 {
		t.Fatalf("%d push_log rows after the failed push, want 1 (%d push hooks)", n, len(rec.Hook("push")))
	}
	apptest.Git(t, work, "push", url, "main") // the same update of main, applied this time

	if n := env.App.PushRecovery.RunOnce(context.Background()); n != 1 {
		t.Fatalf("recovered %d pushes, want 1", n)
	}
	if n := pushLogRows(t, env); n != 0 {
		t.Fatalf("%d push_log rows after recovery", n)
	}
	var got []string
	for _, e := range rec.Feed("PushEvent") {
		p := e.FeedPayload.(map[string]any)
		got = append(got, p["ref"].(string)+"@"+p["head"].(string))
	}
	if want := []string{"refs/heads/main@" + first, "refs/heads/main@" + second, "refs/heads/feature@" + second}; !slices.Equal(got, want) {
		t.Fatalf("PushEvents %v, want %v", got, want)
	}
}

// TestRecoverPushMovedOnByLaterPush: a push whose events transaction
// failed is recorded by the recovery although a later push moved the
// branch on before it ran; the later push is recorded once too.
func TestRecoverPushMovedOnByLaterPush(t *testing.T) {
	t.Parallel()
	f := startRecovery(t)
	rec, env, work, url, first := f.rec, f.env, f.work, f.url, f.first

	second := apptest.Commit(t, work, "second", map[string]string{"a.txt": "a\n"})
	rec.Fail(true)
	apptest.Git(t, work, "push", url, "main")
	rec.Fail(false)
	loggedBy := time.Now()
	third := apptest.Commit(t, work, "third", map[string]string{"b.txt": "b\n"})
	apptest.Git(t, work, "push", url, "main")

	if n := env.App.PushRecovery.RunOnce(context.Background()); n != 1 {
		t.Fatalf("recovered %d pushes, want 1", n)
	}
	if n := env.App.PushRecovery.RunOnce(context.Background()); n != 0 {
		t.Fatalf("second recovery recovered %d pushes", n)
	}
	wantHeads(t, rec, first, third, second)
	for _, e := range rec.Feed("PushEvent") {
		if p := e.FeedPayload.(map[string]any); p["head"] == second {
			if e.CreatedAt.After(loggedBy) || p["before"] != first || p["size"] != 1 {
				t.Errorf("recovered PushEvent: created %s (pushed by %s), payload %+v", e.CreatedAt, loggedBy, p)
			}
		}
	}
}

// TestRecoverPushForcePushedOver: a push whose events transaction failed
// is recorded by the recovery although a later force push replaced its
// commit on the branch before it ran.
func TestRecoverPushForcePushedOver(t *testing.T) {
	t.Parallel()
	f := startRecovery(t)
	rec, env, work, url, first := f.rec, f.env, f.work, f.url, f.first

	second := apptest.Commit(t, work, "second", map[string]string{"a.txt": "a\n"})
	rec.Fail(true)
	apptest.Git(t, work, "push", url, "main")
	rec.Fail(false)
	apptest.Git(t, work, "reset", "--hard", first)
	replaced := apptest.Commit(t, work, "instead", map[string]string{"c.txt": "c\n"})
	apptest.Git(t, work, "push", "--force", url, "main")

	if n := env.App.PushRecovery.RunOnce(context.Background()); n != 1 {
		t.Fatalf("recovered %d pushes, want 1", n)
	}
	wantHeads(t, rec, first, replaced, second)
	var forced []any
	for _, e := range rec.Hook("push") {
		forced = append(forced, e.HookPayload["forced"])
	}
	if want := []any{false, true, false}; !slices.Equal(forced, want) {
		t.Errorf("forced flags of the push hooks: %v, want %v", forced, want)
	}
}

// TestRecoverBranchDeletedByLaterPush: a branch created by a push whose
// events transaction failed, then deleted by a push whose events
// transaction failed too (git removed the branch's reflog): the recovery
// records the creation and the deletion, through the chain of logged
// updates.
func TestRecoverBranchDeletedByLaterPush(t *testing.T) {
	t.Parallel()
	f := startRecovery(t)
	rec, env, work, url, first := f.rec, f.env, f.work, f.url, f.first

	rec.Fail(true)
	apptest.Git(t, work, "push", url, "main:refs/heads/feature")
	apptest.Git(t, work, "push", "--delete", url, "feature")
	rec.Fail(false)

	if n := env.App.PushRecovery.RunOnce(context.Background()); n != 2 {
		t.Fatalf("recovered %d pushes, want 2", n)
	}
	if n := len(rec.Hook("create")); n != 2 {
		t.Errorf("%d create hooks, want 2 (main, feature)", n)
	}
	if dels := rec.Hook("delete"); len(dels) != 1 || dels[0].HookPayload["ref"] != "feature" {
		t.Errorf("delete hooks: %d, want feature's", len(dels))
	}
	wantHeads(t, rec, first, first)
}

// recovery is a server whose push recovery runs at once, with its events
// recorded in rec, and octocat/hello, whose main a work tree has pushed
// its first commit to.
type recovery struct {
	rec              *apptest.Recorder
	env              *apptest.Env
	repo             *repos.Repository
	work, url, first string
}

func startRecovery(t *testing.T) recovery {
	t.Helper()
	rec := &apptest.Recorder{}
	env := apptest.Start(t, apptest.WithEventSink(rec), apptest.WithImmediatePushRecovery)
	owner := env.User("octocat")
	repo := env.Repo(owner, "hello")
	work := apptest.WorkTree(t, map[string]string{"README.md": "hello\n"})
	url := env.GitURL("octocat", "hello", "octocat", env.Token(owner, "repo"))
	apptest.Git(t, work, "push", url, "main")
	return recovery{rec: rec, env: env, repo: repo, work: work, url: url, first: headOf(t, work)}
}

func headOf(t *testing.T, work string) string {
	t.Helper()
	return strings.TrimSpace(apptest.Git(t, work, "rev-parse", "HEAD"))
}

// wantHeads checks the heads of the recorded PushEvents, in the order
// they were recorded.
func wantHeads(t *testing.T, rec *apptest.Recorder, heads ...string) {
	t.Helper()
	var got []string
	for _, e := range rec.Feed("PushEvent") {
		got = append(got, e.FeedPayload.(map[string]any)["head"].(string))
	}
	if !slices.Equal(got, heads) {
		t.Fatalf("PushEvent heads %v, want %v", got, heads)
	}
	if n := len(rec.Hook("push")); n < len(heads) {
		t.Fatalf("%d push hooks for %d PushEvents", n, len(heads))
	}
}

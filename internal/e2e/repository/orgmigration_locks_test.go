package repository_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"forgeapi/internal/apptest"
	"forgeapi/internal/webhooks"
)

// TestLockRefusesRealAPIWrites checks the lock against the server's own
// repository write routes (hooks and settings): while a migration holds
// the lock they answer 403 naming it, reads of the same resources keep
// working, a user's own star and subscription (not writes to the
// repository) still work, and after the unlock the writes succeed.
func TestLockRefusesRealAPIWrites(t *testing.T) {
	t.Parallel()
	f := newFixture(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(receiver.Close)
	f.env.Repo(f.org, "app")
	repo := "/repos/" + f.org.Login + "/app"
	hookBody := fmt.Sprintf(`{"name":"web","events":["push"],"config":{"url":%q,"content_type":"json"}}`, receiver.URL)
	resp, data := f.env.DoJSON("POST", repo+"/hooks", f.token, hookBody)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create a hook before the migration: %d %s", resp.StatusCode, data)
	}
	var hook struct {
		ID int64 `json:"id"`
	}
	mustUnmarshal(t, data, &hook)
	hookPath := fmt.Sprintf("%s/hooks/%d", repo, hook.ID)

	m := f.start(`{"repositories":["app"],"lock_repositories":true}`)
	refused := []struct{ method, path, body string }{
		{"POST", repo + "/hooks", hookBody},
		{"PATCH", hookPath, `{"active":false}`},
		{"PATCH", hookPath + "/config", `{"content_type":"form"}`},
		{"DELETE", hookPath, ""},
		{"PATCH", repo, `{"description":"changed during the migration"}`},
	}
	for _, w := range refused {
		resp, data := f.env.DoJSON(w.method, w.path, f.token, w.body)
		var e errorBody
		_ = json.Unmarshal(data, &e)
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(e.Message, "locked for migration") {
			t.Errorf("%s %s on a locked repository: %d %s, want 403 naming the lock", w.method, w.path, resp.StatusCode, data)
		}
	}
	for _, path := range []string{repo, repo + "/hooks", hookPath, hookPath + "/config"} {
		if resp, data := f.env.Do("GET", path, f.token, nil); resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s on a locked repository: %d %s", path, resp.StatusCode, data)
		}
	}
	reader := f.env.User(apptest.Unique("reader"))
	readerToken := f.env.Token(reader, "repo")
	for _, w := range []struct{ method, path string }{
		{"PUT", "/user/starred/" + f.org.Login + "/app"},
		{"PUT", repo + "/subscription"},
		{"DELETE", "/user/starred/" + f.org.Login + "/app"},
	} {
		if resp, data := f.env.DoJSON(w.method, w.path, readerToken, `{"subscribed":true}`); resp.StatusCode >= 300 {
			t.Errorf("%s %s by a reader of a locked repository: %d %s", w.method, w.path, resp.StatusCode, data)
		}
	}

	if resp, err := f.client.Migrations.UnlockRepo(apptest.Ctx(), f.org.Login, m.ID, "app"); apptest.ResponseStatus(resp) != http.StatusNoContent {
		t.Fatalf("unlock: %v", err)
	}
	if resp, data := f.env.DoJSON("PATCH", repo, f.token, `{"description":"after the unlock"}`); resp.StatusCode != http.StatusOK {
		t.Errorf("PATCH repository after the unlock: %d %s", resp.StatusCode, data)
	}
	if resp, data := f.env.DoJSON("PATCH", hookPath, f.token, `{"active":false}`); resp.StatusCode != http.StatusOK {
		t.Errorf("PATCH hook after the unlock: %d %s", resp.StatusCode, data)
	}
	if resp, data := f.env.Do("DELETE", hookPath, f.token, nil); resp.StatusCode != http.StatusNoContent {
		t.Errorf("DELETE hook after the unlock: %d %s", resp.StatusCode, data)
	}
}

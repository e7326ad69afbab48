package e2e_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apptest"
	"forgeapi/internal/events"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// event is a feed event as the tests read it.
type event struct {
	ID     string          `json:"id"`
	Type   string          `json:"type"`
	Public bool            `json:"public"`
	Actor  json.RawMessage `json:"actor"`
	Repo   struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
		URL  string `json:"url"`
	} `json:"repo"`
	Org       json.RawMessage `json:"org"`
	Payload   json.RawMessage `json:"payload"`
	CreatedAt string          `json:"created_at"`
}

func (e event) actorLogin() string {
	var a struct{ Login string }
	_ = json.Unmarshal(e.Actor, &a)
	return a.Login
}

// summary renders an event as "Type actor owner/repo".
func (e event) summary() string { return e.Type + " " + e.actorLogin() + " " + e.Repo.Name }

// get fetches a feed and decodes it, failing the test on any status
// other than want.
func getFeed(t *testing.T, env *apptest.Env, path, token string, want int, headers ...string) (*http.Response, []event) {
	t.Helper()
	resp, body := env.Do("GET", path, token, nil, headers...)
	if resp.StatusCode != want {
		t.Fatalf("GET %s: %d %s, want %d", path, resp.StatusCode, body, want)
	}
	var out []event
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(body, &out); err != nil {
			t.Fatalf("GET %s: %v: %s", path, err, body)
		}
	}
	return resp, out
}

// expect checks that a feed holds exactly the events, newest first.
func expect(t *testing.T, env *apptest.Env, path, token string, want ...string) {
	t.Helper()
	_, got := getFeed(t, env, path, token, http.StatusOK)
	var sums []string
	for _, e := range got {
		sums = append(sums, e.summary())
	}
	if !slices.Equal(sums, want) {
		t.Errorf("GET %s (token %q):\n got  %s\n want %s", path, short(token), strings.Join(sums, " | "), strings.Join(want, " | "))
	}
}

func short(token string) string {
	if len(token) > 12 {
		return token[:12]
	}
	return token
}

// status checks only the status of a GET.
func feedStatus(t *testing.T, env *apptest.Env, path, token string, want int) {
	t.Helper()
	resp, body := env.Do("GET", path, token, nil)
	if resp.StatusCode != want {
		t.Errorf("GET %s (token %q): %d %s, want %d", path, short(token), resp.StatusCode, body, want)
	}
}

// do runs an API call that must succeed with a 2xx.
func do(t *testing.T, env *apptest.Env, method, path, token, body string) {
	t.Helper()
	resp, b := env.DoJSON(method, path, token, body)
	if resp.StatusCode/100 != 2 {
		t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
}

// clock is a settable clock for apptest.WithClock.
type feedClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFeedClock() *feedClock { return &feedClock{now: time.Now().UTC().Truncate(time.Second)} }

func (c *feedClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *feedClock) Add(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

// seed stores n WatchEvents by actor on repo through the events bus, in
// one transaction (faster than n API calls where only the count matters).
func seed(t *testing.T, env *apptest.Env, actor *accounts.Account, repo *repos.Repository, n int) {
	t.Helper()
	ctx := context.Background()
	err := env.App.DB.Tx(ctx, func(tx *store.Tx) error {
		for range n {
			if err := env.App.Events.Emit(ctx, tx, &events.Event{FeedType: "WatchEvent", FeedPayload: map[string]string{"action": "started"},
				Actor: actor, Repo: repo, Public: !repo.Private}); err != nil {
				return err
			}
		}
		return nil
	})
	apptest.Must(t, "seed events", err)
}

func countEvents(t *testing.T, env *apptest.Env) int {
	t.Helper()
	var n int
	apptest.Must(t, "count events", env.Q().QueryRowContext(context.Background(), `SELECT count(*) FROM events`).Scan(&n))
	return n
}

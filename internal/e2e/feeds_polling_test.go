package e2e_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"forgeapi/internal/app"
	"forgeapi/internal/apptest"
	"forgeapi/internal/feeds"
	"forgeapi/internal/testwait"
)

func TestETagAndNotModified(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithRateLimit())
	alice, bob := env.User("alice"), env.User("bob")
	env.Repo(alice, "pub")
	token := env.Token(alice, "repo")

	for _, path := range []string{"/events", "/users/alice/events", "/repos/alice/pub/events", "/users/alice/received_events"} {
		for _, tok := range []string{"", token} {
			resp, _ := getFeed(t, env, path, tok, http.StatusOK)
			etag := resp.Header.Get("ETag")
			used := resp.Header.Get("X-Ratelimit-Used")
			if etag == "" || resp.Header.Get("X-Poll-Interval") != "60" {
				t.Fatalf("GET %s: ETag %q, X-Poll-Interval %q", path, etag, resp.Header.Get("X-Poll-Interval"))
			}
			resp, body := env.Do("GET", path, tok, nil, "If-None-Match", etag)
			if resp.StatusCode != http.StatusNotModified || len(body) != 0 {
				t.Fatalf("GET %s with its ETag: %d %q", path, resp.StatusCode, body)
			}
			if resp.Header.Get("X-Ratelimit-Used") != used || resp.Header.Get("ETag") != etag || resp.Header.Get("X-Poll-Interval") == "" {
				t.Fatalf("GET %s 304: used %s (was %s), ETag %q, X-Poll-Interval %q", path,
					resp.Header.Get("X-Ratelimit-Used"), used, resp.Header.Get("ETag"), resp.Header.Get("X-Poll-Interval"))
			}
			resp, _ = env.Do("GET", path, tok, nil, "If-None-Match", `"something-else"`)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("GET %s with a stale ETag: %d", path, resp.StatusCode)
			}
			if n, _ := strconv.Atoi(resp.Header.Get("X-Ratelimit-Used")); strconv.Itoa(n) == used {
				t.Fatalf("GET %s: a 200 did not count against the rate limit", path)
			}
		}
	}

	// Callers get different ETags; a new event changes the ETag.
	anon, _ := getFeed(t, env, "/events", "", http.StatusOK)
	authed, _ := getFeed(t, env, "/events", token, http.StatusOK)
	if anon.Header.Get("ETag") == authed.Header.Get("ETag") {
		t.Fatal("two callers share an ETag")
	}
	do(t, env, "PUT", "/user/starred/alice/pub", env.Token(bob, "repo"), ``)
	resp, events := getFeed(t, env, "/events", "", http.StatusOK, "If-None-Match", anon.Header.Get("ETag"))
	if resp.Header.Get("ETag") == anon.Header.Get("ETag") || len(events) != 2 || events[0].Type != "WatchEvent" {
		t.Fatalf("after a new event: ETag %q (was %q), %d events", resp.Header.Get("ETag"), anon.Header.Get("ETag"), len(events))
	}
	// A private event does not change the public feed's ETag.
	env.Repo(alice, "secret", apptest.RepoOpts{Private: true})
	getFeed(t, env, "/events", "", http.StatusNotModified, "If-None-Match", resp.Header.Get("ETag"))

	// A follow changes alice's received events without a new event.
	received, _ := getFeed(t, env, "/users/alice/received_events", token, http.StatusOK)
	getFeed(t, env, "/users/alice/received_events", token, http.StatusNotModified, "If-None-Match", received.Header.Get("ETag"))
	do(t, env, "PUT", "/user/following/bob", env.Token(alice, "user"), ``)
	if _, events := getFeed(t, env, "/users/alice/received_events", token, http.StatusOK, "If-None-Match", received.Header.Get("ETag")); len(events) != 1 {
		t.Fatalf("received events after following bob: %d", len(events))
	}
}

func TestPollIntervalRisesUnderLoadAndFallsBack(t *testing.T) {
	t.Parallel()
	clk := newFeedClock()
	env := apptest.Start(t, apptest.WithClock(clk.Now), func(c *app.Config) {
		c.Feeds.Poll = feeds.PollConfig{Capacity: 1, Window: 10 * time.Second}
	})
	interval := func() string {
		resp, _ := env.Do("GET", "/events", "", nil)
		return resp.Header.Get("X-Poll-Interval")
	}
	if got := interval(); got != "60" {
		t.Fatalf("idle: %s", got)
	}
	for range 18 { // 20 requests in the window: 2 per second, twice the capacity
		interval()
	}
	if got := interval(); got != "120" {
		t.Fatalf("at twice the capacity: %s", got)
	}
	for range 40 {
		interval()
	}
	if got := interval(); got != "420" { // 61 requests: 6.1 per second
		t.Fatalf("at 6.1 times the capacity: %s", got)
	}
	for range 200 {
		interval()
	}
	if got := interval(); got != "600" {
		t.Fatalf("capped: %s", got)
	}
	clk.Add(5 * time.Second)
	if got := interval(); got != "600" {
		t.Fatalf("load still inside the window: %s", got)
	}
	clk.Add(10 * time.Second)
	if got := interval(); got != "60" {
		t.Fatalf("after the load is gone: %s", got)
	}
}

func TestPagingAndThe300EventLimit(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	alice := env.User("alice")
	repo := env.Repo(alice, "pub") // one CreateEvent
	seed(t, env, alice, repo, 309)

	var last int64 = 1 << 62
	var seen int
	for page := 1; page <= 3; page++ {
		resp, events := getFeed(t, env, "/repos/alice/pub/events?per_page=100&page="+strconv.Itoa(page), "", http.StatusOK)
		if len(events) != 100 {
			t.Fatalf("page %d: %d events", page, len(events))
		}
		for _, e := range events {
			id, _ := strconv.ParseInt(e.ID, 10, 64)
			if id >= last {
				t.Fatalf("page %d: events not newest first (%d after %d)", page, id, last)
			}
			last = id
			seen++
		}
		link := resp.Header.Get("Link")
		hasNext := strings.Contains(link, `?page=`+strconv.Itoa(page+1)+`&per_page=100>; rel="next"`)
		if hasNext != (page < 3) || !strings.Contains(link, `?page=3&per_page=100>; rel="last"`) && page < 3 {
			t.Fatalf("page %d Link: %s", page, link)
		}
		if page > 1 && (!strings.Contains(link, `rel="prev"`) || !strings.Contains(link, `?page=1&per_page=100>; rel="first"`)) {
			t.Fatalf("page %d Link: %s", page, link)
		}
		if !strings.HasPrefix(link, "<"+env.URL+"/repos/alice/pub/events?") {
			t.Fatalf("Link is not absolute: %s", link)
		}
	}
	resp, body := env.Do("GET", "/repos/alice/pub/events?per_page=100&page=4", "", nil)
	if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(string(body), "300") {
		t.Fatalf("page past 300: %d %s", resp.StatusCode, body)
	}
	_, events := getFeed(t, env, "/repos/alice/pub/events?per_page=70&page=5", "", http.StatusOK)
	if len(events) != 20 {
		t.Fatalf("per_page=70 page=5 reaches events 281-300: got %d", len(events))
	}
	resp, _ = getFeed(t, env, "/repos/alice/pub/events", "", http.StatusOK)
	if !strings.Contains(resp.Header.Get("Link"), `?page=10>; rel="last"`) {
		t.Fatalf("default per_page 30: Link %s", resp.Header.Get("Link"))
	}
	for _, bad := range []string{"per_page=x", "page=-1", "page=1.5"} {
		feedStatus(t, env, "/events?"+bad, "", http.StatusUnprocessableEntity)
	}
	_, events = getFeed(t, env, "/events?per_page=500", "", http.StatusOK)
	if len(events) != 100 {
		t.Fatalf("per_page above 100 is served as 100: %d", len(events))
	}
}

func TestThirtyDayWindowAndPruning(t *testing.T) {
	t.Parallel()
	clk := newFeedClock()
	env := apptest.Start(t, apptest.WithClock(clk.Now))
	alice, bob := env.User("alice"), env.User("bob")
	env.Repo(alice, "pub")
	token := env.Token(bob, "repo")
	do(t, env, "PUT", "/user/starred/alice/pub", token, ``)

	clk.Add(29 * 24 * time.Hour)
	expect(t, env, "/repos/alice/pub/events", "", "WatchEvent bob alice/pub", "CreateEvent alice alice/pub")
	clk.Add(24*time.Hour + time.Minute) // the star is 30 days and a minute old
	do(t, env, "PUT", "/user/starred/alice/pub", env.Token(alice, "repo"), ``)
	expect(t, env, "/repos/alice/pub/events", "", "WatchEvent alice alice/pub")
	clk.Add(2 * 24 * time.Hour)
	expect(t, env, "/events", "", "WatchEvent alice alice/pub")

	// The pruner deletes what is older than the retention.
	if n := countEvents(t, env); n != 3 {
		t.Fatalf("events stored before pruning: %d", n)
	}
	p := feeds.NewPruner(env.App.DB, clk.Now, feeds.Config{Retention: 30 * 24 * time.Hour}, nil)
	deleted, err := p.RunOnce(context.Background())
	apptest.Must(t, "prune", err)
	if deleted != 2 || countEvents(t, env) != 1 {
		t.Fatalf("pruned %d, %d left", deleted, countEvents(t, env))
	}

	// The server's own pruner runs at start with the configured retention.
	env.Stop()
	cfg := env.Config
	cfg.Feeds.Retention = 24 * time.Hour
	restarted := apptest.StartConfig(t, cfg)
	testwait.For(t, "the server's pruner to delete the events past the retention", func() error {
		if n := countEvents(t, restarted); n != 0 {
			return fmt.Errorf("%d events left", n)
		}
		return nil
	})
}

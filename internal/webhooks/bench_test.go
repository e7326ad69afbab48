package webhooks_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/webhooks"
)

// BenchmarkRepositoryEventToTenHooks measures the whole delivery path:
// one op is a PATCH /repos/{owner}/{repo} through the API (8 concurrent
// clients) whose repository event goes to ten hooks, each delivery
// claimed, signed, sent to a receiver on 127.0.0.1 that checks the
// signature, and recorded. The clock stops when every delivery of the
// b.N events has arrived; deliveries/s is the rate.
//
//	go test ./internal/webhooks -run '^$' -bench RepositoryEventToTenHooks -benchtime 2000x
func BenchmarkRepositoryEventToTenHooks(b *testing.B) {
	const hooks, clients = 10, 8
	env := apptest.Start(b, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback", RateLimit: -1}))
	owner := env.User("bench")
	env.Repo(owner, "widgets")
	token := env.Token(owner, "repo", "admin:repo_hook")
	var got atomic.Int64
	arrived := make(chan struct{}, 1)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(raw))
		if _, err := github.ValidatePayload(r, []byte("s3cret")); err != nil {
			b.Errorf("delivery: %v", err)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if r.Header.Get("X-Service-Event") == "repository" {
			got.Add(1)
			select {
			case arrived <- struct{}{}:
			default:
			}
		}
	}))
	b.Cleanup(rcv.Close)
	client := env.Client(token)
	for i := range hooks {
		cfg := &github.HookConfig{URL: github.Ptr(fmt.Sprintf("%s/hook/%d", rcv.URL, i)), ContentType: github.Ptr("json"), Secret: github.Ptr("s3cret")}
		_, _, err := client.Repositories.CreateHook(apptest.Ctx(), "bench", "widgets",
			&github.Hook{Config: cfg, Events: []string{"repository"}, Active: github.Ptr(true)})
		apptest.Must(b, "create hook", err)
	}
	var next atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
				resp, body := env.DoJSON("PATCH", "/repos/bench/widgets", token, fmt.Sprintf(`{"description":"d%d"}`, i))
				if resp.StatusCode != http.StatusOK {
					b.Errorf("PATCH: %d %s", resp.StatusCode, body)
					return
				}
			}
		}()
	}
	wg.Wait()
	want := int64(b.N) * hooks
	deadline := time.After(5 * time.Minute)
	for got.Load() < want {
		select {
		case <-arrived:
		case <-deadline:
			b.Fatalf("received %d of %d deliveries", got.Load(), want)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(want)/b.Elapsed().Seconds(), "deliveries/s")
}

// BenchmarkRepositoryEventOfAStarredRepository measures a PATCH
// /repos/{owner}/{repo} of a repository with one hook, whose repository
// event's payload (stargazers_count, watchers_count, forks_count) is
// rendered in the PATCH's transaction: of a repository starred 200,000
// times against one never starred (the reference, in the same run). The
// counts are kept as they change (repository_counts); counted on every
// render they took 15 ms of the write lock a PATCH.
//
//	go test ./internal/webhooks -run '^$' -bench EventOfAStarredRepository -benchtime 200x
func BenchmarkRepositoryEventOfAStarredRepository(b *testing.B) {
	env := apptest.Start(b, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback", RateLimit: -1}))
	owner := env.User("bench")
	token := env.Token(owner, "repo", "admin:repo_hook")
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.Copy(io.Discard, r.Body) }))
	b.Cleanup(rcv.Close)
	ctx := apptest.Ctx()
	stargazers := env.ManyUsers("stargazer", 200000)
	for _, c := range []struct {
		name  string
		stars bool
	}{{"stars=0", false}, {"stars=200000", true}} {
		repo := env.Repo(owner, "widgets-"+c.name[len("stars="):])
		if c.stars {
			stargazers.Each("star", `INSERT INTO stars (user_id, repository_id, created_at)
				SELECT a.id, $3, $4 FROM accounts a WHERE a.id >= $1 AND a.id < $2`, repo.ID, time.Now().UTC())
		}
		_, _, err := env.Client(token).Repositories.CreateHook(ctx, "bench", repo.Name, &github.Hook{Events: []string{"repository"},
			Config: &github.HookConfig{URL: github.Ptr(rcv.URL), ContentType: github.Ptr("json")}, Active: github.Ptr(true)})
		apptest.Must(b, "create hook", err)
		b.Run(c.name, func(b *testing.B) {
			for i := range b.N {
				resp, body := env.DoJSON("PATCH", "/repos/bench/"+repo.Name, token, fmt.Sprintf(`{"description":"d%d"}`, i))
				if resp.StatusCode != http.StatusOK {
					b.Fatalf("PATCH: %d %s", resp.StatusCode, body)
				}
			}
		})
	}
}

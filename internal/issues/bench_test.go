package issues_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/store"
	"forgeapi/internal/webhooks"
)

// seedIssues writes n issues of the repository straight into the store,
// in one transaction of multi-row INSERTs (every 10th labelled, every
// 7th assigned to the owner), and sets the repository's counter after
// them.
func seedIssues(b *testing.B, env *apptest.Env, repoID, userID int64, n int) {
	b.Helper()
	ctx := context.Background()
	err := env.App.DB.Tx(ctx, func(tx *store.Tx) error {
		var label int64
		if err := tx.QueryRowContext(ctx, `INSERT INTO labels (repository_id, name, color, description, created_at)
			VALUES ($1, 'bug', 'd73a4a', '', $2) RETURNING id`, repoID, store.Now()).Scan(&label); err != nil {
			return err
		}
		start := store.Now().Add(-time.Duration(n) * time.Second)
		const batch = 500
		for from := 1; from <= n; from += batch {
			var sb strings.Builder
			args := []any{repoID, userID}
			sb.WriteString(`INSERT INTO issues (repository_id, number, title, body, user_id, created_at, updated_at) VALUES `)
			for num := from; num < from+batch && num <= n; num++ {
				if num > from {
					sb.WriteString(", ")
				}
				args = append(args, start.Add(time.Duration(num)*time.Second))
				fmt.Fprintf(&sb, "($1, %d, 'Issue %d', 'Body of issue %d', $2, $%d, $%d)", num, num, num, len(args), len(args))
			}
			if _, err := tx.ExecContext(ctx, sb.String(), args...); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO issue_labels (issue_id, label_id)
			SELECT id, $1 FROM issues WHERE repository_id = $2 AND number % 10 = 0`, label, repoID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO issue_assignees (issue_id, user_id)
			SELECT id, $1 FROM issues WHERE repository_id = $2 AND number % 7 = 0`, userID, repoID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO issue_counters (repository_id, last_issue) VALUES ($1, $2)`, repoID, n)
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
}

// BenchmarkListIssues measures the server time (in process, SQLite) of
// GET /repos/{owner}/{repo}/issues, the first page of 30 open issues
// newest first, in a repository with 100,000 issues (seeded with SQL;
// every 10th labelled, every 7th assigned): ns/op is the server time
// with a classic token, every middleware and the JSON.
func BenchmarkListIssues(b *testing.B) {
	env := apptest.Start(b)
	octo := env.User("octo")
	repo := env.Repo(octo, "big")
	seedIssues(b, env, repo.ID, octo.ID, 100_000)
	token := env.Token(octo, "repo")
	h := env.Main.Handler()
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest("GET", "/repos/octo/big/issues", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"number":100000`) {
			b.Fatalf("status %d: %.300s", rec.Code, rec.Body)
		}
	}
}

// BenchmarkCreateIssueWithHook opens issues through the API (one
// client, in process) in a repository with one hook subscribed to
// issues, and waits until every delivery reached the receiver and was
// logged: issues/s is the rate including delivery.
func BenchmarkCreateIssueWithHook(b *testing.B) {
	env := apptest.Start(b, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	ctx := apptest.Ctx()
	octo := env.User("octo")
	repo := env.Repo(octo, "busy")
	var received atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-GitHub-Event") == "issues" || r.Header.Get("X-Service-Event") == "issues" {
			received.Add(1)
		}
	}))
	b.Cleanup(srv.Close)
	token := env.Token(octo, "repo", "admin:repo_hook")
	_, _, err := env.Client(token).Repositories.CreateHook(ctx, "octo", "busy", &github.Hook{Events: []string{"issues"},
		Config: &github.HookConfig{URL: github.Ptr(srv.URL), ContentType: github.Ptr("json")}})
	apptest.Must(b, "hook", err)
	h := env.Main.Handler()
	start := time.Now()
	n := 0
	for b.Loop() {
		n++
		req := httptest.NewRequest("POST", "/repos/octo/busy/issues", strings.NewReader(`{"title":"load","body":"created by the benchmark"}`))
		req.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusCreated {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(5 * time.Millisecond) {
		var logged int
		if err := env.App.DB.QueryRowContext(ctx, `SELECT count(*) FROM hook_deliveries WHERE repository_id = $1 AND event = 'issues'
			AND state = 'done' AND status_code = 200`, repo.ID).Scan(&logged); err != nil {
			b.Fatal(err)
		}
		if logged >= n && received.Load() >= int64(n) {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d deliveries logged, %d received", logged, n, received.Load())
		}
	}
	b.ReportMetric(float64(n)/time.Since(start).Seconds(), "issues/s")
}

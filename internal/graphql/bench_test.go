package graphql_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"forgeapi/internal/apptest"
	"forgeapi/internal/store"
)

// seedPulls writes n open pull requests of the repository (head branch
// fN into main, by the user) straight into the store, in one
// transaction of multi-row INSERTs; their mergeability is not due for a
// check, so that no background work competes with the measured reads.
func seedPulls(b *testing.B, env *apptest.Env, repoID, userID int64, n int) {
	b.Helper()
	ctx := context.Background()
	err := env.App.DB.Tx(ctx, func(tx *store.Tx) error {
		start := store.Now().Add(-time.Duration(n) * time.Second)
		const batch = 500
		for from := 1; from <= n; from += batch {
			var sb strings.Builder
			args := []any{repoID, userID}
			sb.WriteString(`INSERT INTO issues (repository_id, number, is_pull_request, title, body, user_id, created_at, updated_at) VALUES `)
			for num := from; num < from+batch && num <= n; num++ {
				if num > from {
					sb.WriteString(", ")
				}
				args = append(args, start.Add(time.Duration(num)*time.Second))
				fmt.Fprintf(&sb, "($1, %d, TRUE, 'Pull %d', 'Body of pull %d', $2, $%d, $%d)", num, num, num, len(args), len(args))
			}
			if _, err := tx.ExecContext(ctx, sb.String(), args...); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO pull_requests (issue_id, repository_id, number, head_repository_id, head_ref, head_sha,
			base_ref, base_sha, check_due) SELECT id, repository_id, number, repository_id, 'f' || number, 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
			'main', 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb', FALSE FROM issues WHERE repository_id = $1`, repoID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO issue_counters (repository_id, last_issue) VALUES ($1, $2)`, repoID, n)
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	if env.App.DB.Dialect == store.Postgres {
		// What autovacuum does after a bulk load: statistics for the
		// planner, and the visibility map index-only scans need.
		if _, err := env.App.DB.DB.ExecContext(ctx, `VACUUM ANALYZE issues, pull_requests`); err != nil {
			b.Fatal(err)
		}
	}
}

// ghPullList is the query gh pr list sends (gh 2.23, its default
// fields).
const ghPullList = `fragment pr on PullRequest{number,title,state,url,headRefName,headRepositoryOwner{id,login,...on User{name}},isCrossRepository,isDraft,createdAt}
query PullRequestList($owner: String!, $repo: String!, $limit: Int!, $endCursor: String, $baseBranch: String, $headBranch: String, $state: [PullRequestState!] = OPEN) {
	repository(owner: $owner, name: $repo) {
		pullRequests(states: $state, baseRefName: $baseBranch, headRefName: $headBranch, first: $limit, after: $endCursor, orderBy: {field: CREATED_AT, direction: DESC}) {
			totalCount nodes { ...pr } pageInfo { hasNextPage endCursor } } } }`

// BenchmarkPullRequestList measures the server time (in process,
// SQLite unless FORGEAPI_TEST_POSTGRES_URL is set) of the query gh pr
// list sends, the first 30 open pull requests newest first in a
// repository with 10,000 (seeded with SQL), and of GET
// /repos/{owner}/{repo}/pulls for the same page, each request with a
// classic token, every middleware and the JSON (target: under 5 ms, and
// at most twice REST's time).
//
// graphql serves the query alone: ns/op, and cpu-ns/op the process's
// CPU time per request. alternating serves one of each per iteration,
// so that both meet the same load: graphql-ns/op and rest-ns/op are
// their wall times, graphql-cpu-ns/op and rest-cpu-ns/op the process's
// CPU time during them (the collection of REST's garbage lands in
// either), and graphql/rest the ratio of the wall times.
func BenchmarkPullRequestList(b *testing.B) {
	env := apptest.Start(b)
	octo := env.User("octo")
	repo := env.Repo(octo, "big")
	seedPulls(b, env, repo.ID, octo.ID, 10_000)
	token := env.Token(octo, "repo")
	h := env.Main.Handler()
	body, _ := json.Marshal(map[string]any{"query": ghPullList, "variables": map[string]any{"owner": "octo", "repo": "big", "limit": 30}})
	type measure struct{ wall, cpu time.Duration }
	serve := func(b *testing.B, m *measure, method, path, body string) {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		start, cpu := time.Now(), apptest.ProcessCPU()
		h.ServeHTTP(rec, req)
		m.wall += time.Since(start)
		m.cpu += apptest.ProcessCPU() - cpu
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"number":10000`) || !strings.Contains(rec.Body.String(), `"number":9971`) {
			b.Fatalf("%s %s: status %d: %.300s", method, path, rec.Code, rec.Body)
		}
	}
	const graphqlPath, restPath = "/api/graphql", "/repos/octo/big/pulls?sort=created&direction=desc"
	b.Run("graphql", func(b *testing.B) {
		var gql measure
		b.ReportAllocs()
		for b.Loop() {
			serve(b, &gql, "POST", graphqlPath, string(body))
		}
		b.ReportMetric(float64(gql.cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	})
	b.Run("alternating", func(b *testing.B) {
		var gql, rest measure
		for b.Loop() {
			serve(b, &gql, "POST", graphqlPath, string(body))
			serve(b, &rest, "GET", restPath, "")
		}
		n := float64(b.N)
		b.ReportMetric(float64(gql.wall.Nanoseconds())/n, "graphql-ns/op")
		b.ReportMetric(float64(rest.wall.Nanoseconds())/n, "rest-ns/op")
		b.ReportMetric(float64(gql.cpu.Nanoseconds())/n, "graphql-cpu-ns/op")
		b.ReportMetric(float64(rest.cpu.Nanoseconds())/n, "rest-cpu-ns/op")
		b.ReportMetric(float64(gql.wall)/float64(rest.wall), "graphql/rest")
	})
}

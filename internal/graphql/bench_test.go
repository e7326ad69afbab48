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
// transaction of multi-row INSERTs.
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
			base_ref, base_sha) SELECT id, repository_id, number, repository_id, 'f' || number, 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
			'main', 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb' FROM issues WHERE repository_id = $1`, repoID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO issue_counters (repository_id, last_issue) VALUES ($1, $2)`, repoID, n)
		return err
	})
	if err != nil {
		b.Fatal(err)
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
// SQLite) of the query gh pr list sends, the first 30 open pull requests
// newest first in a repository with 10,000 (seeded with SQL), and of
// GET /repos/{owner}/{repo}/pulls for the same page: ns/op is the server
// time with a classic token, every middleware and the JSON.
func BenchmarkPullRequestList(b *testing.B) {
	env := apptest.Start(b)
	octo := env.User("octo")
	repo := env.Repo(octo, "big")
	seedPulls(b, env, repo.ID, octo.ID, 10_000)
	token := env.Token(octo, "repo")
	h := env.Main.Handler()
	body, _ := json.Marshal(map[string]any{"query": ghPullList, "variables": map[string]any{"owner": "octo", "repo": "big", "limit": 30}})
	run := func(b *testing.B, method, path, body string) {
		b.ReportAllocs()
		for b.Loop() {
			req := httptest.NewRequest(method, path, strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+token)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"number":10000`) {
				b.Fatalf("status %d: %.300s", rec.Code, rec.Body)
			}
		}
	}
	b.Run("graphql", func(b *testing.B) { run(b, "POST", "/api/graphql", string(body)) })
	b.Run("rest", func(b *testing.B) { run(b, "GET", "/repos/octo/big/pulls?sort=created&direction=desc", "") })
}

package accounts_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"forgeapi/internal/apptest"
)

// BenchmarkUserOfManyFollowers measures GET /users/{username} right after
// a write to repositories (a PATCH, which drops the cached answers), of a
// user followed by 200,000 accounts against one followed by none (the
// reference, in the same run). One op is the PATCH and the GET; the
// counts are kept as they change (account_counts): counted on every read
// an op took 23.5 ms against 1.1 for the reference (SQLite), 0.98 ms
// against 1.02 now.
//
//	go test ./internal/accounts -run '^$' -bench UserOfManyFollowers -benchtime 200x
func BenchmarkUserOfManyFollowers(b *testing.B) {
	env := apptest.Start(b)
	ctx := apptest.Ctx()
	owner := env.User("bench")
	env.Repo(owner, "widgets")
	token := env.Token(owner, "repo")
	now := time.Now().UTC()
	_, err := env.App.DB.ExecContext(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200000)
		INSERT INTO accounts (type, login, created_at, updated_at) SELECT 'User', 'follower-' || i, $1, $1 FROM n`, now)
	apptest.Must(b, "create 200,000 users", err)
	for _, c := range []struct {
		name      string
		followers bool
	}{{"followers=0", false}, {"followers=200000", true}} {
		user := env.User("user-" + c.name[len("followers="):])
		var first, last int64
		apptest.Must(b, "find the users", env.App.DB.QueryRowContext(ctx,
			`SELECT min(id), max(id) FROM accounts WHERE login LIKE 'follower-%'`).Scan(&first, &last))
		// In statements of 2,000: see BenchmarkRepositoryEventOfAStarredRepository.
		for from := first; c.followers && from <= last; from += 2000 {
			_, err := env.App.DB.ExecContext(ctx, `INSERT INTO follows (follower_id, followee_id, created_at)
				SELECT id, $1, $2 FROM accounts WHERE login LIKE 'follower-%' AND id >= $3 AND id < $4`, user.ID, now, from, from+2000)
			apptest.Must(b, "follow", err)
		}
		b.Run(c.name, func(b *testing.B) {
			for i := range b.N {
				if resp, body := env.DoJSON("PATCH", "/repos/bench/widgets", token, fmt.Sprintf(`{"description":"d%d"}`, i)); resp.StatusCode != http.StatusOK {
					b.Fatalf("PATCH: %d %s", resp.StatusCode, body)
				}
				if resp, body := env.Do("GET", "/users/"+user.Login, token, nil); resp.StatusCode != http.StatusOK {
					b.Fatalf("GET: %d %s", resp.StatusCode, body)
				}
			}
		})
	}
}

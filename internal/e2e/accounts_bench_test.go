package e2e_test

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
// reference, in the same run). One op is the PATCH and the GET. The
// counts are kept as they change (account_counts), so both take about as
// long; counted on every read, the many followers' op would grow with
// them.
//
//	go test ./internal/e2e -run '^$' -bench UserOfManyFollowers -benchtime 200x
func BenchmarkUserOfManyFollowers(b *testing.B) {
	env := apptest.Start(b)
	owner := env.User("bench")
	env.Repo(owner, "widgets")
	token := env.Token(owner, "repo")
	followers := env.ManyUsers("follower", 200000)
	for _, c := range []struct {
		name      string
		followers bool
	}{{"followers=0", false}, {"followers=200000", true}} {
		user := env.User("user-" + c.name[len("followers="):])
		if c.followers {
			followers.Each("follow", `INSERT INTO follows (follower_id, followee_id, created_at)
				SELECT a.id, $3, $4 FROM accounts a WHERE a.id >= $1 AND a.id < $2`, user.ID, time.Now().UTC())
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

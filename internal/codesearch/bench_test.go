package codesearch_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"forgeapi/internal/apptest"
	"forgeapi/internal/store"
)

// seedFiles writes files of about size bytes each into the index of the
// repositories, straight into the store: Go-like lines of words drawn
// from a vocabulary of 20,000 identifiers; every 1,000th file also holds
// the word "needleword".
func seedFiles(b *testing.B, env *apptest.Env, repoIDs []int64, perRepo, size int) {
	b.Helper()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	n := 0
	for _, repoID := range repoIDs {
		err := env.App.DB.Tx(ctx, func(tx *store.Tx) error {
			if _, err := tx.ExecContext(ctx, `INSERT INTO code_search_work (repository_id, requested, indexed, head_sha)
				VALUES ($1, 1, 1, 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa')`, repoID); err != nil {
				return err
			}
			for i := 0; i < perRepo; i++ {
				n++
				var sb strings.Builder
				if n%1000 == 0 {
					sb.WriteString("// needleword\n")
				}
				for sb.Len() < size {
					fmt.Fprintf(&sb, "func ident%d(x%d int) { return call%d(x) }\n", rng.IntN(20000), rng.IntN(20000), rng.IntN(20000))
				}
				_, err := tx.ExecContext(ctx, `INSERT INTO code_files (repository_id, path, name, extension, blob_sha, size, content)
					VALUES ($1, $2, $3, 'go', $4, $5, $6)`, repoID, fmt.Sprintf("pkg%d/file%d.go", i%50, i),
					fmt.Sprintf("file%d.go", i), fmt.Sprintf("%040x", n), sb.Len(), sb.String())
				if err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSearchCode measures the server time (in process, SQLite
// unless FORGEAPI_TEST_POSTGRES_URL) of GET /search/code over 20,000
// files of 4 KB (80 MB of source in 20 public repositories, seeded with
// SQL): rare, a word in 20 files; common, a word in every file (the
// count goes through all of them).
func BenchmarkSearchCode(b *testing.B) {
	env := apptest.Start(b)
	octo := env.User("octo")
	var ids []int64
	for i := range 20 {
		ids = append(ids, env.Repo(octo, fmt.Sprintf("r%d", i)).ID)
	}
	seedFiles(b, env, ids, 1000, 4096)
	if env.App.DB.Dialect == store.Postgres {
		// the statistics autovacuum would gather after such a load
		for _, q := range []string{"ANALYZE code_files", "ANALYZE code_search_work", "ANALYZE repositories"} {
			if _, err := env.App.DB.ExecContext(context.Background(), q); err != nil {
				b.Fatal(err)
			}
		}
	}
	token := env.Token(octo, "repo")
	h := env.Main.Handler()
	for _, bc := range []struct{ name, q, want string }{
		{"rare", "needleword", `"total_count":20}`},
		{"common", "return+call", `"total_count":20000}`},
		{"rare-in-repo", "needleword+repo:octo/r3", `"total_count":1}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				req := httptest.NewRequest("GET", "/search/code?q="+bc.q, nil)
				req.Header.Set("Authorization", "Bearer "+token)
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), bc.want) {
					b.Fatalf("status %d: %.300s", rec.Code, rec.Body)
				}
			}
		})
	}
}

package issues_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"

	"forgeapi/internal/apptest"
	"forgeapi/internal/store"
)

// benchIssuesEnv sizes BenchmarkSearchIssues: the number of issues
// (1,000,000 by default, the issue's target; 100 a repository).
const benchIssuesEnv = "FORGEAPI_BENCH_ISSUES"

// searchCorpus is how the search benchmark's issues are made: owners of
// 100 repositories each, 100 issues a repository, titles of 5 and
// bodies of 15 words drawn (Zipf) from a vocabulary of 8,000 made-up
// words; every 10,000th issue's title holds "needleword", every 10th
// body "crash".
type searchCorpus struct {
	issues int
	vocab  []string
}

const (
	reposPerOwner  = 100
	issuesPerRepo  = 100
	searchSeedVers = "2" // bump when the corpus changes: the cache key
)

func newSearchCorpus(issues int) *searchCorpus {
	syllables := strings.Fields("ka lo mi ne ru ta shi po ve di zu ga fo le bi no sa te ri mu")
	c := &searchCorpus{issues: issues}
	for _, a := range syllables {
		for _, b := range syllables {
			for _, d := range syllables {
				c.vocab = append(c.vocab, a+b+d)
			}
		}
	}
	return c
}

func (c *searchCorpus) repos() int  { return max(1, c.issues/issuesPerRepo) }
func (c *searchCorpus) owners() int { return max(1, (c.repos()+reposPerOwner-1)/reposPerOwner) }

// words draws n words.
func (c *searchCorpus) words(z *rand.Zipf, n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = c.vocab[z.Uint64()]
	}
	return strings.Join(w, " ")
}

// seed writes the corpus straight into the store: owners as accounts,
// repositories and issues as multi-row INSERTs (the text indexes kept by
// the database as on any write), one transaction an owner.
func (c *searchCorpus) seed(b *testing.B, env *apptest.Env) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 49))
	z := rand.NewZipf(rng, 1.1, 2, uint64(len(c.vocab)-1))
	now := store.Now()
	n := 0
	for o := range c.owners() {
		owner := env.User(fmt.Sprintf("owner%d", o))
		err := env.App.DB.Tx(ctx, func(tx *store.Tx) error {
			for r := 0; r < reposPerOwner && o*reposPerOwner+r < c.repos(); r++ {
				var repoID int64
				if err := tx.QueryRowContext(ctx, `INSERT INTO repositories (owner_id, name, created_at, updated_at)
					VALUES ($1, $2, $3, $3) RETURNING id`, owner.ID, fmt.Sprintf("repo%d", r), now).Scan(&repoID); err != nil {
					return err
				}
				var sb strings.Builder
				fmt.Fprintf(&sb, `INSERT INTO issues (repository_id, number, title, body, user_id, created_at, updated_at) VALUES `)
				for num := 1; num <= issuesPerRepo; num++ {
					n++
					title, body := c.words(z, 5), c.words(z, 15)
					if n%10_000 == 0 {
						title += " needleword"
					}
					if n%10 == 0 {
						body += " crash"
					}
					if num > 1 {
						sb.WriteString(", ")
					}
					fmt.Fprintf(&sb, "(%d, %d, '%s', '%s', %d, $1, $1)", repoID, num, title, body, owner.ID)
				}
				if _, err := tx.ExecContext(ctx, sb.String(), now); err != nil {
					return err
				}
				if _, err := tx.ExecContext(ctx, `INSERT INTO issue_counters (repository_id, last_issue) VALUES ($1, $2)`,
					repoID, issuesPerRepo); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	if env.App.DB.Dialect != store.Postgres {
		return // the server never runs ANALYZE on SQLite: its plans are measured without statistics
	}
	// the statistics autovacuum gathers after such a load
	for _, q := range []string{"VACUUM ANALYZE issues", "ANALYZE repositories", "ANALYZE accounts"} {
		if _, err := env.App.DB.ExecContext(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSearchIssues measures the server time (in process) of GET
// /search/issues over 1,000,000 issues in 10,000 public repositories
// (FORGEAPI_BENCH_ISSUES=N for fewer; SQLite, or PostgreSQL with
// FORGEAPI_TEST_POSTGRES_URL): a bot's query of one repository, a word
// in one repository, a rare word (100 issues) and a common one (100,000,
// counted up to 1,000) across all of them. Besides ns/op it reports p50-ms and p99-ms, the
// percentiles of the requests' times; the issue's target is a p99 under
// 20 ms. cpu-ms/op is the process's CPU time a request.
func BenchmarkSearchIssues(b *testing.B) {
	size := 1_000_000
	if v := os.Getenv(benchIssuesEnv); v != "" {
		var err error
		if size, err = strconv.Atoi(v); err != nil || size < issuesPerRepo {
			b.Fatalf("%s=%q: a number of issues, %d or more", benchIssuesEnv, v, issuesPerRepo)
		}
	}
	c := newSearchCorpus(size)
	env := apptest.StartCached(b, fmt.Sprintf("issues_v%s_%d", searchSeedVers, size), func(env *apptest.Env) { c.seed(b, env) })
	searcher := env.User(apptest.Unique("searcher"))
	token := env.Token(searcher, "repo")
	h := env.Main.Handler()
	last := fmt.Sprintf("owner%d/repo%d", (c.repos()-1)/reposPerOwner, (c.repos()-1)%reposPerOwner)
	for _, bc := range []struct{ name, q, want string }{
		{"bot-in-repo", "is:issue is:open repo:" + last, fmt.Sprintf(`"total_count":%d}`, issuesPerRepo)},
		{"word-in-repo", "crash repo:" + last, fmt.Sprintf(`"total_count":%d}`, issuesPerRepo/10)},
		{"rare-word", "needleword", fmt.Sprintf(`"total_count":%d}`, size/10_000)},
		// counted up to 1,000 (incomplete_results), see Service.Find
		{"common-word", "crash is:open", fmt.Sprintf(`"total_count":%d}`, min(size/10, 1000))},
	} {
		b.Run(bc.name, func(b *testing.B) {
			lat := apptest.NewLatencies()
			for b.Loop() {
				req := httptest.NewRequest("GET", "/search/issues?q="+url.QueryEscape(bc.q), nil)
				req.Header.Set("Authorization", "Bearer "+token)
				rec := httptest.NewRecorder()
				lat.Time(func() { h.ServeHTTP(rec, req) })
				if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), bc.want) {
					b.Fatalf("%s: status %d, want %s: %.300s", bc.q, rec.Code, bc.want, rec.Body)
				}
			}
			lat.Report(b)
		})
	}
}

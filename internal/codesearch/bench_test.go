package codesearch_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

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

// benchCodeEnv sizes BenchmarkSearchCode: megabytes of source (1,024
// by default, the target).
const benchCodeEnv = "FORGEAPI_BENCH_CODE_MB"

// BenchmarkSearchCode measures the server time (in process, SQLite
// unless FORGEAPI_TEST_POSTGRES_URL) of GET /search/code over 1 GB of
// indexed source (FORGEAPI_BENCH_CODE_MB=N for N MB): 4 KB files, 1,000
// a public repository, seeded with SQL once and kept
// (apptest.StartCached). rare is a word in every 1,000th file; common a
// phrase in every file, which the search stops reading at its first
// 1,000 matches (incomplete_results); rare-in-repo the rare word in one
// repository. Besides ns/op it reports p50-ms, p99-ms (the issue's
// target: a p99 under 100 ms) and cpu-ms/op.
func BenchmarkSearchCode(b *testing.B) {
	mb := 1024
	if v := os.Getenv(benchCodeEnv); v != "" {
		var err error
		if mb, err = strconv.Atoi(v); err != nil || mb < 4 {
			b.Fatalf("%s=%q: megabytes, 4 or more", benchCodeEnv, v)
		}
	}
	const perRepo, size = 1000, 4096
	files := mb << 20 / size
	repoCount := max(1, files/perRepo)
	env := apptest.StartCached(b, fmt.Sprintf("code_v3_%dmb", mb), func(env *apptest.Env) {
		octo := env.User("octo")
		for i := 0; i < repoCount; i += 100 {
			var ids []int64
			for j := i; j < min(i+100, repoCount); j++ {
				ids = append(ids, env.Repo(octo, fmt.Sprintf("r%d", j)).ID)
			}
			seedFiles(b, env, ids, perRepo, size)
		}
		analyze(b, env, "code_files", "code_search_work", "repositories")
	})
	token := env.Token(env.User(apptest.Unique("searcher")), "repo")
	h := env.Main.Handler()
	for _, bc := range []struct{ name, q, want string }{
		{"rare", "needleword", fmt.Sprintf(`"total_count":%d}`, min(1000, repoCount*perRepo/1000))},
		{"common", "return+call", `"incomplete_results":true,`},
		{"rare-in-repo", "needleword+repo:octo/r0", `"total_count":1}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			lat := apptest.NewLatencies()
			for b.Loop() {
				req := httptest.NewRequest("GET", "/search/code?q="+bc.q, nil)
				req.Header.Set("Authorization", "Bearer "+token)
				rec := httptest.NewRecorder()
				lat.Time(func() { h.ServeHTTP(rec, req) })
				if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), bc.want) {
					b.Fatalf("status %d: %.300s", rec.Code, rec.Body)
				}
			}
			lat.Report(b)
		})
	}
}

// analyze gathers the statistics PostgreSQL's autovacuum would gather
// after such a load; on SQLite it does nothing, as the server does not.
func analyze(b *testing.B, env *apptest.Env, tables ...string) {
	ctx := context.Background()
	if env.App.DB.Dialect != store.Postgres {
		return // the server never runs ANALYZE on SQLite: its plans are measured without statistics
	}
	for _, t := range tables {
		if _, err := env.App.DB.ExecContext(ctx, "ANALYZE "+t); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIndexAfterPush measures how long after a push the code search
// index holds it, under pushes at 50 a second: each op is a push (a file
// added through PUT /repos/{owner}/{repo}/contents/{path}, the server's
// own push, in process) to one of 50 repositories in turn, paced at 50
// a second whatever the machine; a watcher reads the indexed heads every
// 5 ms. It reports lag-p50-ms, lag-p99-ms and lag-max-ms, from the
// push's answer to the index's head at it (the target: within a
// second), cpu-ms/push, the process's CPU time for a push and its
// indexing (under 20 ms a core keeps up with 50 a second), and
// git-cpu-ms/push, the CPU time of the git processes they ran; a push not
// indexed 30 s after the last one fails it.
func BenchmarkIndexAfterPush(b *testing.B) {
	const repoCount, rate = 50, 50
	env := apptest.Start(b)
	octo := env.User("octo")
	ids := make([]int64, repoCount)
	for i := range ids {
		ids[i] = env.Repo(octo, fmt.Sprintf("r%d", i)).ID
	}
	token := env.Token(octo, "repo")
	h := env.Main.Handler()
	// A repository takes one push at a time, as a client that pushes
	// again after its last push answered: under load a repository's next
	// push waits rather than loses the race for the branch (409).
	locks := make([]sync.Mutex, repoCount)
	push := func(i int) (int64, string) {
		locks[i%repoCount].Lock()
		defer locks[i%repoCount].Unlock()
		body := fmt.Sprintf(`{"message":"push %d","content":"%s"}`, i,
			base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "package p\n\nfunc Pushed%d() {}\n", i)))
		req := httptest.NewRequest("PUT", fmt.Sprintf("/repos/octo/r%d/contents/f%d.go", i%repoCount, i), strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var out struct{ Commit struct{ SHA string } }
		if rec.Code != http.StatusCreated || json.Unmarshal(rec.Body.Bytes(), &out) != nil {
			b.Errorf("push %d: %d %.300s", i, rec.Code, rec.Body)
		}
		return ids[i%repoCount], out.Commit.SHA
	}
	for i := range repoCount { // first commits, indexed before timing
		push(1_000_000 + i)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		indexed := 0
		for _, head := range indexedHeads(b, env) {
			if head != "" {
				indexed++
			}
		}
		if indexed == repoCount {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d first pushes indexed after a minute", indexed, repoCount)
		}
	}

	type pending struct {
		sha string
		at  time.Time
	}
	var mu sync.Mutex
	waiting := map[int64][]pending{}
	var lags []time.Duration
	done := make(chan struct{})
	watched := make(chan struct{})
	defer func() { close(done); <-watched }()
	go func() { // the watcher
		defer close(watched)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			heads := indexedHeads(b, env)
			if heads == nil {
				return
			}
			now := time.Now()
			mu.Lock()
			for repo, list := range waiting {
				for k, p := range list {
					if p.sha == heads[repo] { // this push and those before it are in
						for _, q := range list[:k+1] {
							lags = append(lags, now.Sub(q.at))
						}
						waiting[repo] = list[k+1:]
						break
					}
				}
			}
			mu.Unlock()
		}
	}()
	var wg sync.WaitGroup
	cpu, children := apptest.ProcessCPU(), apptest.ChildrenCPU()
	pace := time.NewTicker(time.Second / rate)
	i := 0
	for b.Loop() {
		<-pace.C
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			repo, sha := push(i)
			if sha == "" {
				return // reported
			}
			mu.Lock()
			waiting[repo] = append(waiting[repo], pending{sha, time.Now()})
			mu.Unlock()
		}(i)
		i++
	}
	pace.Stop()
	wg.Wait()
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		left := 0
		for _, list := range waiting {
			left += len(list)
		}
		mu.Unlock()
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d pushes not indexed 30 s after the last", left)
		}
		time.Sleep(10 * time.Millisecond)
	}
	b.ReportMetric(float64((apptest.ProcessCPU()-cpu).Microseconds())/1000/float64(b.N), "cpu-ms/push")
	b.ReportMetric(float64((apptest.ChildrenCPU()-children).Microseconds())/1000/float64(b.N), "git-cpu-ms/push")
	mu.Lock()
	defer mu.Unlock()
	slices.Sort(lags)
	at := func(p float64) float64 {
		return float64(lags[min(len(lags)-1, int(p*float64(len(lags))))].Microseconds()) / 1000
	}
	b.ReportMetric(at(0.5), "lag-p50-ms")
	b.ReportMetric(at(0.99), "lag-p99-ms")
	b.ReportMetric(float64(lags[len(lags)-1].Microseconds())/1000, "lag-max-ms")
}

// indexedHeads reads the head each repository's index is at.
func indexedHeads(b *testing.B, env *apptest.Env) map[int64]string {
	rows, err := env.App.DB.QueryContext(context.Background(), `SELECT repository_id, head_sha FROM code_search_work`)
	if err != nil {
		b.Error(err)
		return nil
	}
	defer rows.Close()
	heads := map[int64]string{}
	for rows.Next() {
		var id int64
		var sha string
		if err := rows.Scan(&id, &sha); err != nil {
			b.Error(err)
			return nil
		}
		heads[id] = sha
	}
	return heads
}

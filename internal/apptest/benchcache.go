package apptest

import (
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"forgeapi/internal/app"
	"forgeapi/internal/store"
)

// StartCached starts a server on data that seed makes once and that is
// kept between runs, for benchmarks whose data takes minutes to make:
// on SQLite a data directory under the temporary directory, on
// PostgreSQL a database of its own, each named by key ("bench_" before
// it), and taking that name only once seed has completed. key is letters,
// digits and underscores; it names the data's shape (a version to bump
// when seed changes) and size. The server migrates kept data forward as
// it starts, as it would an instance's. Whatever the benchmark writes
// stays in the kept data: it must make its own names unique (Unique).
func StartCached(tb testing.TB, key string, seed func(*Env)) *Env {
	tb.Helper()
	key = "bench_" + key
	if base := os.Getenv(PostgresURLEnv); base != "" {
		return startCachedPostgres(tb, base, key, seed)
	}
	dir := filepath.Join(os.TempDir(), "forgeapi-bench", key)
	inDir := func(d string) Option { return func(cfg *app.Config) { cfg.DataDir = d } }
	if _, err := os.Stat(dir); err == nil {
		return Start(tb, inDir(dir))
	}
	building := dir + ".building"
	if err := os.RemoveAll(building); err != nil {
		tb.Fatal(err)
	}
	if err := os.MkdirAll(building, 0o755); err != nil {
		tb.Fatal(err)
	}
	env := Start(tb, inDir(building))
	seed(env)
	env.Stop()
	if err := os.Rename(building, dir); err != nil {
		tb.Fatal(err)
	}
	return Start(tb, inDir(dir))
}

// startCachedPostgres is StartCached on PostgreSQL: a test database
// seeded, then renamed to key.
func startCachedPostgres(tb testing.TB, base, key string, seed func(*Env)) *Env {
	admin, err := store.OpenPostgresSQL(base)
	if err != nil {
		tb.Fatal(err)
	}
	defer admin.Close()
	startKept := func() *Env { // no test database copied for nothing
		cfg := testConfig(tb)
		cfg.DatabaseURL = databaseURL(base, key, testSchema)
		return StartConfig(tb, cfg)
	}
	var exists bool
	if err := admin.QueryRow(`SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, key).Scan(&exists); err != nil {
		tb.Fatal(err)
	}
	if exists {
		return startKept()
	}
	env := Start(tb)
	u, err := url.Parse(env.Config.DatabaseURL)
	if err != nil {
		tb.Fatal(err)
	}
	seed(env)
	env.Stop()
	if _, err := admin.Exec("ALTER DATABASE " + strings.TrimPrefix(u.Path, "/") + " RENAME TO " + key); err != nil {
		tb.Fatal(err)
	}
	return startKept()
}

// Latencies times a benchmark's requests, for the percentiles its
// targets name: Time each request, then Report.
type Latencies struct {
	times []time.Duration
	cpu   time.Duration
}

// NewLatencies starts timing; call it just before the benchmark's loop.
func NewLatencies() *Latencies { return &Latencies{cpu: ProcessCPU()} }

// Time runs f and records how long it took.
func (l *Latencies) Time(f func()) {
	start := time.Now()
	f()
	l.times = append(l.times, time.Since(start))
}

// Report reports the 50th and 99th percentiles of the times (p50-ms,
// p99-ms) and the process's CPU time per operation (cpu-ms/op: on a
// machine shared with other work, what a request costs says more than
// its wall time; the server's background workers count too).
func (l *Latencies) Report(b *testing.B) {
	if len(l.times) == 0 {
		return
	}
	b.ReportMetric(float64((ProcessCPU()-l.cpu).Microseconds())/1000/float64(len(l.times)), "cpu-ms/op")
	slices.Sort(l.times)
	at := func(p float64) float64 {
		return float64(l.times[min(len(l.times)-1, int(p*float64(len(l.times))))].Microseconds()) / 1000
	}
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
}

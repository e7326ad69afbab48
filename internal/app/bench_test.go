package app_test

import (
	"bufio"
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"forgeapi/internal/app"
	"forgeapi/internal/apptest"
)

// BenchmarkGetRepository measures an authenticated (classic token)
// GET /repos/{owner}/{repo} of a private organization repository through
// the real HTTP server, on SQLite unless FORGEAPI_TEST_POSTGRES_URL is
// set. ns/op is the client's round trip; server-ns/op is the server's own
// wall time per request from its latency histogram (target: under 100 µs);
// cpu-ns/op is the CPU time of the whole process, client included, per
// request, which stays meaningful when other work shares the machine.
func BenchmarkGetRepository(b *testing.B) {
	env := apptest.Start(b, apptest.WithMetrics())
	octocat := env.User("octocat")
	acme := env.Org("acme", octocat)
	env.Repo(acme, "widgets", apptest.RepoOpts{Private: true})
	token := env.Token(octocat, "repo")
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	req, err := http.NewRequest("GET", env.URL+"/repos/acme/widgets", nil)
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)

	countBefore, sumBefore := serverLatency(b, env)
	b.ReportAllocs()
	b.ResetTimer()
	cpuBefore := apptest.ProcessCPU()
	for b.Loop() {
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
	b.StopTimer()
	if cpu := apptest.ProcessCPU() - cpuBefore; cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
	count, sum := serverLatency(b, env)
	if n := count - countBefore; n > 0 {
		b.ReportMetric((sum-sumBefore)/n*1e9, "server-ns/op")
	}
}

// BenchmarkGetRepositoryHandler is BenchmarkGetRepository without the
// network: the request goes straight to the server's handler (every
// middleware, the token lookup, the access guard, the handler), so ns/op
// and cpu-ns/op are the server's cost alone.
func BenchmarkGetRepositoryHandler(b *testing.B) {
	benchmarkGetRepositoryHandler(b, slog.New(slog.DiscardHandler))
}

// BenchmarkGetRepositoryHandlerAccessLog is BenchmarkGetRepositoryHandler
// with the access log on (JSON, into io.Discard): the difference is the
// cost of one access log line.
func BenchmarkGetRepositoryHandlerAccessLog(b *testing.B) {
	logger, err := app.NewLogger(io.Discard, "info", "json")
	if err != nil {
		b.Fatal(err)
	}
	benchmarkGetRepositoryHandler(b, logger)
}

func benchmarkGetRepositoryHandler(b *testing.B, logger *slog.Logger) {
	env := apptest.Start(b, func(c *app.Config) { c.Logger = logger })
	octocat := env.User("octocat")
	acme := env.Org("acme", octocat)
	env.Repo(acme, "widgets", apptest.RepoOpts{Private: true})
	token := env.Token(octocat, "repo")
	handler := env.Main.Handler()
	req := httptest.NewRequest("GET", "/repos/acme/widgets", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.RemoteAddr = "127.0.0.1:1234"

	b.ReportAllocs()
	b.ResetTimer()
	cpuBefore := apptest.ProcessCPU()
	for b.Loop() {
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d", rec.Code)
		}
	}
	b.StopTimer()
	if cpu := apptest.ProcessCPU() - cpuBefore; cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

// serverLatency reads the request count and the latency sum (seconds) of
// GET /repos/{owner}/{repo} from /metrics.
func serverLatency(b *testing.B, env *apptest.Env) (count, sum float64) {
	resp, err := http.Get(env.Main.MetricsURL())
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	const route = `{route="GET /repos/{owner}/{repo}"}`
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		name, value, ok := strings.Cut(line, route+" ")
		if !ok {
			continue
		}
		v, _ := strconv.ParseFloat(value, 64)
		switch name {
		case "forgeapi_http_request_duration_seconds_count":
			count = v
		case "forgeapi_http_request_duration_seconds_sum":
			sum = v
		}
	}
	return count, sum
}

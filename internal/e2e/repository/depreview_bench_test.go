package repository_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"syscall"
	"testing"
	"time"

	"forgeapi/internal/app"
	"forgeapi/internal/apptest"
	"forgeapi/internal/depreview"
	"forgeapi/internal/depreview/advisory"
	"forgeapi/internal/depreview/advisorydb"
)

const (
	benchPackages = 5000
	benchChanged  = 200
)

// benchLockfile returns a package-lock.json (v3) with n packages; with
// bump, the first changed of them have a new version.
func benchLockfile(tb testing.TB, n, changed int, bump bool) string {
	tb.Helper()
	packages := map[string]any{"": map[string]any{"name": "bench", "version": "1.0.0"}}
	for i := range n {
		version := fmt.Sprintf("1.%d.0", i%50)
		if bump && i < changed {
			version = fmt.Sprintf("2.%d.0", i%50)
		}
		packages["node_modules/"+benchName(i)] = map[string]any{
			"version":   version,
			"resolved":  "https://registry.npmjs.org/" + benchName(i) + "/-/pkg-" + version + ".tgz",
			"integrity": "sha512-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==",
			"license":   "MIT",
			"dev":       i%3 == 0,
		}
	}
	data, err := json.Marshal(map[string]any{"name": "bench", "lockfileVersion": 3, "requires": true, "packages": packages})
	if err != nil {
		tb.Fatal(err)
	}
	return string(data)
}

func benchName(i int) string {
	if i%10 == 0 {
		return fmt.Sprintf("@scope%d/pkg-%05d", i%7, i)
	}
	return fmt.Sprintf("pkg-%05d", i)
}

// benchAdvisories stores one advisory per 25 packages.
func benchAdvisories(tb testing.TB, env *apptest.Env) {
	tb.Helper()
	var records []advisory.Record
	for i := 0; i < benchPackages; i += 25 {
		doc := fmt.Sprintf(`{"id": "GHSA-bench-%04d", "summary": "bench", "database_specific": {"severity": "HIGH"},
			"affected": [{"package": {"ecosystem": "npm", "name": %q}, "ranges": [{"type": "SEMVER", "events": [{"introduced": "0"}, {"fixed": "1.30.0"}]}]}]}`, i, benchName(i))
		rec, err := advisory.ParseRecord("bench.json", []byte(doc))
		apptest.Must(tb, "advisory", err)
		records = append(records, rec)
	}
	_, err := advisorydb.Import(context.Background(), env.App.DB, records)
	apptest.Must(tb, "import", err)
}

// BenchmarkCompare5000PackageLock answers the comparison of two commits
// whose package-lock.json hold 5,000 packages each (200 changed, so 400
// change items) through the real HTTP endpoint, first page of 100.
// "cold" runs without the parsed-manifest cache (every request parses both
// lockfiles); "warm" is the server's default, after the first request.
// "parse-only" is the share of parsing: both lockfiles, no HTTP or git.
func BenchmarkCompare5000PackageLock(b *testing.B) {
	base := benchLockfile(b, benchPackages, benchChanged, false)
	head := benchLockfile(b, benchPackages, benchChanged, true)
	for _, bc := range []struct {
		name  string
		cache int
	}{{"cold", -1}, {"warm", 0}} {
		b.Run(bc.name, func(b *testing.B) {
			env := apptest.Start(b, func(c *app.Config) { c.ManifestCache = bc.cache })
			benchAdvisories(b, env)
			repo := env.Repo(env.User("octo"), "app")
			c := newClone(b, env, repo, repo.Owner)
			c.commit("base", map[string]*string{"package-lock.json": &base})
			c.git("checkout", "-q", "-b", "topic")
			c.commit("bump 200", map[string]*string{"package-lock.json": &head})
			c.push("main", "topic")
			url := env.URL + comparePath(repo, "main...topic") + "?per_page=100"
			get := func() {
				resp, err := http.Get(url)
				if err != nil {
					b.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || len(body) < 1000 {
					b.Fatalf("%d %s", resp.StatusCode, body)
				}
			}
			get() // connection, advisory index and (warm) cache
			cpu := cpuTime()
			for b.Loop() {
				get()
			}
			reportMillis(b, b.Elapsed(), cpuTime()-cpu)
		})
	}
	b.Run("parse-only", func(b *testing.B) {
		ex := depreview.NewExtractor()
		ctx := context.Background()
		start, cpu := time.Now(), cpuTime()
		for b.Loop() {
			for _, content := range []string{base, head} {
				if _, err := ex.Extract(ctx, "package-lock.json", []byte(content)); err != nil {
					b.Fatal(err)
				}
			}
		}
		reportMillis(b, time.Since(start), cpuTime()-cpu)
	})
}

// reportMillis reports wall and CPU milliseconds per operation. The CPU
// time is the whole process's (client and server run in it), which stays
// meaningful when other work shares the machine's cores.
func reportMillis(b *testing.B, wall, cpu time.Duration) {
	b.ReportMetric(float64(wall.Microseconds())/float64(b.N)/1000, "ms/op")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N)/1000, "cpu-ms/op")
}

// cpuTime is the CPU time (user and system) the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

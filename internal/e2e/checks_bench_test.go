package e2e_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"forgeapi/internal/apps"
	"forgeapi/internal/apptest"
	"forgeapi/internal/testwait"
	"forgeapi/internal/webhooks"
)

// BenchmarkCheckRun measures what a CI app does for each build on SQLite,
// in process: create a check run in progress, then complete it with a
// conclusion and an output, through an installation token (every
// middleware, the token and installation lookups, the run and its suite
// written in their transaction with the check_run deliveries of one
// subscribed repository hook, the response). Every delivery is sent and
// logged by the dispatcher meanwhile. It reports runs/s, check runs
// created and completed per second until every delivery was received
// and logged (as BenchmarkCreateIssueWithHook counts), api-runs/s the
// same for the API calls alone, and cpu-ns/op, the CPU time of the whole
// process (the dispatcher and the receiver included) per run.
func BenchmarkCheckRun(b *testing.B) {
	env := apptest.Start(b, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	var received atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { received.Add(1) }))
	b.Cleanup(srv.Close)
	octo := env.User("octo")
	org := env.Org("acme", octo)
	repo := env.Repo(org, "widget")
	user := env.Token(octo, "repo", "admin:repo_hook")
	resp, body := env.DoJSON("POST", "/repos/acme/widget/hooks", user,
		`{"events":["check_run"],"config":{"url":"`+srv.URL+`","content_type":"json"}}`)
	apptest.WantStatus(b, "hook", resp, body, http.StatusCreated)
	a := env.RegisterApp(org, "Bench CI", "checks:write,contents:read")
	inst := env.Install(a, org, repo)
	minted, err := env.Apps().Mint(env.Context(), &a.App, inst, apps.TokenRequest{})
	apptest.Must(b, "mint", err)
	work := apptest.WorkTree(b, map[string]string{"a.txt": "1\n"})
	sha := strings.TrimSpace(apptest.Git(b, work, "rev-parse", "HEAD"))
	apptest.Git(b, work, "push", "-q", env.GitURL("acme", "widget", "octo", user), "HEAD:refs/heads/main")
	h := env.Main.Handler()
	do := func(method, path, body string, want int) []byte {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Authorization", "token "+minted.Token)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != want {
			b.Fatalf("%s %s: %d %s", method, path, rec.Code, rec.Body)
		}
		return rec.Body.Bytes()
	}
	create := `{"name":"build","head_sha":"` + sha + `","status":"in_progress"}`
	complete := `{"conclusion":"success","output":{"title":"ok","summary":"All tests passed"}}`
	b.ReportAllocs()
	b.ResetTimer()
	start, cpu := time.Now(), apptest.ProcessCPU()
	for i := 0; i < b.N; i++ {
		var run struct{ ID int64 }
		if err := json.Unmarshal(do("POST", "/repos/acme/widget/check-runs", create, http.StatusCreated), &run); err != nil {
			b.Fatal(err)
		}
		do("PATCH", fmt.Sprintf("/repos/acme/widget/check-runs/%d", run.ID), complete, http.StatusOK)
	}
	api := time.Since(start)
	want := 2 * b.N // check_run created and completed
	testwait.Until(b, "every delivery received and logged", func() bool {
		var logged int
		err := env.App.DB.QueryRowContext(apptest.Ctx(), `SELECT count(*) FROM hook_deliveries WHERE repository_id = $1
			AND event = 'check_run' AND state = 'done' AND status_code = 200`, repo.ID).Scan(&logged)
		return err == nil && logged >= want && received.Load() >= int64(want)
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "runs/s")
	b.ReportMetric(float64(b.N)/api.Seconds(), "api-runs/s")
	b.ReportMetric(float64((apptest.ProcessCPU()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

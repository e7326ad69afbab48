package e2e_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"forgeapi/internal/app"
	"forgeapi/internal/apptest"
)

// BenchmarkNotModified measures the server's own cost of a conditional
// poll answered 304 (no network: the request goes straight to the
// server's handler, every middleware included), anonymous and with a
// token, beside a bare handler that answers a fixed 304. The "-served"
// cases run as `forgeapi serve` does by default: rate limits on (the 304
// carries the budget's headers and gives its request back) and the access
// log line formatted (the text format of --log-format, into io.Discard); the
// others leave both out. cpu-ns/op is the process's CPU time per poll
// (the garbage collector's included), which stays meaningful when other
// work shares the machine.
func BenchmarkNotModified(b *testing.B) {
	bare := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `W/"fixed"`)
		w.WriteHeader(http.StatusNotModified)
	})
	b.Run("bare", func(b *testing.B) { poll(b, bare, "/events", "", `W/"fixed"`) })
	served := func(c *app.Config) {
		c.RateLimit = true
		logger, err := app.NewLogger(io.Discard, "info", app.LogFormatText)
		if err != nil {
			b.Fatal(err)
		}
		c.Logger = logger
	}
	for _, set := range []struct {
		suffix   string
		opts     []apptest.Option
		received bool
	}{
		{"", nil, true},
		{"-served", []apptest.Option{served}, false},
	} {
		env := apptest.Start(b, set.opts...)
		alice, bob := env.User("alice"), env.User("bob")
		env.Repo(alice, "pub")
		env.Repo(bob, "other")
		token := env.Token(alice, "repo", "user")
		for _, path := range []string{"/user/starred/bob/other", "/user/following/bob"} {
			if resp, body := env.DoJSON("PUT", path, token, ""); resp.StatusCode != http.StatusNoContent {
				b.Fatalf("PUT %s: %d %s", path, resp.StatusCode, body)
			}
		}
		cases := []struct{ name, path, token string }{
			{"events-anonymous", "/events", ""},
			{"user-events-token", "/users/alice/events", token},
		}
		if set.received {
			cases = append(cases, struct{ name, path, token string }{"received-events-token", "/users/alice/received_events", token})
		}
		for _, c := range cases {
			resp, _ := env.Do("GET", c.path, c.token, nil)
			etag := resp.Header.Get("ETag")
			b.Run(c.name+set.suffix, func(b *testing.B) { poll(b, env.Main.Handler(), c.path, c.token, etag) })
			if set.suffix == "-served" {
				// The bare handler again, answering with this 304's
				// header lines: the yardstick of the same bytes.
				resp, _ = env.Do("GET", c.path, c.token, nil, "If-None-Match", etag)
				lines := resp.Header.Clone()
				lines.Del("Date")
				same := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					h := w.Header()
					for k, v := range lines {
						h[k] = v
					}
					w.WriteHeader(http.StatusNotModified)
				})
				b.Run(c.name+"-bare-same-headers", func(b *testing.B) { poll(b, same, c.path, c.token, etag) })
			}
		}
	}
}

func poll(b *testing.B, h http.Handler, path, token, etag string) {
	req := httptest.NewRequest("GET", path, nil)
	req.RemoteAddr = "127.0.0.1:1234"
	req.Header.Set("If-None-Match", etag)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	b.ReportAllocs()
	cpuBefore := apptest.ProcessCPU()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusNotModified {
			b.Fatalf("GET %s: %d", path, rec.Code)
		}
	}
	if cpu := apptest.ProcessCPU() - cpuBefore; cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

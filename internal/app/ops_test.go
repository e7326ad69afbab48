package app_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"forgeapi/internal/app"
	"forgeapi/internal/apptest"
	"forgeapi/internal/testwait"
)

// logBuffer collects a logger's output; safe for the server's goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// records decodes the JSON log lines.
func (b *logBuffer) records(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.SplitSeq(strings.TrimSpace(b.String()), "\n") {
		if line == "" {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line is not JSON: %v: %s", err, line)
		}
		out = append(out, rec)
	}
	return out
}

// waitRecord polls the log until a record satisfies match.
func (b *logBuffer) waitRecord(t *testing.T, what string, match func(map[string]any) bool) map[string]any {
	t.Helper()
	var found map[string]any
	testwait.For(t, "a log record of "+what, func() error {
		for _, rec := range b.records(t) {
			if match(rec) {
				found = rec
				return nil
			}
		}
		return fmt.Errorf("none in:\n%s", b.String())
	})
	return found
}

// withJSONLog logs to the buffer as --log-format json --log-level LEVEL.
func withJSONLog(t *testing.T, buf *logBuffer, level string) apptest.Option {
	logger, err := app.NewLogger(buf, level, "json")
	apptest.Must(t, "logger", err)
	return func(c *app.Config) { c.Logger = logger }
}

func requestRecord(id string) func(map[string]any) bool {
	return func(rec map[string]any) bool { return rec["msg"] == "request" && rec["request_id"] == id }
}

func TestAccessLogHasOneLinePerRequestWithoutCredentials(t *testing.T) {
	t.Parallel()
	var logs logBuffer
	env := apptest.Start(t, withJSONLog(t, &logs, "info"))
	octocat := env.User("octocat", apptest.UserOpts{Password: "hunter2-password"})
	env.Repo(octocat, "hello", apptest.RepoOpts{Private: true}) // git sends credentials only when asked
	token := env.Token(octocat, "repo")

	resp, body := get(env, "/repos/octocat/hello", "Bearer "+token)
	wantStatus(t, "get repository", resp, body, 200)
	rec := logs.waitRecord(t, "GET /repos/octocat/hello", requestRecord(resp.Header.Get("X-Service-Request-Id")))
	want := map[string]any{"level": "INFO", "method": "GET", "route": "GET /repos/{owner}/{repo}", "status": 200.0,
		"bytes": float64(len(body)), "principal": "classic", "principal_id": float64(octocat.ID), "client": "127.0.0.1"}
	for k, v := range want {
		if rec[k] != v {
			t.Errorf("access log %s = %v, want %v (record %v)", k, rec[k], v, rec)
		}
	}
	if d, ok := rec["duration"].(float64); !ok || d <= 0 {
		t.Errorf("access log duration %v", rec["duration"])
	}
	if id, _ := rec["token_id"].(float64); id <= 0 {
		t.Errorf("access log token_id %v", rec["token_id"])
	}

	// A password, a token in the query string, a bad token, a 404.
	resp, body = get(env, "/user", basic("octocat", "hunter2-password"))
	wantStatus(t, "password", resp, body, 200)
	rec = logs.waitRecord(t, "GET /user with a password", requestRecord(resp.Header.Get("X-Service-Request-Id")))
	if rec["principal"] != "password" || rec["principal_id"] != float64(octocat.ID) || rec["token_id"] != 0.0 {
		t.Errorf("password request logged as %v", rec)
	}
	resp, _ = get(env, "/user?access_token="+token+"&client_secret=s3cr3t-in-query", "")
	rec = logs.waitRecord(t, "GET /user?access_token=...", requestRecord(resp.Header.Get("X-Service-Request-Id")))
	if rec["principal"] != "anonymous" || rec["status"] != 401.0 || rec["route"] != "GET /user" {
		t.Errorf("query-string request logged as %v", rec)
	}
	resp, _ = get(env, "/no/such/thing", "Bearer not-a-real-token")
	rec = logs.waitRecord(t, "GET /no/such/thing", requestRecord(resp.Header.Get("X-Service-Request-Id")))
	if rec["route"] != "unmatched" || rec["status"] != 404.0 {
		t.Errorf("unmatched request logged as %v", rec)
	}

	// Git over HTTP is logged the same way, with its principal.
	apptest.Git(t, t.TempDir(), "clone", "-q", env.GitURL("octocat", "hello", "octocat", token), "clone")
	rec = logs.waitRecord(t, "git clone", func(rec map[string]any) bool {
		return rec["msg"] == "request" && rec["route"] == "POST /{owner}/{repo}/git-upload-pack"
	})
	if rec["principal"] != "classic" || rec["principal_id"] != float64(octocat.ID) || rec["status"] != 200.0 || rec["bytes"].(float64) <= 0 {
		t.Errorf("git request logged as %v", rec)
	}

	text := logs.String()
	for _, secret := range []string{token, "hunter2-password", "s3cr3t-in-query", "not-a-real-token", "Authorization", "access_token"} {
		if strings.Contains(text, secret) {
			t.Errorf("the log contains %q:\n%s", secret, text)
		}
	}
}

// TestTextAccessLogLine checks the access line of --log-format text, which
// the server writes itself (httpapi.AccessLines): logfmt, the route
// quoted, the same fields as the JSON line.
func TestTextAccessLogLine(t *testing.T) {
	t.Parallel()
	var logs logBuffer
	logger, err := app.NewLogger(&logs, "info", app.LogFormatText)
	apptest.Must(t, "logger", err)
	env := apptest.Start(t, func(c *app.Config) { c.Logger = logger })
	octocat := env.User("octocat")
	env.Repo(octocat, "hello")
	token := env.Token(octocat, "repo")
	resp, body := get(env, "/repos/octocat/hello", "Bearer "+token)
	wantStatus(t, "get repository", resp, body, 200)
	id := resp.Header.Get("X-Service-Request-Id")
	var line string
	testwait.For(t, "the text access line of request "+id, func() error {
		for l := range strings.SplitSeq(logs.String(), "\n") {
			if strings.Contains(l, " request_id="+id+" ") {
				line = l
			}
		}
		if line == "" {
			return fmt.Errorf("none in:\n%s", logs.String())
		}
		return nil
	})
	if !strings.HasPrefix(line, "time=") {
		t.Fatalf("the access line of request %s does not start with time=: %s", id, line)
	}
	for _, want := range []string{" level=INFO msg=request method=GET ", ` route="GET /repos/{owner}/{repo}" status=200 bytes=`,
		" duration=", " principal=classic principal_id=", " client=127.0.0.1"} {
		if !strings.Contains(line, want) {
			t.Errorf("access line lacks %q: %s", want, line)
		}
	}
	if strings.Contains(logs.String(), token) {
		t.Error("the log contains the token")
	}
}

func TestLogLevelWarnTurnsTheAccessLogOff(t *testing.T) {
	t.Parallel()
	var logs logBuffer
	env := apptest.Start(t, withJSONLog(t, &logs, "warn"))
	resp, body := get(env, "/rate_limit", "")
	wantStatus(t, "rate limit", resp, body, 200)
	env.Stop()
	for _, rec := range logs.records(t) {
		if rec["msg"] == "request" || rec["level"] == "INFO" {
			t.Errorf("info record at --log-level warn: %v", rec)
		}
	}
}

func TestStartLogNamesDataDirDatabaseAndBaseURL(t *testing.T) {
	t.Parallel()
	var logs logBuffer
	env := apptest.Start(t, withJSONLog(t, &logs, "info"), func(c *app.Config) { c.BaseURL = "https://forge.example.test/api/v3/" })
	starting := logs.waitRecord(t, "starting", func(rec map[string]any) bool { return rec["msg"] == "starting forgeapi" })
	wantDB := "sqlite"
	if env.Config.DatabaseURL != "" {
		wantDB = "postgres"
	}
	if starting["data_dir"] != env.DataDir || starting["database"] != wantDB || starting["version"] == "" {
		t.Errorf("start record %v", starting)
	}
	listening := logs.waitRecord(t, "listening", func(rec map[string]any) bool {
		return strings.HasPrefix(rec["msg"].(string), "listening on ")
	})
	if listening["base_url"] != "https://forge.example.test/api/v3" || listening["addr"] != strings.TrimPrefix(env.URL, "http://") ||
		listening["database"] != wantDB || listening["data_dir"] != env.DataDir {
		t.Errorf("listening record %v", listening)
	}
	if where, _ := starting["database_at"].(string); env.Config.DatabaseURL != "" && strings.Contains(where, "?") {
		t.Errorf("database_at %q carries the URL's query", where)
	}
}

func TestMetricsAreOffByDefault(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	if env.Main.MetricsURL() != "" {
		t.Errorf("metrics served at %s without MetricsAddr", env.Main.MetricsURL())
	}
	resp, body := get(env, "/metrics", "")
	wantError(t, "metrics on the API port", resp, body, 404)
}

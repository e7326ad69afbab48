package app_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"forgeapi/internal/app"
	"forgeapi/internal/apptest"
)

// hostileValues are what a careless or hostile client puts where a name,
// a SHA, a path or a text is expected: control characters, path tricks,
// git's forbidden characters and revision syntax, names NTFS and HFS+
// take for ".git", very long and non-ASCII strings.
var hostileValues = []string{
	"", "\x00", "a\x00b", "\r\n", "a\nb", "\t", " ", ".", "..", "../config", "/", `\`, `..\..\pwn`, `C:\x`,
	strings.Repeat("a", 10000), strings.Repeat("é", 300), "🙂", "\u202egnp.exe", ".g\u200cit", ".GIT", "git~1", ".git.",
	"refs/heads/", "refs/heads/main", "-x", "--upload-pack=touch x", "@", "main@{1}", "x.lock", "~^:?*[", "%00", "\xff\xfe",
	"-1", "99999999999999999999", "null", "' OR '1'='1",
}

// hostileRoute is a route of the newer areas with default values for its
// path parameters ({name} in Path, before or after '?') and for its body
// (every string field of Body is fuzzed in turn).
type hostileRoute struct {
	Method, Path string
	Params       map[string]string
	Body         map[string]any
}

// hostileFixture is a repository with two branches, a pull request
// between them with a review comment, an issue and a status: what the
// routes' default values name.
type hostileFixture struct {
	env    *apptest.Env
	token  string
	routes []hostileRoute
	logs   *safeBuffer
}

// safeBuffer collects the server's log; safe for its goroutines.
type safeBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *safeBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *safeBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func newHostileFixture(t testing.TB) *hostileFixture {
	t.Helper()
	logs := &safeBuffer{}
	env := apptest.Start(t, func(c *app.Config) {
		c.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	})
	octo := env.User("octo")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo")
	work := apptest.WorkTree(t, map[string]string{"README.md": "hello\n", "docs/guide.md": "guide\n"})
	base := strings.TrimSpace(apptest.Git(t, work, "rev-parse", "HEAD"))
	head := apptest.Commit(t, work, "change", map[string]string{"README.md": "hello again\n", "docs/new.md": "new\n"})
	apptest.Git(t, work, "push", "-q", env.GitURL("octo", "hello", "octo", token), base+":refs/heads/main", head+":refs/heads/feature")
	blob := strings.TrimSpace(apptest.Git(t, work, "rev-parse", base+":README.md"))
	tree := strings.TrimSpace(apptest.Git(t, work, "rev-parse", base+"^{tree}"))

	f := &hostileFixture{env: env, token: token, logs: logs}
	f.mustCreate(t, "/repos/octo/hello/pulls", `{"title":"t","head":"feature","base":"main"}`) // #1
	f.mustCreate(t, "/repos/octo/hello/issues", `{"title":"i"}`)                               // #2
	comment := f.mustCreate(t, "/repos/octo/hello/pulls/1/comments",
		fmt.Sprintf(`{"body":"c","commit_id":%q,"path":"README.md","line":1,"side":"RIGHT"}`, head))
	f.mustCreate(t, "/repos/octo/hello/statuses/"+head, `{"state":"success","context":"ci"}`)

	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	// The owner and the repository are read by one guard for every route:
	// two routes take hostile values there.
	const r = "/repos/octo/hello"
	f.routes = []hostileRoute{
		{Method: "GET", Path: "/repos/{owner}/{repo}/contents/{path}", Params: with("owner", "octo", "repo", "hello", "path", "README.md")},
		{Method: "PUT", Path: "/repos/{owner}/{repo}/contents/{path}", Params: with("owner", "octo", "repo", "hello", "path", "fuzz/owner.txt"),
			Body: map[string]any{"message": "m", "content": "aGk="}},
		// contents
		{Method: "GET", Path: r + "/contents/{path}?ref={ref}", Params: with("path", "docs/guide.md", "ref", "feature")},
		{Method: "PUT", Path: r + "/contents/{path}", Params: with("path", "fuzz/new.txt"),
			Body: map[string]any{"message": "m", "content": "aGk=", "branch": "feature"}},
		{Method: "PUT", Path: r + "/contents/{path}", Params: with("path", "README.md"),
			Body: map[string]any{"message": "m", "content": "aGk=", "sha": blob, "branch": "main"}},
		{Method: "DELETE", Path: r + "/contents/{path}", Params: with("path", "docs/guide.md"),
			Body: map[string]any{"message": "m", "sha": "0000000000000000000000000000000000000000", "branch": "main"}},
		{Method: "GET", Path: r + "/readme/{dir}?ref={ref}", Params: with("dir", "docs", "ref", "main")},
		{Method: "GET", Path: "/raw/octo/hello/{ref}/{path}", Params: with("ref", "main", "path", "README.md")},
		// git database
		{Method: "GET", Path: r + "/git/ref/{ref}", Params: with("ref", "heads/feature")},
		{Method: "GET", Path: r + "/git/matching-refs/{ref}", Params: with("ref", "heads/f")},
		{Method: "POST", Path: r + "/git/refs", Body: map[string]any{"ref": "refs/heads/fuzz", "sha": head}},
		{Method: "PATCH", Path: r + "/git/refs/{ref}", Params: with("ref", "heads/feature"), Body: map[string]any{"sha": head, "force": true}},
		{Method: "DELETE", Path: r + "/git/refs/{ref}", Params: with("ref", "heads/no-such-branch")},
		{Method: "GET", Path: r + "/git/commits/{sha}", Params: with("sha", head)},
		{Method: "GET", Path: r + "/git/trees/{sha}?recursive={flag}", Params: with("sha", "main", "flag", "1")},
		{Method: "GET", Path: r + "/git/blobs/{sha}", Params: with("sha", blob)},
		{Method: "GET", Path: r + "/git/refs/{ref}", Params: with("ref", "heads")},
		{Method: "POST", Path: r + "/git/blobs", Body: map[string]any{"content": "x", "encoding": "utf-8"}},
		{Method: "POST", Path: r + "/git/trees", Body: map[string]any{"base_tree": tree,
			"tree": []any{map[string]any{"path": "fuzz/a.txt", "mode": "100644", "type": "blob", "sha": blob}}}},
		{Method: "POST", Path: r + "/git/commits", Body: map[string]any{"message": "m", "tree": tree, "parents": []any{head}, "signature": "s"}},
		{Method: "POST", Path: r + "/git/tags", Body: map[string]any{"tag": "v1", "message": "m", "object": head, "type": "commit"}},
		{Method: "GET", Path: r + "/git/tags/{sha}", Params: with("sha", blob)},
		{Method: "GET", Path: r + "/tags?per_page={n}", Params: with("n", "1")},
		// branches, commits, compare
		{Method: "GET", Path: r + "/branches/{branch}", Params: with("branch", "feature")},
		{Method: "GET", Path: r + "/branches?protected={flag}", Params: with("flag", "false")},
		{Method: "GET", Path: r + "/commits?sha={ref}&path={path}&author={user}", Params: with("ref", "feature", "path", "README.md", "user", "octo")},
		{Method: "GET", Path: r + "/commits/{ref}", Params: with("ref", "feature")},
		{Method: "GET", Path: r + "/compare/{basehead}", Params: with("basehead", "main...feature")},
		// statuses
		{Method: "POST", Path: r + "/statuses/{sha}", Params: with("sha", head),
			Body: map[string]any{"state": "pending", "context": "fuzz", "description": "d", "target_url": "https://ci.example/1"}},
		{Method: "GET", Path: r + "/commits/{ref}/status", Params: with("ref", "feature")},
		{Method: "GET", Path: r + "/commits/{ref}/statuses", Params: with("ref", "feature")},
		// pull requests, reviews, review comments
		{Method: "POST", Path: r + "/pulls", Body: map[string]any{"title": "t", "head": "feature", "base": "main", "body": "b"}},
		{Method: "GET", Path: r + "/pulls?state={state}&head={head}&base={base}&sort={sort}",
			Params: with("state", "all", "head", "octo:feature", "base", "main", "sort", "created")},
		{Method: "GET", Path: r + "/pulls/{n}", Params: with("n", "1")},
		{Method: "PATCH", Path: r + "/pulls/{n}", Params: with("n", "1"), Body: map[string]any{"title": "t", "body": "b", "state": "open", "base": "main"}},
		{Method: "GET", Path: r + "/pulls/{n}/files", Params: with("n", "1")},
		{Method: "GET", Path: r + "/pulls/{n}/commits", Params: with("n", "1")},
		{Method: "POST", Path: r + "/pulls/{n}/reviews", Params: with("n", "1"), Body: map[string]any{"body": "b", "event": "COMMENT", "commit_id": head}},
		{Method: "POST", Path: r + "/pulls/{n}/comments", Params: with("n", "1"),
			Body: map[string]any{"body": "b", "commit_id": head, "path": "README.md", "side": "RIGHT", "line": 1}},
		{Method: "POST", Path: r + "/pulls/{n}/comments/{id}/replies", Params: with("n", "1", "id", comment), Body: map[string]any{"body": "b"}},
		{Method: "PATCH", Path: r + "/pulls/comments/{id}", Params: with("id", comment), Body: map[string]any{"body": "b"}},
		{Method: "GET", Path: r + "/pulls/comments?sort={sort}&since={since}", Params: with("sort", "created", "since", "2020-01-01T00:00:00Z")},
		// issues
		{Method: "POST", Path: r + "/issues", Body: map[string]any{"title": "t", "body": "b"}},
		{Method: "GET", Path: r + "/issues?state={state}&labels={labels}&sort={sort}&since={since}",
			Params: with("state", "all", "labels", "bug", "sort", "created", "since", "2020-01-01T00:00:00Z")},
		{Method: "PATCH", Path: r + "/issues/{n}", Params: with("n", "2"), Body: map[string]any{"title": "t", "body": "b", "state": "open"}},
		{Method: "POST", Path: r + "/issues/{n}/comments", Params: with("n", "2"), Body: map[string]any{"body": "b"}},
		{Method: "POST", Path: r + "/issues/{n}/labels", Params: with("n", "2"), Body: map[string]any{"labels": []any{"bug"}}},
	}
	return f
}

// mustCreate posts body to path and returns the id of what it made.
func (f *hostileFixture) mustCreate(t testing.TB, path, body string) string {
	t.Helper()
	resp, b := f.env.DoJSON("POST", path, f.token, body)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST %s: %d %s", path, resp.StatusCode, b)
	}
	var made struct {
		ID int64 `json:"id"`
	}
	_ = json.Unmarshal(b, &made)
	return fmt.Sprint(made.ID)
}

var placeholder = regexp.MustCompile(`\{([a-z_]+)\}`)

// fields are the names a route's value can go in: its placeholders and
// its body's string fields, in a fixed order.
func (r hostileRoute) fields() []string {
	var out []string
	for _, m := range placeholder.FindAllStringSubmatch(r.Path, -1) {
		out = append(out, m[1])
	}
	var body []string
	for k, v := range r.Body {
		if _, ok := v.(string); ok {
			body = append(body, "body."+k)
		}
	}
	slices.Sort(body)
	return append(out, body...)
}

// inPath reports whether field is a path parameter (not a query
// parameter or a body field).
func (r hostileRoute) inPath(field string) bool {
	path, _, _ := strings.Cut(r.Path, "?")
	return strings.Contains(path, "{"+field+"}")
}

// request builds the route's request with value in field and the
// defaults elsewhere: escaped in the path and the query, as is in JSON.
func (f *hostileFixture) request(t testing.TB, r hostileRoute, field, value string) *http.Request {
	t.Helper()
	path, query, _ := strings.Cut(r.Path, "?")
	fill := func(s string, escape func(string) string) string {
		return placeholder.ReplaceAllStringFunc(s, func(m string) string {
			name := m[1 : len(m)-1]
			if name == field {
				return escape(value)
			}
			return r.Params[name]
		})
	}
	target := f.env.URL + fill(path, url.PathEscape)
	if query != "" {
		target += "?" + fill(query, url.QueryEscape)
	}
	var body io.Reader
	if r.Body != nil {
		fields := map[string]any{}
		for k, v := range r.Body {
			fields[k] = v
		}
		if name, ok := strings.CutPrefix(field, "body."); ok {
			fields[name] = value
		}
		b, err := json.Marshal(fields)
		apptest.Must(t, "encode body", err)
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequest(r.Method, target, body)
	apptest.Must(t, "request", err)
	req.Header.Set("Authorization", "Bearer "+f.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req
}

// check sends value in field of route and fails on a 5xx, a dropped
// connection or a panic in the server's log. A success is validated
// against the platform's description when validate is set; a refusal
// must be the platform's
// JSON error object. (Refusals are not validated against the
// description: many of these requests are malformed in ways no
// description covers, such as a 404 for a reference with a NUL byte on
// an operation that documents none; the areas' own tests validate their
// refusals.)
func (f *hostileFixture) check(t *testing.T, r hostileRoute, field, value string, validate bool) {
	t.Helper()
	req := f.request(t, r, field, value)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s with %s=%q: %v", r.Method, r.Path, field, value, err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var refusal struct {
		Message *string `json:"message"`
	}
	switch {
	case resp.StatusCode >= 500:
		t.Errorf("%s %s with %s=%q: %d %.200s", r.Method, r.Path, field, value, resp.StatusCode, b)
	case resp.StatusCode >= 400:
		if json.Unmarshal(b, &refusal) != nil || refusal.Message == nil {
			t.Errorf("%s %s with %s=%q: %d %.200s: not the platform's error object", r.Method, r.Path, field, value, resp.StatusCode, b)
		}
	case validate:
		if v := apptest.SharedValidator(); v != nil {
			if err := v.Check(req, resp.StatusCode, resp.Header, b); err != nil {
				t.Errorf("%s %s with %s=%q: %v", r.Method, r.Path, field, value, err)
			}
		}
	}
	if logs := f.logs.String(); strings.Contains(logs, "panic") {
		t.Fatalf("%s %s with %s=%q: the server panicked:\n%s", r.Method, r.Path, field, value, logs)
	}
}

// TestHostileValuesOnNewerRoutes puts each hostile value into each path
// parameter and string body field of the newer routes (contents, git
// objects and references, branches, commits, compare, statuses, pull requests,
// reviews, review comments, issues), one at a time: none may answer a 5xx
// or panic.
func TestHostileValuesOnNewerRoutes(t *testing.T) {
	t.Parallel()
	f := newHostileFixture(t)
	start, sent := time.Now(), 0
	for _, r := range f.routes {
		for _, field := range r.fields() {
			for _, v := range hostileValues {
				if v == "" && r.inPath(field) {
					continue // an empty path parameter makes another path, not a value of the parameter
				}
				f.check(t, r, field, v, true)
				sent++
			}
		}
	}
	t.Logf("%d requests in %v", sent, time.Since(start).Round(time.Millisecond))
}

// FuzzNewerRoutes is TestHostileValuesOnNewerRoutes for `go test -fuzz`:
// any route, any field, any value, starting from the hostile values.
// Without -fuzz it is skipped: its seeds are the test's.
//
//	go test ./internal/app -run '^$' -fuzz FuzzNewerRoutes -fuzztime 1m -parallel 1
func FuzzNewerRoutes(f *testing.F) {
	if fuzz := flag.Lookup("test.fuzz"); fuzz == nil || fuzz.Value.String() == "" {
		f.Skip("TestHostileValuesOnNewerRoutes sends the seeds; run with -fuzz to search further")
	}
	fix := newHostileFixture(f)
	for i, v := range hostileValues {
		f.Add(uint(i), uint(i*7), v)
	}
	f.Fuzz(func(t *testing.T, route, field uint, value string) {
		r := fix.routes[route%uint(len(fix.routes))]
		fields := r.fields()
		// Successes are not validated here: the validator prepares an
		// operation's schemas on its first use, which can take longer than
		// the fuzzer's 10 seconds for one input.
		fix.check(t, r, fields[field%uint(len(fields))], value, false)
	})
}

// TestUnstorableTextOutsideTheAPI sends a NUL and bytes that are not
// UTF-8 to the routes outside the API (OAuth web flow, console forms,
// git over HTTP): PostgreSQL can keep neither, and none may answer a 5xx.
func TestUnstorableTextOutsideTheAPI(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo := env.User("octo")
	env.Repo(octo, "hello")
	form := "application/x-www-form-urlencoded"
	for _, bad := range []string{"a%00b", "%FF%FE"} {
		for _, c := range []struct{ method, path, body string }{
			{"GET", "/login/oauth/authorize?client_id=" + bad, ""},
			{"POST", "/login/oauth/access_token", "grant_type=authorization_code&code=x&client_id=" + bad},
			{"POST", "/login/device/code", "client_id=" + bad},
			{"POST", "/login", "login=" + bad + "&password=x"},
			{"GET", "/octo/hello.git/info/refs?service=" + bad, ""},
			{"GET", "/" + bad + "/hello.git/info/refs?service=git-upload-pack", ""},
			{"GET", "/api/v3/repos/octo/hello/issues?creator=" + bad, ""},
		} {
			req, err := http.NewRequest(c.method, env.URL+c.path, strings.NewReader(c.body))
			apptest.Must(t, "request", err)
			if c.body != "" {
				req.Header.Set("Content-Type", form)
			}
			resp, err := env.HTTPClient().Do(req)
			apptest.Must(t, c.method+" "+c.path, err)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode >= 500 {
				t.Errorf("%s %s (%s): %d %.200s", c.method, c.path, c.body, resp.StatusCode, b)
			}
		}
	}
}

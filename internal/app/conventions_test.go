package app_test

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
)

func TestAPIVersionHeader(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	env.Repo(env.User("octocat"), "hello")

	for _, c := range []struct {
		name     string
		headers  []string
		selected string
	}{
		{"absent", nil, "2022-11-28"},
		{"2022-11-28", []string{"X-Service-Api-Version", "2022-11-28"}, "2022-11-28"},
		{"2026-03-10", []string{"X-Service-Api-Version", "2026-03-10"}, "2026-03-10"},
		{"alias", []string{"X-GitHub-Api-Version", "2026-03-10"}, "2026-03-10"},
		{"own header wins over alias", []string{"X-Service-Api-Version", "2022-11-28", "X-GitHub-Api-Version", "2026-03-10"}, "2022-11-28"},
	} {
		resp, body := get(env, "/repos/octocat/hello", "", c.headers...)
		wantStatus(t, c.name, resp, body, 200)
		if got := resp.Header.Get("X-Service-Api-Version-Selected"); got != c.selected {
			t.Errorf("%s: selected %q, want %q", c.name, got, c.selected)
		}
	}
	for _, headers := range [][]string{
		{"X-Service-Api-Version", "2021-01-01"},
		{"X-GitHub-Api-Version", "latest"},
	} {
		resp, body := get(env, "/repos/octocat/hello", "", headers...)
		e := wantError(t, "unsupported "+headers[1], resp, body, 400)
		if !strings.Contains(e.Message, "2022-11-28") || !strings.Contains(e.Message, "2026-03-10") {
			t.Errorf("message %q does not name the supported versions", e.Message)
		}
	}
	// go-github sends its own version in the alias header.
	_, resp, err := env.Client("").Repositories.Get(apptest.Ctx(), "octocat", "hello")
	apptest.Must(t, "go-github get", err)
	if got := resp.Header.Get("X-Service-Api-Version-Selected"); got != "2022-11-28" {
		t.Errorf("go-github: selected %q", got)
	}
}

func TestAcceptAndContentType(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	env.Repo(env.User("octocat"), "hello")
	for _, accept := range []string{"", "application/vnd.service+json", "text/html", "*/*"} {
		resp, body := get(env, "/repos/octocat/hello", "", "Accept", accept)
		wantStatus(t, "Accept "+accept, resp, body, 200)
		if ct := resp.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
			t.Errorf("Accept %q: Content-Type %q", accept, ct)
		}
	}
}

func TestRepositoryListsPaginate(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octocat := env.User("octocat")
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		env.Repo(octocat, name)
	}
	client := env.Client("")
	ctx := apptest.Ctx()

	opts := &github.RepositoryListByUserOptions{ListOptions: github.ListOptions{PerPage: 2}}
	var all []string
	pages := 0
	for {
		list, resp, err := client.Repositories.ListByUser(ctx, "octocat", opts)
		apptest.Must(t, "list page", err)
		pages++
		for _, r := range list {
			all = append(all, r.GetName())
		}
		if pages == 1 && (resp.NextPage != 2 || resp.LastPage != 3 || resp.PrevPage != 0 || resp.FirstPage != 0) {
			t.Fatalf("page 1 links: next %d last %d prev %d first %d", resp.NextPage, resp.LastPage, resp.PrevPage, resp.FirstPage)
		}
		if pages == 2 && (resp.NextPage != 3 || resp.LastPage != 3 || resp.PrevPage != 1 || resp.FirstPage != 1) {
			t.Fatalf("page 2 links: next %d last %d prev %d first %d", resp.NextPage, resp.LastPage, resp.PrevPage, resp.FirstPage)
		}
		if resp.NextPage == 0 {
			if resp.PrevPage != 2 || resp.FirstPage != 1 {
				t.Fatalf("last page links: prev %d first %d", resp.PrevPage, resp.FirstPage)
			}
			break
		}
		opts.Page = resp.NextPage
	}
	if strings.Join(all, ",") != "a,b,c,d,e" || pages != 3 {
		t.Fatalf("pages %d gave %v", pages, all)
	}

	// The Link URLs are absolute, under the base URL, and keep the query.
	resp, body := get(env, "/users/octocat/repos?per_page=2&sort=full_name", "")
	wantStatus(t, "raw page", resp, body, 200)
	link := resp.Header.Get("Link")
	if !strings.Contains(link, "<"+env.URL+"/users/octocat/repos?page=2&per_page=2&sort=full_name>; rel=\"next\"") {
		t.Errorf("Link %q", link)
	}
	// A single page has no Link; a page past the end is empty.
	resp, body = get(env, "/users/octocat/repos", "")
	if resp.Header.Get("Link") != "" || len(repoNames(t, body)) != 5 {
		t.Errorf("default page: Link %q, body %s", resp.Header.Get("Link"), body)
	}
	resp, body = get(env, "/users/octocat/repos?page=9", "")
	if len(repoNames(t, body)) != 0 || !hasLinkRel(resp.Header.Get("Link"), "first") {
		t.Errorf("page past the end: Link %q, body %s", resp.Header.Get("Link"), body)
	}
}

func TestPerPageOver100IsServedAs100(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octocat := env.User("octocat")
	for i := range 105 {
		env.Repo(octocat, "r"+strconv.Itoa(i))
	}
	resp, body := get(env, "/users/octocat/repos?per_page=500", "")
	wantStatus(t, "per_page=500", resp, body, 200)
	if n := len(repoNames(t, body)); n != 100 {
		t.Fatalf("per_page=500 served %d items, want 100", n)
	}
	if link := resp.Header.Get("Link"); !strings.Contains(link, "page=2&per_page=100>; rel=\"next\"") {
		t.Errorf("Link %q", link)
	}
}

func TestBadPageParameters(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	env.User("octocat")
	for _, c := range []struct{ query, field string }{
		{"per_page=abc", "per_page"},
		{"per_page=-1", "per_page"},
		{"per_page=1.5", "per_page"},
		{"page=x", "page"},
		{"page=-3", "page"},
	} {
		resp, body := get(env, "/users/octocat/repos?"+c.query, "")
		e := wantError(t, c.query, resp, body, 422)
		wantFieldError(t, c.query, e, "", c.field, "invalid")
	}
	resp, body := get(env, "/users/octocat/repos?sort=stars", "")
	wantFieldError(t, "sort=stars", wantError(t, "sort=stars", resp, body, 422), "", "sort", "invalid")
}

func TestRepositoryListVisibility(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octocat := env.User("octocat")
	hubot := env.User("hubot")
	stranger := env.User("stranger")
	acme := env.Org("acme", octocat, hubot)
	env.Repo(octocat, "hello")
	env.Repo(octocat, "diary", apptest.RepoOpts{Private: true})
	widgets := env.Repo(acme, "widgets", apptest.RepoOpts{Private: true})
	env.Repo(acme, "gadgets")
	env.Repo(acme, "fork", apptest.RepoOpts{ForkOf: widgets, Private: true})
	env.Repo(stranger, "elsewhere")

	octoRepo := env.Token(octocat, "repo")
	octoPublic := env.Token(octocat, "public_repo")
	fpat := env.FineGrainedToken(octocat, acme, []*repos.Repository{widgets}, "contents:read")
	for _, c := range []struct {
		name, path, token string
		want              []string
	}{
		{"own repos", "/user/repos", octoRepo, []string{"octocat/hello", "octocat/diary", "acme/widgets", "acme/gadgets", "acme/fork"}},
		{"own repos without repo scope", "/user/repos", octoPublic, []string{"octocat/hello", "acme/gadgets"}},
		{"owner affiliation", "/user/repos?affiliation=owner", octoRepo, []string{"octocat/hello", "octocat/diary"}},
		{"private visibility", "/user/repos?visibility=private", octoRepo, []string{"octocat/diary", "acme/widgets", "acme/fork"}},
		{"type public", "/user/repos?type=public", octoRepo, []string{"octocat/hello", "acme/gadgets"}},
		{"type member", "/user/repos?type=member", octoRepo, []string{"acme/widgets", "acme/gadgets", "acme/fork"}},
		{"fine-grained selection", "/user/repos", fpat, []string{"octocat/hello", "acme/widgets", "acme/gadgets"}},
		{"user's public repos, anonymous", "/users/octocat/repos", "", []string{"octocat/hello"}},
		{"user's public repos, the user", "/users/octocat/repos", octoRepo, []string{"octocat/hello"}},
		{"member type for oneself", "/users/octocat/repos?type=member", octoRepo, []string{"acme/gadgets"}},
		{"member type for others", "/users/octocat/repos?type=member", env.Token(stranger, "repo"), nil},
		{"org repos, anonymous", "/orgs/acme/repos", "", []string{"acme/gadgets"}},
		{"org repos, member", "/orgs/acme/repos", env.Token(hubot, "repo"), []string{"acme/widgets", "acme/gadgets", "acme/fork"}},
		{"org repos, stranger", "/orgs/acme/repos", env.Token(stranger, "repo"), []string{"acme/gadgets"}},
		{"org forks", "/orgs/acme/repos?type=forks", octoRepo, []string{"acme/fork"}},
		{"org sources", "/orgs/acme/repos?type=sources", octoRepo, []string{"acme/widgets", "acme/gadgets"}},
		{"org private", "/orgs/acme/repos?type=private", octoRepo, []string{"acme/widgets", "acme/fork"}},
		{"org member type, stranger", "/orgs/acme/repos?type=member", env.Token(stranger, "repo"), nil},
	} {
		resp, body := env.Do("GET", c.path, c.token, nil)
		wantStatus(t, c.name, resp, body, 200)
		if got := repoNames(t, body); !sameNames(got, c.want...) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
	resp, body := env.Do("GET", "/user/repos?type=owner&visibility=all", octoRepo, nil)
	wantError(t, "type with visibility", resp, body, 422)
	resp, body = env.Do("GET", "/user/repos", "", nil)
	wantError(t, "anonymous /user/repos", resp, body, 401)
	resp, body = env.Do("GET", "/orgs/nope/repos", "", nil)
	wantError(t, "unknown org", resp, body, 404)

	// Sorting: full_name ascending by default on /user/repos, created
	// descending on /orgs/{org}/repos, both reversible.
	_, body = env.Do("GET", "/user/repos?affiliation=owner", octoRepo, nil)
	if got := strings.Join(repoNames(t, body), ","); got != "octocat/diary,octocat/hello" {
		t.Errorf("default sort: %s", got)
	}
	_, body = env.Do("GET", "/orgs/acme/repos", octoRepo, nil)
	if got := strings.Join(repoNames(t, body), ","); got != "acme/fork,acme/gadgets,acme/widgets" {
		t.Errorf("org default sort (created desc): %s", got)
	}
	_, body = env.Do("GET", "/orgs/acme/repos?sort=full_name&direction=desc", octoRepo, nil)
	if got := strings.Join(repoNames(t, body), ","); got != "acme/widgets,acme/gadgets,acme/fork" {
		t.Errorf("full_name desc: %s", got)
	}
}

func TestConditionalRequests(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithRateLimit())
	octocat := env.User("octocat")
	hubot := env.User("hubot")
	acme := env.Org("acme", octocat, hubot)
	env.Repo(acme, "widgets", apptest.RepoOpts{Private: true})
	owner, member := env.Token(octocat, "repo"), env.Token(hubot, "repo")

	resp, body := env.Do("GET", "/repos/acme/widgets", owner, nil)
	wantStatus(t, "first GET", resp, body, 200)
	etag, lastModified := resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
	used := resp.Header.Get("X-Ratelimit-Used")
	if etag == "" || lastModified == "" {
		t.Fatalf("ETag %q, Last-Modified %q", etag, lastModified)
	}

	resp, body = env.Do("GET", "/repos/acme/widgets", owner, nil, "If-None-Match", etag)
	if resp.StatusCode != http.StatusNotModified || len(body) != 0 {
		t.Fatalf("If-None-Match: %d with %d bytes", resp.StatusCode, len(body))
	}
	if resp.Header.Get("ETag") != etag || resp.Header.Get("Content-Type") != "" {
		t.Errorf("304 headers: ETag %q Content-Type %q", resp.Header.Get("ETag"), resp.Header.Get("Content-Type"))
	}
	if got := resp.Header.Get("X-Ratelimit-Used"); got != used {
		t.Errorf("a 304 counted against the rate limit: used %s, was %s", got, used)
	}
	resp, _ = env.Do("GET", "/repos/acme/widgets", owner, nil, "If-None-Match", `"other", `+etag)
	if resp.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match list: %d", resp.StatusCode)
	}
	resp, _ = env.Do("GET", "/repos/acme/widgets", owner, nil, "If-Modified-Since", lastModified)
	if resp.StatusCode != http.StatusNotModified {
		t.Errorf("If-Modified-Since: %d", resp.StatusCode)
	}
	resp, _ = env.Do("GET", "/repos/acme/widgets", owner, nil, "If-Modified-Since", "Mon, 02 Jan 2006 15:04:05 GMT")
	if resp.StatusCode != http.StatusOK {
		t.Errorf("If-Modified-Since long ago: %d", resp.StatusCode)
	}

	// The member sees other permissions, so another body and ETag; the
	// owner's ETag does not validate the member's copy.
	resp, body = env.Do("GET", "/repos/acme/widgets", member, nil, "If-None-Match", etag)
	wantStatus(t, "member with the owner's ETag", resp, body, 200)
	if resp.Header.Get("ETag") == etag {
		t.Errorf("owner and member got the same ETag for different bodies")
	}

	// Lists carry ETags too; a change makes a new one.
	resp, _ = env.Do("GET", "/orgs/acme/repos", owner, nil)
	listTag := resp.Header.Get("ETag")
	resp, _ = env.Do("GET", "/orgs/acme/repos", owner, nil, "If-None-Match", listTag)
	if resp.StatusCode != http.StatusNotModified {
		t.Errorf("list If-None-Match: %d", resp.StatusCode)
	}
	env.Repo(acme, "gadgets")
	resp, _ = env.Do("GET", "/orgs/acme/repos", owner, nil, "If-None-Match", listTag)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("list after a change: %d", resp.StatusCode)
	}
}

func TestErrorShapes(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octocat := env.User("octocat")
	token := env.Token(octocat, "repo")
	env.Repo(octocat, "Hello")

	resp, body := env.DoJSON("POST", "/user/repos", token, `{"name": "x",`)
	if e := wantError(t, "malformed JSON", resp, body, 400); e.Message != "Problems parsing JSON" {
		t.Errorf("message %q", e.Message)
	}
	resp, body = env.DoJSON("POST", "/user/repos", token, `{"name":"a"} {"name":"b"}`)
	wantError(t, "two JSON values", resp, body, 400)
	resp, body = env.DoJSON("POST", "/user/repos", token, `{"name": 5}`)
	e := wantError(t, "wrong type", resp, body, 422)
	if !strings.Contains(e.Message, "name") {
		t.Errorf("wrong-type message %q does not name the field", e.Message)
	}
	wantFieldError(t, "wrong type", e, "", "name", "invalid")
	resp, body = env.DoJSON("POST", "/user/repos", token, `{"name": "ok", "private": "yes"}`)
	wantFieldError(t, "wrong type bool", wantError(t, "wrong type bool", resp, body, 422), "", "private", "invalid")

	big := bytes.Repeat([]byte(" "), httpapi.DefaultMaxBody+1)
	resp, body = env.Do("POST", "/user/repos", token, bytes.NewReader(big), "Content-Type", "application/json")
	wantError(t, "body too large", resp, body, 413)

	resp, body = env.DoJSON("POST", "/user/repos", token, `{}`)
	wantFieldError(t, "missing name", wantError(t, "missing name", resp, body, 422), "Repository", "name", "missing_field")
	resp, body = env.DoJSON("POST", "/user/repos", token, `{"name":"bad name"}`)
	wantFieldError(t, "bad name", wantError(t, "bad name", resp, body, 422), "Repository", "name", "custom")
	resp, body = env.DoJSON("POST", "/user/repos", token, `{"name":"x","visibility":"secret"}`)
	wantFieldError(t, "bad visibility", wantError(t, "bad visibility", resp, body, 422), "Repository", "visibility", "invalid")
	for _, name := range []string{"Hello", "hello", "HELLO"} {
		resp, body = env.DoJSON("POST", "/user/repos", token, `{"name":"`+name+`"}`)
		wantFieldError(t, "duplicate "+name, wantError(t, "duplicate "+name, resp, body, 422), "Repository", "name", "already_exists")
	}

	for _, c := range []struct{ method, path string }{
		{"GET", "/no/such/path"},
		{"GET", "/api/v3/no/such/path"},
		{"PUT", "/repos/octocat/Hello"},
		{"PUT", "/user"},
		{"PATCH", "/user/repos"},
	} {
		resp, body = env.Do(c.method, c.path, token, nil)
		if e := wantError(t, c.method+" "+c.path, resp, body, 404); e.Message != "Not Found" {
			t.Errorf("%s %s: message %q", c.method, c.path, e.Message)
		}
	}

	// Paths no route serves answer a JSON 404 themselves, never ServeMux's
	// redirect to a trailing slash with an HTML body (the git route
	// GET /{owner}/{repo}/{rest...} made every two-segment path one).
	noRedirects := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, path := range []string{"/user/codespaces", "/user/teams", "/search/repositories", "/octocat/hello",
		"/enterprises/acme-corp", "/octocat/hello/", "/applications/grants/", "/no/such/path/",
		// Dot and empty segments: ServeMux would redirect to the cleaned path.
		"/repos/octocat/hello/contents/a/../README.md", "/repos//octocat/hello", "/api/v3/../user", "/docs/./api"} {
		for _, method := range []string{"GET", "HEAD", "POST"} {
			req, err := http.NewRequest(method, env.URL+path, nil)
			apptest.Must(t, "request", err)
			resp, err := noRedirects.Do(req)
			apptest.Must(t, method+" "+path, err)
			resp.Body.Close()
			if resp.StatusCode != 404 || resp.Header.Get("Location") != "" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
				t.Errorf("%s %s: %d %q Location %q, want a JSON 404", method, path, resp.StatusCode,
					resp.Header.Get("Content-Type"), resp.Header.Get("Location"))
			}
		}
	}

	// go-github reads the shape into its ErrorResponse.
	_, _, err := env.Client(token).Repositories.Create(apptest.Ctx(), "", &github.Repository{Name: github.Ptr("hello")})
	ge, ok := err.(*github.ErrorResponse)
	if !ok || ge.Message != "Validation Failed" || len(ge.Errors) != 1 || ge.Errors[0].Code != "already_exists" {
		t.Fatalf("go-github error: %#v", err)
	}
}

func TestRateLimits(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithRateLimit())
	octocat := env.User("octocat")
	env.Repo(octocat, "hello")

	resp, body := get(env, "/repos/octocat/hello", "")
	wantStatus(t, "first anonymous", resp, body, 200)
	etag := resp.Header.Get("ETag")
	h := resp.Header
	if h.Get("X-Ratelimit-Limit") != "60" || h.Get("X-Ratelimit-Remaining") != "59" || h.Get("X-Ratelimit-Used") != "1" ||
		h.Get("X-Ratelimit-Resource") != "core" || h.Get("X-Ratelimit-Reset") == "" {
		t.Fatalf("anonymous headers: %v", h)
	}
	for i := 2; i <= 60; i++ {
		resp, body = get(env, "/repos/octocat/hello", "")
		wantStatus(t, "anonymous request "+strconv.Itoa(i), resp, body, 200)
	}
	if resp.Header.Get("X-Ratelimit-Remaining") != "0" {
		t.Fatalf("after 60: remaining %q", resp.Header.Get("X-Ratelimit-Remaining"))
	}
	resp, body = get(env, "/repos/octocat/hello", "")
	e := wantError(t, "61st anonymous request", resp, body, 403)
	if !strings.Contains(e.Message, "rate limit") {
		t.Errorf("message %q", e.Message)
	}
	if ra, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || ra < 1 || ra > 3600 {
		t.Errorf("Retry-After %q", resp.Header.Get("Retry-After"))
	}
	if resp.Header.Get("X-Ratelimit-Remaining") != "0" {
		t.Errorf("refusal remaining %q", resp.Header.Get("X-Ratelimit-Remaining"))
	}
	// A 304 does not count, so it is still served; other answers are not.
	resp, _ = get(env, "/repos/octocat/hello", "", "If-None-Match", etag)
	if resp.StatusCode != http.StatusNotModified {
		t.Errorf("conditional request over the limit: %d, want 304", resp.StatusCode)
	}
	resp, body = get(env, "/repos/octocat/hello", "", "If-None-Match", `"stale"`)
	wantError(t, "stale conditional request over the limit", resp, body, 403)
	resp, body = env.DoJSON("POST", "/user/repos", "", `{"name":"x"}`)
	wantError(t, "anonymous write over the limit", resp, body, 403)

	// Authenticated callers have their own, larger budget.
	token := env.Token(octocat)
	resp, body = get(env, "/repos/octocat/hello", "Bearer "+token)
	wantStatus(t, "authenticated", resp, body, 200)
	if resp.Header.Get("X-Ratelimit-Limit") != "5000" || resp.Header.Get("X-Ratelimit-Used") != "1" {
		t.Errorf("authenticated headers: %v", resp.Header)
	}
	rl, _, err := env.Client(token).RateLimit.Get(apptest.Ctx())
	apptest.Must(t, "GET /rate_limit", err)
	if rl.GetCore().Limit != 5000 || rl.GetCore().Remaining != 4999 {
		t.Errorf("rate_limit core %+v", rl.GetCore())
	}
	resp, _ = get(env, "/repos/octocat/hello", "Bearer "+token)
	if resp.Header.Get("X-Ratelimit-Used") != "2" {
		t.Errorf("GET /rate_limit spent budget: used %s after it, want 2", resp.Header.Get("X-Ratelimit-Used"))
	}
}

func TestRateLimitOff(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t) // apptest's default: off
	env.Repo(env.User("octocat"), "hello")
	for i := range 65 {
		resp, body := get(env, "/repos/octocat/hello", "")
		wantStatus(t, "request "+strconv.Itoa(i), resp, body, 200)
		if resp.Header.Get("X-Ratelimit-Limit") != "" {
			t.Fatalf("rate-limit headers with limits off")
		}
	}
}

func TestRequestIDHealthAndMetrics(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithMetrics())
	env.Repo(env.User("octocat"), "hello")
	seen := map[string]bool{}
	for _, c := range []struct{ method, path, authorization string }{
		{"GET", "/repos/octocat/hello", ""},
		{"GET", "/repos/octocat/nope", ""},
		{"GET", "/user", ""},
		{"GET", "/user", "Bearer bad"},
		{"GET", "/unknown", ""},
		{"PUT", "/repos/octocat/hello", ""},
		{"GET", "/healthz", ""},
		{"GET", "/metrics", ""},
		{"GET", "/rate_limit", ""},
	} {
		var headers []string
		if c.authorization != "" {
			headers = []string{"Authorization", c.authorization}
		}
		resp, _ := env.Do(c.method, c.path, "", nil, headers...)
		id := resp.Header.Get("X-Service-Request-Id")
		if id == "" || seen[id] {
			t.Errorf("%s %s: request id %q (missing or repeated)", c.method, c.path, id)
		}
		seen[id] = true
	}

	resp, body := get(env, "/healthz", "")
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"status":"ok"`) {
		t.Errorf("healthz: %d %s", resp.StatusCode, body)
	}
	resp, body = get(env, "/metrics", "")
	wantError(t, "metrics on the API port", resp, body, 404)
	resp, err := http.Get(env.Main.MetricsURL())
	apptest.Must(t, "scrape metrics", err)
	body, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	apptest.Must(t, "read metrics", err)
	wantStatus(t, "metrics", resp, body, 200)
	text := string(body)
	for _, want := range []string{
		`forgeapi_http_requests_total{method="GET",route="GET /repos/{owner}/{repo}",status="200"}`,
		`forgeapi_http_requests_total{method="GET",route="GET /repos/{owner}/{repo}",status="404"}`,
		`forgeapi_http_requests_total{method="GET",route="GET /user",status="401"}`,
		`forgeapi_http_requests_total{method="PUT",route="unmatched",status="404"}`,
		`forgeapi_http_request_duration_seconds_bucket{route="GET /repos/{owner}/{repo}",le="0.005"}`,
		`forgeapi_http_request_duration_seconds_count{route="GET /repos/{owner}/{repo}"} 2`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

package e2e_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"forgeapi/docs"
	"forgeapi/internal/apptest"
)

// TestEveryPageRenders serves every page of package docs as HTML, the
// index at /docs/, links between pages at their served URLs, and a JSON
// 404 for what is not a page.
func TestEveryPageRenders(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	for _, name := range docs.Pages() {
		src, _ := docs.Source(name)
		heading, _, _ := strings.Cut(strings.TrimPrefix(string(src), "# "), "\n")
		for _, path := range []string{"/docs/" + name, "/docs/" + name + ".md"} {
			resp, body := env.Do("GET", path, "", nil)
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
				t.Fatalf("GET %s: %d %q", path, resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			if !strings.Contains(string(body), "<h1 id=") || !strings.Contains(string(body), "<title>"+htmlEscape(heading)) {
				t.Errorf("GET %s: no <h1> or title %q in %.300s", path, heading, body)
			}
			if strings.Contains(string(body), `.md"`) {
				t.Errorf("GET %s: a link still points at a .md file", path)
			}
		}
	}
	resp, index := env.Do("GET", "/docs/", "", nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /docs/: %d", resp.StatusCode)
	}
	for _, name := range docs.Pages() {
		if name != docs.Index && !strings.Contains(string(index), `href="`+name+`"`) {
			t.Errorf("the index does not link to %s", name)
		}
	}
	if !strings.Contains(string(index), "<table>") {
		t.Errorf("the index's table was not rendered as a table")
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	r, err := noRedirect.Get(env.URL + "/docs")
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusMovedPermanently || r.Header.Get("Location") != "/docs/" {
		t.Errorf("GET /docs: %d to %q, want 301 to /docs/", r.StatusCode, r.Header.Get("Location"))
	}
	for _, path := range []string{"/docs/nonexistent", "/docs/../README", "/docs/webhooks/more", "/docs/_pending"} {
		resp, body := env.Do("GET", path, "", nil)
		var e struct{ Message, DocumentationURL string }
		if resp.StatusCode != http.StatusNotFound || resp.Header.Get("Content-Type") != "application/json; charset=utf-8" ||
			json.Unmarshal(body, &e) != nil || e.Message != "Not Found" {
			t.Errorf("GET %s: %d %q %s, want the JSON 404", path, resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
	}
}

// TestErrorsLinkToTheirAreasPage checks documentation_url: an error of a
// webhooks route, whether the handler, the access guard or the
// authentication refuses the request, links to the webhooks page, which
// the server serves; an unknown path links to the API conventions.
func TestErrorsLinkToTheirAreasPage(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	owner := env.User(apptest.Unique("owner"))
	repo := env.Repo(owner, "hello")
	token := env.Token(owner, "repo")
	hooks := "/repos/" + owner.Login + "/" + repo.Name + "/hooks"
	for _, c := range []struct {
		what, method, path, token string
		header                    []string
		status                    int
		page                      string
	}{
		{"unknown hook", "GET", hooks + "/999999", token, nil, http.StatusNotFound, "webhooks"},
		{"invalid hook", "POST", hooks, token, nil, http.StatusUnprocessableEntity, "webhooks"},
		{"bad credentials", "GET", hooks, "not-a-token", nil, http.StatusUnauthorized, "webhooks"},
		{"unknown API version", "GET", hooks, token, []string{"X-Service-Api-Version", "1999-01-01"}, http.StatusBadRequest, "webhooks"},
		{"unknown repository", "GET", "/repos/" + owner.Login + "/nope/dependency-graph/compare/a...b", token, nil, http.StatusNotFound, "dependency-review"},
		{"unknown path", "GET", "/no/such/endpoint/here", token, nil, http.StatusNotFound, "api"},
	} {
		var resp *http.Response
		var body []byte
		if c.method == "POST" {
			resp, body = env.DoJSON(c.method, c.path, c.token, `{"config":{}}`, c.header...)
		} else {
			resp, body = env.Do(c.method, c.path, c.token, nil, c.header...)
		}
		var e struct {
			DocumentationURL string `json:"documentation_url"`
		}
		if resp.StatusCode != c.status || json.Unmarshal(body, &e) != nil {
			t.Fatalf("%s: %d %s, want %d", c.what, resp.StatusCode, body, c.status)
		}
		if want := env.URL + "/docs/" + c.page; e.DocumentationURL != want {
			t.Errorf("%s: documentation_url %q, want %q", c.what, e.DocumentationURL, want)
		}
		page, err := http.Get(e.DocumentationURL)
		if err != nil {
			t.Fatal(err)
		}
		page.Body.Close()
		if page.StatusCode != http.StatusOK || page.Header.Get("Content-Type") != "text/html; charset=utf-8" {
			t.Errorf("%s: GET %s: %d %q", c.what, e.DocumentationURL, page.StatusCode, page.Header.Get("Content-Type"))
		}
	}
}

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;").Replace(s)
}

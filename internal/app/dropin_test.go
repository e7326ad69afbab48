package app_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/app"
	"forgeapi/internal/apptest"
	"forgeapi/internal/testwait"
	"forgeapi/internal/webhooks"
)

// enterpriseClient is a go-github client set up for a self-managed
// server, as integrations configure it: WithEnterpriseURLs on the host,
// which puts the API under /api/v3/.
func enterpriseClient(t *testing.T, env *apptest.Env, token string) *github.Client {
	t.Helper()
	c, err := github.NewClient(github.WithTransport(env.Transport()), github.WithAuthToken(token),
		github.WithEnterpriseURLs(env.URL+"/", env.URL+"/api/uploads/"), github.WithDisableRateLimitCheck())
	apptest.Must(t, "enterprise client", err)
	if c.BaseURL() != env.URL+"/api/v3/" {
		t.Fatalf("go-github's enterprise base URL is %s", c.BaseURL())
	}
	return c
}

// TestAPIUnderAPIV3 drives hooks, deliveries, feeds and migrations with
// go-github's enterprise URLs: the API answers under /api/v3/ as at the
// root, and git stays at the root only.
func TestAPIUnderAPIV3(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	ctx := apptest.Ctx()
	octo := env.User("octo")
	acme := env.Org("acme", octo)
	env.Repo(acme, "rockets")
	token := env.Token(octo, "repo", "admin:org", "admin:repo_hook")
	c := enterpriseClient(t, env, token)
	got := make(chan string, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		apptest.CheckWebhook(t, r.Header.Get("X-GitHub-Event"), body)
		got <- r.Header.Get("X-GitHub-Event")
	}))
	t.Cleanup(srv.Close)

	repo, _, err := c.Repositories.Get(ctx, "acme", "rockets")
	apptest.Must(t, "get repository", err)
	if repo.GetFullName() != "acme/rockets" {
		t.Fatalf("repository %+v", repo)
	}
	hook, _, err := c.Repositories.CreateHook(ctx, "acme", "rockets", &github.Hook{Events: []string{"push"},
		Config: &github.HookConfig{URL: github.Ptr(srv.URL), ContentType: github.Ptr("json")}})
	apptest.Must(t, "create hook", err)
	select {
	case e := <-got:
		if e != "ping" {
			t.Fatalf("first delivery %q, want ping", e)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no ping")
	}
	var deliveries []*github.HookDelivery
	testwait.Until(t, "the ping's delivery", func() bool {
		deliveries, _, err = c.Repositories.ListHookDeliveries(ctx, "acme", "rockets", hook.GetID(), nil)
		apptest.Must(t, "deliveries", err)
		return len(deliveries) > 0
	})
	if len(deliveries) != 1 || deliveries[0].GetEvent() != "ping" {
		t.Fatalf("deliveries %+v", deliveries)
	}
	events, _, err := c.Activity.ListRepositoryEvents(ctx, "acme", "rockets", nil)
	apptest.Must(t, "feed", err)
	if len(events) == 0 || events[0].GetType() != "CreateEvent" {
		t.Fatalf("feed %+v", events)
	}
	m, _, err := c.Migrations.StartMigration(ctx, "acme", []string{"rockets"}, nil)
	apptest.Must(t, "start migration", err)
	if m.GetState() != "pending" && m.GetState() != "exporting" && m.GetState() != "exported" {
		t.Fatalf("migration %+v", m)
	}

	// Git stays at the host root: under /api/v3 it is not served.
	if resp, body := env.Do("GET", "/api/v3/acme/rockets.git/info/refs?service=git-upload-pack", token, nil); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("git under /api/v3: %d %s", resp.StatusCode, body)
	}
	if resp, _ := env.Do("GET", "/acme/rockets.git/info/refs?service=git-upload-pack", token, nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("git at the root: %d", resp.StatusCode)
	}
}

// TestRootMetaAndGraphQL: GET / and GET /api/v3/ answer the root
// document, GET /meta the self-managed edition's meta document, and the
// GraphQL endpoint a NOT_FOUND error for a repository that does not
// exist.
func TestRootMetaAndGraphQL(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	for _, path := range []string{"/", "/api/v3/", "/api/v3"} {
		resp, body := env.Do("GET", path, "", nil)
		var root map[string]string
		if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &root) != nil ||
			root["repository_url"] != env.URL+"/repos/{owner}/{repo}" || root["current_user_url"] != env.URL+"/user" {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
		}
	}
	resp, body := env.Do("GET", "/api/v3/meta", "", nil)
	var meta struct {
		Verifiable bool   `json:"verifiable_password_authentication"`
		Version    string `json:"installed_version"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &meta) != nil || !meta.Verifiable || meta.Version != app.ReadBuildInfo().Version {
		t.Fatalf("GET /meta: %d %s", resp.StatusCode, body)
	}
	octo := env.User("octo")
	resp, body = env.DoJSON("POST", "/api/graphql", env.Token(octo), `{"query":"{ repository(owner:\"o\", name:\"r\") { id } }"}`)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"type":"NOT_FOUND"`) {
		t.Fatalf("POST /api/graphql: %d %s", resp.StatusCode, body)
	}
}

// TestBaseURLWithAPIV3: with --base-url ending in /api/v3, url fields and
// Link headers carry it, while clone and web URLs stay at the host root.
func TestBaseURLWithAPIV3(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, func(c *app.Config) { c.BaseURL = "https://forge.example/api/v3" })
	octo := env.User("octo")
	for i := 0; i < 3; i++ {
		env.Repo(octo, "r"+string(rune('a'+i)))
	}
	token := env.Token(octo, "repo")
	resp, body := env.Do("GET", "/api/v3/repos/octo/ra", token, nil)
	var repo struct {
		URL, CloneURL, HTMLURL, HooksURL string
	}
	var raw map[string]any
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &raw) != nil {
		t.Fatalf("get: %d %s", resp.StatusCode, body)
	}
	repo.URL, repo.CloneURL, repo.HTMLURL = raw["url"].(string), raw["clone_url"].(string), raw["html_url"].(string)
	if repo.URL != "https://forge.example/api/v3/repos/octo/ra" || repo.CloneURL != "https://forge.example/octo/ra.git" ||
		repo.HTMLURL != "https://forge.example/octo/ra" {
		t.Fatalf("url %s, clone_url %s, html_url %s", repo.URL, repo.CloneURL, repo.HTMLURL)
	}
	resp, _ = env.Do("GET", "/api/v3/user/repos?per_page=1", token, nil)
	if link := resp.Header.Get("Link"); !strings.Contains(link, "<https://forge.example/api/v3/user/repos?page=2&per_page=1>") {
		t.Fatalf("Link %q", link)
	}
}

// TestAPIV3BaseURLLinksWork: with --base-url https://HOST/api/v3 (and
// --tls self-signed, as a self-managed server is reached), the links the
// server hands out answer when a client follows them: an error's
// documentation_url (a page on the host root, as the platform's
// documentation is not under /api/v3), a migration archive's download
// URL (on the host root too), and a renamed repository's redirect, which
// keeps /api/v3. The client reaches HOST at the server's address and
// verifies the certificate for HOST, which the self-signed certificate
// names because it is the base URL's host.
func TestAPIV3BaseURLLinksWork(t *testing.T) {
	t.Parallel()
	const host = "forge.test"
	env := apptest.Start(t, apptest.WithTLS(), func(c *app.Config) { c.BaseURL = "https://" + host + "/api/v3" })
	tr := apptest.TrustingTransport(t, env.Main.CAFile()).(*http.Transport)
	addr := strings.TrimPrefix(env.URL, "https://")
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	client := &http.Client{Transport: apptest.Transport(t, tr)}
	get := func(url, token string, follow bool) (*http.Response, []byte) {
		t.Helper()
		req, err := http.NewRequest("GET", url, nil)
		apptest.Must(t, "request", err)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		c := *client
		if !follow {
			c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		}
		resp, err := c.Do(req)
		apptest.Must(t, "GET "+url, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		apptest.Must(t, "read "+url, err)
		return resp, body
	}
	octo := env.User("octo")
	acme := env.Org("acme", octo)
	env.Repo(acme, "rockets")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo", "admin:org")
	gh, err := github.NewClient(github.WithHTTPClient(client), github.WithAuthToken(token),
		github.WithEnterpriseURLs("https://"+host+"/", "https://"+host+"/api/uploads/"), github.WithDisableRateLimitCheck())
	apptest.Must(t, "enterprise client", err)

	// An error's documentation_url is a page on the host root that answers.
	resp, body := get("https://"+host+"/api/v3/repos/octo/nothing", token, true)
	var e struct {
		DocumentationURL string `json:"documentation_url"`
	}
	if resp.StatusCode != http.StatusNotFound || json.Unmarshal(body, &e) != nil || !strings.HasPrefix(e.DocumentationURL, "https://"+host+"/docs/") {
		t.Fatalf("404: %d %s", resp.StatusCode, body)
	}
	if resp, body := get(e.DocumentationURL, "", true); resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET %s: %d %.200s", e.DocumentationURL, resp.StatusCode, body)
	}

	// A migration archive downloads from its URL.
	m, _, err := gh.Migrations.StartMigration(apptest.Ctx(), "acme", []string{"rockets"}, nil)
	apptest.Must(t, "start migration", err)
	testwait.Until(t, "the migration's export", func() bool {
		if m.GetState() == "failed" {
			t.Fatalf("migration %d failed", m.GetID())
		}
		m, _, err = gh.Migrations.MigrationStatus(apptest.Ctx(), "acme", m.GetID())
		apptest.Must(t, "migration status", err)
		return m.GetState() == "exported"
	})
	archive, err := gh.Migrations.MigrationArchiveURL(apptest.Ctx(), "acme", m.GetID())
	apptest.Must(t, "archive URL", err)
	if !strings.HasPrefix(archive, "https://"+host+"/_blobs/") {
		t.Fatalf("archive URL %s", archive)
	}
	if resp, body := get(archive, "", true); resp.StatusCode != http.StatusOK || len(body) < 2 || body[0] != 0x1f || body[1] != 0x8b {
		t.Fatalf("GET %s: %d %.200q", archive, resp.StatusCode, body)
	}

	// A renamed repository's redirect keeps /api/v3, and following it
	// reaches the repository.
	renamed, _, err := gh.Repositories.Edit(apptest.Ctx(), "octo", "hello", &github.Repository{Name: github.Ptr("world")})
	apptest.Must(t, "rename", err)
	resp, body = get("https://"+host+"/api/v3/repos/octo/hello?per_page=5", token, false)
	if want := "https://" + host + "/api/v3/repos/octo/world?per_page=5"; resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != want {
		t.Fatalf("old name: %d Location %q, want %q: %s", resp.StatusCode, resp.Header.Get("Location"), want, body)
	}
	got, _, err := gh.Repositories.Get(apptest.Ctx(), "octo", "hello")
	apptest.Must(t, "get by the old name", err)
	if got.GetID() != renamed.GetID() || got.GetFullName() != "octo/world" {
		t.Fatalf("the old name reached %d %s", got.GetID(), got.GetFullName())
	}
}

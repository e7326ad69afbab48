package webhooks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apptest"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/testwait"
	"forgeapi/internal/webhooks"
)

// hookFixture is a running server with a user owning a repository and an
// organization, and a token with every hook scope.
type hookFixture struct {
	t      *testing.T
	env    *apptest.Env
	owner  *accounts.Account
	org    *accounts.Account
	repo   *repos.Repository
	token  string
	client *github.Client
}

func newHookFixture(t *testing.T) *hookFixture {
	t.Helper()
	env := apptest.Start(t)
	owner := env.User(apptest.Unique("owner"))
	org := env.Org(apptest.Unique("org"), owner)
	repo := env.Repo(owner, "hooked")
	token := env.Token(owner, "admin:repo_hook", "admin:org_hook")
	return &hookFixture{t: t, env: env, owner: owner, org: org, repo: repo, token: token, client: env.Client(token)}
}

func (f *hookFixture) repoPath(suffix string) string {
	return "/repos/" + f.repo.FullName() + "/hooks" + suffix
}

func (f *hookFixture) orgPath(suffix string) string {
	return "/orgs/" + f.org.Login + "/hooks" + suffix
}

// createRepoHook creates a repository hook through go-github and fails on
// any error.
func (f *hookFixture) createRepoHook(hook *github.Hook) *github.Hook {
	f.t.Helper()
	got, _, err := f.client.Repositories.CreateHook(apptest.Ctx(), f.owner.Login, f.repo.Name, hook)
	apptest.Must(f.t, "create hook", err)
	return got
}

func webHook(url string, events ...string) *github.Hook {
	return &github.Hook{Config: &github.HookConfig{URL: github.Ptr(url)}, Events: events}
}

// status sends a raw JSON request and returns its status and decoded body.
func (f *hookFixture) status(method, path, token, body string) (int, map[string]any) {
	f.t.Helper()
	resp, b := f.env.DoJSON(method, path, token, body)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return resp.StatusCode, m
}

// send is a raw request with the fixture's token that is safe to call
// from any goroutine: it returns the status, or 0 when the request failed.
func (f *hookFixture) send(method, path, body string) int {
	req, err := http.NewRequest(method, f.env.URL+path, strings.NewReader(body))
	if err != nil {
		return 0
	}
	req.Header.Set("Authorization", "Bearer "+f.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestRepoHookShape(t *testing.T) {
	t.Parallel()
	f := newHookFixture(t)
	hook, resp, err := f.client.Repositories.CreateHook(apptest.Ctx(), f.owner.Login, f.repo.Name, &github.Hook{
		Config: &github.HookConfig{URL: github.Ptr("https://example.com/hook"), Secret: github.Ptr("s3cret")},
	})
	apptest.Must(t, "create", err)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("status %d, want 201", resp.StatusCode)
	}
	want := f.env.URL + f.repoPath(fmt.Sprintf("/%d", hook.GetID()))
	if loc := resp.Header.Get("Location"); loc != want || hook.GetURL() != want {
		t.Fatalf("Location %q url %q, want %q", loc, hook.GetURL(), want)
	}
	if hook.GetType() != "Repository" || hook.GetName() != "web" || !hook.GetActive() ||
		!slices.Equal(hook.Events, []string{"push"}) || hook.GetTestURL() != want+"/tests" || hook.GetPingURL() != want+"/pings" {
		t.Fatalf("hook %+v", hook)
	}
	c := hook.Config
	if c.GetContentType() != "form" || c.GetInsecureSSL() != "0" || c.GetURL() != "https://example.com/hook" || c.GetSecret() != "********" {
		t.Fatalf("config %+v", c)
	}
	if lr := hook.LastResponse; lr["status"] != "unused" || lr["code"] != nil || lr["message"] != nil {
		t.Fatalf("last_response %v", lr)
	}
	_, raw := f.env.Do("GET", f.repoPath(fmt.Sprintf("/%d", hook.GetID())), f.token, nil)
	// (last_response is checked on the 201 only: by now the ping may have been attempted.)
	for _, key := range []string{`"deliveries_url":"` + want + `/deliveries"`, `"created_at":"`, `"updated_at":"`} {
		if !strings.Contains(string(raw), key) {
			t.Fatalf("GET body lacks %s: %s", key, raw)
		}
	}
	if strings.Contains(string(raw), "s3cret") {
		t.Fatal("GET shows the secret")
	}

	// The secret is sealed at rest and opens to the plaintext.
	var stored string
	apptest.Must(t, "read secret", f.env.App.DB.QueryRowContext(apptest.Ctx(), `SELECT secret FROM hooks WHERE id = $1`, hook.GetID()).Scan(&stored))
	if stored == "" || strings.Contains(stored, "s3cret") {
		t.Fatalf("stored secret %q", stored)
	}
	h, err := webhooks.HookByID(apptest.Ctx(), f.env.App.DB, hook.GetID())
	apptest.Must(t, "hook", err)
	if s, err := f.env.App.Webhooks.Secret(h); err != nil || s != "s3cret" {
		t.Fatalf("opened secret %q %v", s, err)
	}

	list, _, err := f.client.Repositories.ListHooks(apptest.Ctx(), f.owner.Login, f.repo.Name, nil)
	apptest.Must(t, "list", err)
	if len(list) != 1 || list[0].GetID() != hook.GetID() || list[0].Config.GetSecret() != "********" {
		t.Fatalf("list %v", list)
	}
	// Without a secret, config has none.
	plain := f.createRepoHook(webHook("https://example.com/plain"))
	if plain.Config.Secret != nil {
		t.Fatalf("secret %q on a hook without one", plain.Config.GetSecret())
	}
}

func TestOrgHookShape(t *testing.T) {
	t.Parallel()
	f := newHookFixture(t)
	hook, resp, err := f.client.Organizations.CreateHook(apptest.Ctx(), f.org.Login, &github.Hook{
		Name: github.Ptr("web"), Events: []string{"*"},
		Config: &github.HookConfig{URL: github.Ptr("https://example.com/org"), ContentType: github.Ptr("json"), InsecureSSL: github.Ptr("1")},
	})
	apptest.Must(t, "create", err)
	want := f.env.URL + f.orgPath(fmt.Sprintf("/%d", hook.GetID()))
	if resp.StatusCode != http.StatusCreated || resp.Header.Get("Location") != want || hook.GetURL() != want {
		t.Fatalf("status %d Location %q url %q", resp.StatusCode, resp.Header.Get("Location"), hook.GetURL())
	}
	if hook.GetType() != "Organization" || hook.GetPingURL() != want+"/pings" || !slices.Equal(hook.Events, []string{"*"}) ||
		hook.Config.GetContentType() != "json" || hook.Config.GetInsecureSSL() != "1" {
		t.Fatalf("hook %+v config %+v", hook, hook.Config)
	}
	_, raw := f.env.Do("GET", f.orgPath(fmt.Sprintf("/%d", hook.GetID())), f.token, nil)
	if strings.Contains(string(raw), "test_url") || strings.Contains(string(raw), "last_response") {
		t.Fatalf("organization hook shows repository fields: %s", raw)
	}
	// Username in clear, password masked.
	status, body := f.status("POST", f.orgPath(""), f.token,
		`{"name":"web","config":{"url":"https://example.com/basic","username":"u","password":"pw"}}`)
	cfg, _ := body["config"].(map[string]any)
	if status != http.StatusCreated || cfg["username"] != "u" || cfg["password"] != "********" {
		t.Fatalf("status %d body %v", status, body)
	}
	list, _, err := f.client.Organizations.ListHooks(apptest.Ctx(), f.org.Login, nil)
	apptest.Must(t, "list", err)
	if len(list) != 2 {
		t.Fatalf("%d hooks listed", len(list))
	}
}

func TestHookValidation(t *testing.T) {
	t.Parallel()
	f := newHookFixture(t)
	cases := []struct {
		name, body string
		status     int
		field      string
	}{
		{"name", `{"name":"email","config":{"url":"https://example.com"}}`, 422, "name"},
		{"no config", `{}`, 422, "url"},
		{"no url", `{"config":{"content_type":"json"}}`, 422, "url"},
		{"ftp url", `{"config":{"url":"ftp://example.com/x"}}`, 422, "url"},
		{"no host", `{"config":{"url":"https:///x"}}`, 422, "url"},
		{"not a url", `{"config":{"url":"example.com"}}`, 422, "url"},
		{"content type", `{"config":{"url":"https://example.com","content_type":"xml"}}`, 422, "content_type"},
		{"insecure string", `{"config":{"url":"https://example.com","insecure_ssl":"yes"}}`, 422, "insecure_ssl"},
		{"insecure number", `{"config":{"url":"https://example.com","insecure_ssl":2}}`, 422, "insecure_ssl"},
		{"insecure bool", `{"config":{"url":"https://example.com","insecure_ssl":true}}`, 422, "insecure_ssl"},
		{"event", `{"config":{"url":"https://example.com"},"events":["push","pushed"]}`, 422, "events"},
		{"ping event", `{"config":{"url":"https://example.com"},"events":["ping"]}`, 422, "events"},
		{"events type", `{"config":{"url":"https://example.com"},"events":"push"}`, 422, "events"},
		{"active type", `{"config":{"url":"https://example.com"},"active":"yes"}`, 422, "active"},
		{"bad json", `{"config":`, 400, ""},
	}
	for _, c := range cases {
		for _, path := range []string{f.repoPath(""), f.orgPath("")} {
			status, body := f.status("POST", path, f.token, c.body)
			if status != c.status {
				t.Errorf("%s %s: status %d, want %d (%v)", c.name, path, status, c.status, body)
				continue
			}
			if c.field != "" && !strings.Contains(fmt.Sprint(body["errors"]), "field:"+c.field) {
				t.Errorf("%s %s: errors %v, want field %s", c.name, path, body["errors"], c.field)
			}
		}
	}
	// name is required for organization hooks only (defaults to web for
	// repository hooks).
	status, body := f.status("POST", f.orgPath(""), f.token, `{"config":{"url":"https://example.com/no-name"}}`)
	if status != 422 || !strings.Contains(fmt.Sprint(body["errors"]), "code:missing_field field:name") {
		t.Errorf("organization hook without name: %d %v", status, body)
	}
	// Accepted forms of insecure_ssl and events.
	for i, v := range []string{`"0"`, `"1"`, `0`, `1`} {
		body := fmt.Sprintf(`{"config":{"url":"https://example.com/%d","insecure_ssl":%s},"events":["issues","pull_request_review_thread"]}`, i, v)
		if status, b := f.status("POST", f.repoPath(""), f.token, body); status != 201 || b["config"].(map[string]any)["insecure_ssl"] != strings.Trim(v, `"`) {
			t.Errorf("insecure_ssl %s: %d %v", v, status, b)
		}
	}
	hooks, _, err := f.client.Repositories.ListHooks(apptest.Ctx(), f.owner.Login, f.repo.Name, nil)
	apptest.Must(t, "list", err)
	if len(hooks) != 4 {
		t.Fatalf("%d hooks after the failed creations, want 4", len(hooks))
	}
}

func TestHookDuplicateRule(t *testing.T) {
	t.Parallel()
	f := newHookFixture(t)
	f.createRepoHook(webHook("https://example.com/a", "push", "issues"))
	dup := func(path, body, word string) {
		t.Helper()
		status, b := f.status("POST", path, f.token, body)
		msg := "Hook already exists on this " + word
		if status != 422 || !strings.Contains(fmt.Sprint(b["errors"]), msg) || !strings.Contains(fmt.Sprint(b["errors"]), "code:custom") ||
			!strings.Contains(fmt.Sprint(b["errors"]), "resource:Hook") {
			t.Fatalf("%s: %d %v", body, status, b)
		}
	}
	dup(f.repoPath(""), `{"config":{"url":"https://example.com/a"},"events":["issues"]}`, "repository")
	dup(f.repoPath(""), `{"config":{"url":"https://example.com/a","content_type":"json"},"events":["*"]}`, "repository")
	dup(f.repoPath(""), `{"config":{"url":"https://example.com/a"}}`, "repository") // default push
	// Same config, disjoint events; another URL with the same events.
	f.createRepoHook(webHook("https://example.com/a", "star"))
	b := f.createRepoHook(webHook("https://example.com/b", "push"))
	// An edit into a duplicate is refused too.
	status, _ := f.status("PATCH", f.repoPath(fmt.Sprintf("/%d", b.GetID())), f.token, `{"config":{"url":"https://example.com/a"}}`)
	if status != 422 {
		t.Fatalf("PATCH into a duplicate: %d", status)
	}
	status, _ = f.status("PATCH", f.repoPath(fmt.Sprintf("/%d/config", b.GetID())), f.token, `{"url":"https://example.com/a"}`)
	if status != 422 {
		t.Fatalf("PATCH config into a duplicate: %d", status)
	}
	// A deleted hook does not count.
	_, err := f.client.Repositories.DeleteHook(apptest.Ctx(), f.owner.Login, f.repo.Name, b.GetID())
	apptest.Must(t, "delete", err)
	f.createRepoHook(webHook("https://example.com/b", "push"))

	_, _, err = f.client.Organizations.CreateHook(apptest.Ctx(), f.org.Login, &github.Hook{Name: github.Ptr("web"),
		Events: []string{"*"}, Config: &github.HookConfig{URL: github.Ptr("https://example.com/a")}})
	apptest.Must(t, "org hook", err)
	dup(f.orgPath(""), `{"name":"web","config":{"url":"https://example.com/a"},"events":["watch"]}`, "organization")
}

func TestHookLimitPerEvent(t *testing.T) {
	t.Parallel()
	f := newHookFixture(t)
	ctx := context.Background()
	now := time.Now().UTC()
	err := f.env.App.DB.Tx(ctx, func(tx *store.Tx) error {
		for i := 0; i < webhooks.MaxHooksPerEvent; i++ {
			events := `["push"]`
			if i%2 == 0 {
				events = `["*"]`
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO hooks (repo_id, events, url, created_at, updated_at)
				VALUES ($1, $2, $3, $4, $4)`, f.repo.ID, events, fmt.Sprintf("https://example.com/%d", i), now); err != nil {
				return err
			}
		}
		return nil
	})
	apptest.Must(t, "insert hooks", err)
	status, b := f.status("POST", f.repoPath(""), f.token, `{"config":{"url":"https://example.com/more"},"events":["push"]}`)
	if status != 422 || !strings.Contains(fmt.Sprint(b["errors"]), "250") {
		t.Fatalf("251st push hook: %d %v", status, b)
	}
	status, b = f.status("POST", f.repoPath(""), f.token, `{"config":{"url":"https://example.com/more"},"events":["*"]}`)
	if status != 422 {
		t.Fatalf("251st * hook: %d %v", status, b)
	}
	// Only 125 hooks receive issues.
	f.createRepoHook(webHook("https://example.com/more", "issues"))
	// The limit is per target.
	_, _, err = f.client.Organizations.CreateHook(ctx, f.org.Login, &github.Hook{Name: github.Ptr("web"),
		Config: &github.HookConfig{URL: github.Ptr("https://example.com/more")}})
	apptest.Must(t, "org hook", err)
}

func TestHookEdit(t *testing.T) {
	t.Parallel()
	f := newHookFixture(t)
	ctx := apptest.Ctx()
	hook := f.createRepoHook(&github.Hook{Events: []string{"push"},
		Config: &github.HookConfig{URL: github.Ptr("https://example.com/e"), Secret: github.Ptr("one"), ContentType: github.Ptr("json")}})
	path := f.repoPath(fmt.Sprintf("/%d", hook.GetID()))
	id := hook.GetID()
	secretOf := func() string {
		t.Helper()
		h, err := webhooks.HookByID(ctx, f.env.App.DB, id)
		apptest.Must(t, "hook", err)
		s, err := f.env.App.Webhooks.Secret(h)
		apptest.Must(t, "secret", err)
		return s
	}

	// events replaces; add_events and remove_events edit; active.
	status, b := f.status("PATCH", path, f.token, `{"events":["issues","star"],"add_events":["watch","star"],"remove_events":["issues"],"active":false}`)
	if status != 200 || fmt.Sprint(b["events"]) != "[star watch]" || b["active"] != false {
		t.Fatalf("PATCH events: %d %v", status, b)
	}
	if secretOf() != "one" {
		t.Fatal("PATCH without config lost the secret")
	}
	edited, _, err := f.client.Repositories.EditHook(ctx, f.owner.Login, f.repo.Name, id, &github.Hook{Events: []string{"push"}})
	apptest.Must(t, "edit", err)
	if !slices.Equal(edited.Events, []string{"push"}) || edited.GetActive() || edited.GetUpdatedAt().Before(hook.GetUpdatedAt().Time) {
		t.Fatalf("edited %+v", edited)
	}
	if status, b := f.status("PATCH", path, f.token, `{"add_events":["nope"]}`); status != 422 {
		t.Fatalf("unknown add_events: %d %v", status, b)
	}
	if status, _ := f.status("PATCH", path, f.token, `{"name":"email"}`); status != 422 {
		t.Fatalf("PATCH name: %d", status)
	}
	if status, _ := f.status("PATCH", path, f.token, `{"config":{"content_type":"json"}}`); status != 422 {
		t.Fatalf("PATCH config without url: %d", status)
	}

	// config with the secret resent (masked or in clear) keeps or changes it.
	if status, _ := f.status("PATCH", path, f.token, `{"config":{"url":"https://example.com/e","secret":"********","content_type":"json"}}`); status != 200 || secretOf() != "one" {
		t.Fatalf("masked secret resent: %d secret %q", status, secretOf())
	}
	if status, _ := f.status("PATCH", path, f.token, `{"config":{"url":"https://example.com/e","secret":"two"}}`); status != 200 || secretOf() != "two" {
		t.Fatalf("new secret: %d", status)
	}
	// config without the secret removes it, and resets content_type.
	edited, _, err = f.client.Repositories.EditHook(ctx, f.owner.Login, f.repo.Name, id,
		&github.Hook{Config: &github.HookConfig{URL: github.Ptr("https://example.com/f")}})
	apptest.Must(t, "edit config", err)
	if edited.Config.Secret != nil || secretOf() != "" || edited.Config.GetContentType() != "form" || edited.Config.GetURL() != "https://example.com/f" {
		t.Fatalf("config %+v secret %q", edited.Config, secretOf())
	}

	// The config endpoints change single properties and keep the secret.
	_, _, err = f.client.Repositories.UpdateHookConfiguration(ctx, f.owner.Login, f.repo.Name, id, github.HookConfig{Secret: github.Ptr("three")})
	apptest.Must(t, "config secret", err)
	cfg, _, err := f.client.Repositories.UpdateHookConfiguration(ctx, f.owner.Login, f.repo.Name, id,
		github.HookConfig{ContentType: github.Ptr("json"), InsecureSSL: github.Ptr("1")})
	apptest.Must(t, "config", err)
	if cfg.GetSecret() != "********" || cfg.GetContentType() != "json" || cfg.GetInsecureSSL() != "1" || cfg.GetURL() != "https://example.com/f" || secretOf() != "three" {
		t.Fatalf("config %+v secret %q", cfg, secretOf())
	}
	got, _, err := f.client.Repositories.GetHookConfiguration(ctx, f.owner.Login, f.repo.Name, id)
	apptest.Must(t, "get config", err)
	if github.Stringify(got) != github.Stringify(cfg) {
		t.Fatalf("GET config %+v, PATCH said %+v", got, cfg)
	}
	for _, body := range []string{`{"url":"gopher://x"}`, `{"content_type":"yaml"}`, `{"insecure_ssl":"2"}`} {
		if status, _ := f.status("PATCH", path+"/config", f.token, body); status != 422 {
			t.Fatalf("PATCH config %s: %d", body, status)
		}
	}

	// Organization hooks: the same rules through the organization routes.
	oh, _, err := f.client.Organizations.CreateHook(ctx, f.org.Login, &github.Hook{Name: github.Ptr("web"),
		Config: &github.HookConfig{URL: github.Ptr("https://example.com/o"), Secret: github.Ptr("x")}})
	apptest.Must(t, "org hook", err)
	ocfg, _, err := f.client.Organizations.UpdateHookConfiguration(ctx, f.org.Login, oh.GetID(), github.HookConfig{URL: github.Ptr("https://example.com/o2")})
	apptest.Must(t, "org config", err)
	if ocfg.GetSecret() != "********" || ocfg.GetURL() != "https://example.com/o2" {
		t.Fatalf("org config %+v", ocfg)
	}
	oe, _, err := f.client.Organizations.EditHook(ctx, f.org.Login, oh.GetID(), &github.Hook{Events: []string{"repository"},
		Config: &github.HookConfig{URL: github.Ptr("https://example.com/o2")}})
	apptest.Must(t, "org edit", err)
	if oe.Config.Secret != nil || !slices.Equal(oe.Events, []string{"repository"}) {
		t.Fatalf("org edit %+v %+v", oe, oe.Config)
	}
}

func TestHookDeleteAndNotFound(t *testing.T) {
	t.Parallel()
	f := newHookFixture(t)
	ctx := apptest.Ctx()
	hook := f.createRepoHook(webHook("https://example.com/d"))
	other := f.env.Repo(f.owner, "other")
	for _, p := range []string{
		"/repos/" + other.FullName() + fmt.Sprintf("/hooks/%d", hook.GetID()),
		f.orgPath(fmt.Sprintf("/%d", hook.GetID())),
		f.repoPath("/999999"), f.repoPath("/abc"),
	} {
		if resp, _ := f.env.Do("GET", p, f.token, nil); resp.StatusCode != 404 {
			t.Fatalf("GET %s: %d, want 404", p, resp.StatusCode)
		}
	}
	resp, err := f.client.Repositories.DeleteHook(ctx, f.owner.Login, f.repo.Name, hook.GetID())
	apptest.Must(t, "delete", err)
	if resp.StatusCode != 204 {
		t.Fatalf("delete %d", resp.StatusCode)
	}
	for _, m := range []string{"GET", "PATCH", "DELETE"} {
		if status, _ := f.status(m, f.repoPath(fmt.Sprintf("/%d", hook.GetID())), f.token, `{"active":false}`); status != 404 {
			t.Fatalf("%s after delete: %d", m, status)
		}
	}
	if status, _ := f.status("GET", f.repoPath(fmt.Sprintf("/%d/config", hook.GetID())), f.token, ""); status != 404 {
		t.Fatalf("config after delete: %d", status)
	}
	list, _, err := f.client.Repositories.ListHooks(ctx, f.owner.Login, f.repo.Name, nil)
	apptest.Must(t, "list", err)
	if len(list) != 0 {
		t.Fatalf("deleted hook listed: %v", list)
	}
	oh, _, err := f.client.Organizations.CreateHook(ctx, f.org.Login, &github.Hook{Name: github.Ptr("web"),
		Config: &github.HookConfig{URL: github.Ptr("https://example.com/o")}})
	apptest.Must(t, "org hook", err)
	_, err = f.client.Organizations.DeleteHook(ctx, f.org.Login, oh.GetID())
	apptest.Must(t, "org delete", err)
	if _, resp, _ := f.client.Organizations.GetHook(ctx, f.org.Login, oh.GetID()); apptest.ResponseStatus(resp) != 404 {
		t.Fatalf("org hook after delete: %d", apptest.ResponseStatus(resp))
	}
}

func TestHookListPages(t *testing.T) {
	t.Parallel()
	f := newHookFixture(t)
	var ids []int64
	for i := 0; i < 5; i++ {
		ids = append(ids, f.createRepoHook(webHook(fmt.Sprintf("https://example.com/%d", i))).GetID())
	}
	var got []int64
	opts := &github.ListOptions{PerPage: 2}
	for {
		page, resp, err := f.client.Repositories.ListHooks(apptest.Ctx(), f.owner.Login, f.repo.Name, opts)
		apptest.Must(t, "list", err)
		for _, h := range page {
			got = append(got, h.GetID())
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	if !slices.Equal(got, ids) {
		t.Fatalf("pages %v, want %v", got, ids)
	}
	if status, _ := f.status("GET", f.repoPath("?per_page=x"), f.token, ""); status != 422 {
		t.Fatalf("bad per_page: %d", status)
	}
}

func TestHookLastResponse(t *testing.T) {
	t.Parallel()
	f := newHookFixture(t)
	hook := f.createRepoHook(webHook("https://example.com/lr"))
	awaitAttempts(t, f.env, hook.GetID())
	set := func(at time.Time) {
		t.Helper()
		_, err := f.env.App.DB.ExecContext(apptest.Ctx(), `UPDATE hook_last_responses SET code = 502, status = 'failed',
			message = 'Bad Gateway', responded_at = $1 WHERE hook_id = $2`, at, hook.GetID())
		apptest.Must(t, "set last response", err)
	}
	path := f.repoPath(fmt.Sprintf("/%d", hook.GetID()))
	// The ping, which reached no receiver (the name does not resolve here,
	// or the address is refused), is the hook's last response.
	if _, raw := f.env.Do("GET", path, f.token, nil); !strings.Contains(string(raw), `"last_response":{"code":null,"status":"failed","message":"`) {
		t.Fatalf("last_response after the ping: %s", raw)
	}
	set(time.Now().UTC().Add(-time.Hour))
	if _, raw := f.env.Do("GET", path, f.token, nil); !strings.Contains(string(raw), `"last_response":{"code":502,"status":"failed","message":"Bad Gateway"}`) {
		t.Fatalf("recent last_response: %s", raw)
	}
	set(time.Now().UTC().Add(-31 * 24 * time.Hour))
	if _, raw := f.env.Do("GET", path, f.token, nil); !strings.Contains(string(raw), `"last_response":null`) {
		t.Fatalf("old last_response: %s", raw)
	}
}

func TestRepoHookAccess(t *testing.T) {
	t.Parallel()
	f := newHookFixture(t)
	env := f.env
	member := env.User(apptest.Unique("member"))
	orgRepo := env.Repo(f.org, "orgrepo")
	apptest.Must(t, "member", accounts.SetMember(apptest.Ctx(), env.App.DB, f.org.ID, member.ID, accounts.RoleMember))
	hook := f.createRepoHook(webHook("https://example.com/acc"))
	one := fmt.Sprintf("/%d", hook.GetID())
	create := `{"config":{"url":"https://example.com/new-%d"}}`

	cases := []struct {
		name                                string
		token                               string
		path                                func(string) string
		list, post, patch, config, del, get int
	}{
		{"admin:repo_hook", env.Token(f.owner, "admin:repo_hook"), f.repoPath, 200, 201, 200, 200, 204, 200},
		{"repo", env.Token(f.owner, "repo"), f.repoPath, 200, 201, 200, 200, 204, 200},
		{"write:repo_hook", env.Token(f.owner, "write:repo_hook"), f.repoPath, 200, 201, 200, 200, 403, 200},
		{"read:repo_hook", env.Token(f.owner, "read:repo_hook"), f.repoPath, 200, 403, 403, 403, 403, 200},
		{"no scope", env.Token(f.owner), f.repoPath, 403, 403, 403, 403, 403, 403},
		{"fine-grained read", env.FineGrainedToken(f.owner, f.owner, apptest.AllRepos, "repository_hooks:read"), f.repoPath, 200, 403, 403, 403, 403, 200},
		{"fine-grained write", env.FineGrainedToken(f.owner, f.owner, apptest.AllRepos, "repository_hooks:write"), f.repoPath, 200, 201, 200, 200, 204, 200},
		{"fine-grained other", env.FineGrainedToken(f.owner, f.owner, apptest.AllRepos, "contents:write"), f.repoPath, 403, 403, 403, 403, 403, 403},
	}
	for i, c := range cases {
		h := f.createRepoHook(webHook(fmt.Sprintf("https://example.com/case-%d", i)))
		one := fmt.Sprintf("/%d", h.GetID())
		got := [6]int{}
		got[0], _ = f.status("GET", c.path(""), c.token, "")
		got[1], _ = f.status("POST", c.path(""), c.token, fmt.Sprintf(create, i))
		got[2], _ = f.status("PATCH", c.path(one), c.token, `{"active":false}`)
		got[3], _ = f.status("PATCH", c.path(one+"/config"), c.token, `{"content_type":"json"}`)
		got[5], _ = f.status("GET", c.path(one+"/config"), c.token, "")
		got[4], _ = f.status("DELETE", c.path(one), c.token, "")
		want := [6]int{c.list, c.post, c.patch, c.config, c.del, c.get}
		if got != want {
			t.Errorf("%s: list, post, patch, config, delete, get config = %v, want %v", c.name, got, want)
		}
	}
	// A member of the owning organization without admin access.
	memberToken := env.Token(member, "admin:repo_hook")
	orgHookPath := "/repos/" + orgRepo.FullName() + "/hooks"
	if status, _ := f.status("GET", orgHookPath, memberToken, ""); status != 403 && status != 404 {
		t.Errorf("member lists hooks: %d", status)
	}
	if status, _ := f.status("GET", f.repoPath(one), env.Token(member, "admin:repo_hook"), ""); status != 404 && status != 403 {
		t.Errorf("stranger reads a hook: %d", status)
	}
}

func TestOrgHookAccess(t *testing.T) {
	t.Parallel()
	f := newHookFixture(t)
	env := f.env
	member := env.User(apptest.Unique("member"))
	apptest.Must(t, "member", accounts.SetMember(apptest.Ctx(), env.App.DB, f.org.ID, member.ID, accounts.RoleMember))
	owned, _, err := f.client.Organizations.CreateHook(apptest.Ctx(), f.org.Login, &github.Hook{Name: github.Ptr("web"),
		Config: &github.HookConfig{URL: github.Ptr("https://example.com/oa")}})
	apptest.Must(t, "org hook", err)
	one := fmt.Sprintf("/%d", owned.GetID())
	cases := []struct {
		name      string
		token     string
		get, post int
	}{
		{"owner admin:org_hook", env.Token(f.owner, "admin:org_hook"), 200, 201},
		{"owner admin:repo_hook", env.Token(f.owner, "admin:repo_hook", "admin:org"), 403, 403},
		{"member admin:org_hook", env.Token(member, "admin:org_hook"), 403, 403},
		{"fine-grained read", env.FineGrainedToken(f.owner, f.org, nil, "organization_hooks:read"), 200, 403},
		{"fine-grained write", env.FineGrainedToken(f.owner, f.org, nil, "organization_hooks:write"), 200, 201},
	}
	for i, c := range cases {
		get, _ := f.status("GET", f.orgPath(one), c.token, "")
		post, _ := f.status("POST", f.orgPath(""), c.token, fmt.Sprintf(`{"name":"web","config":{"url":"https://example.com/oc-%d"}}`, i))
		if get != c.get || post != c.post {
			t.Errorf("%s: get %d post %d, want %d %d", c.name, get, post, c.get, c.post)
		}
	}
}

func TestHookOAuthVisibility(t *testing.T) {
	t.Parallel()
	f := newHookFixture(t)
	env := f.env
	ctx := apptest.Ctx()
	appID := env.OAuthApp(f.owner, apptest.Unique("App"))
	otherApp := env.OAuthApp(f.owner, apptest.Unique("Other"))
	appClient := env.Client(env.OAuthToken(f.owner, appID, "admin:repo_hook", "admin:org_hook"))
	otherClient := env.Client(env.OAuthToken(f.owner, otherApp, "admin:repo_hook", "admin:org_hook"))

	userHook := f.createRepoHook(webHook("https://example.com/user"))
	appHook, _, err := appClient.Repositories.CreateHook(ctx, f.owner.Login, f.repo.Name, webHook("https://example.com/app"))
	apptest.Must(t, "app creates", err)
	var storedApp, creator int64
	apptest.Must(t, "row", env.App.DB.QueryRowContext(ctx, `SELECT app_id, creator_id FROM hooks WHERE id = $1`, appHook.GetID()).Scan(&storedApp, &creator))
	if storedApp != appID || creator != f.owner.ID {
		t.Fatalf("app_id %d creator %d", storedApp, creator)
	}

	ids := func(c *github.Client) []int64 {
		t.Helper()
		list, _, err := c.Repositories.ListHooks(ctx, f.owner.Login, f.repo.Name, nil)
		apptest.Must(t, "list", err)
		var out []int64
		for _, h := range list {
			out = append(out, h.GetID())
		}
		return out
	}
	if got := ids(f.client); !slices.Equal(got, []int64{userHook.GetID()}) {
		t.Fatalf("user sees %v", got)
	}
	if got := ids(appClient); !slices.Equal(got, []int64{appHook.GetID()}) {
		t.Fatalf("app sees %v", got)
	}
	if got := ids(otherClient); len(got) != 0 {
		t.Fatalf("other app sees %v", got)
	}
	if _, resp, _ := f.client.Repositories.GetHook(ctx, f.owner.Login, f.repo.Name, appHook.GetID()); apptest.ResponseStatus(resp) != 404 {
		t.Fatalf("user gets the app's hook: %d", apptest.ResponseStatus(resp))
	}
	if _, resp, _ := appClient.Repositories.EditHook(ctx, f.owner.Login, f.repo.Name, userHook.GetID(), &github.Hook{Active: github.Ptr(false)}); apptest.ResponseStatus(resp) != 404 {
		t.Fatalf("app edits the user's hook: %d", apptest.ResponseStatus(resp))
	}
	if resp, _ := otherClient.Repositories.DeleteHook(ctx, f.owner.Login, f.repo.Name, appHook.GetID()); apptest.ResponseStatus(resp) != 404 {
		t.Fatalf("other app deletes the app's hook: %d", apptest.ResponseStatus(resp))
	}
	if _, _, err := appClient.Repositories.GetHook(ctx, f.owner.Login, f.repo.Name, appHook.GetID()); err != nil {
		t.Fatalf("app gets its hook: %v", err)
	}

	// Organization hooks follow the same rule.
	orgHook, _, err := appClient.Organizations.CreateHook(ctx, f.org.Login, &github.Hook{Name: github.Ptr("web"),
		Config: &github.HookConfig{URL: github.Ptr("https://example.com/app")}})
	apptest.Must(t, "app creates an org hook", err)
	if _, resp, _ := f.client.Organizations.GetHook(ctx, f.org.Login, orgHook.GetID()); apptest.ResponseStatus(resp) != 404 {
		t.Fatalf("user gets the app's org hook: %d", apptest.ResponseStatus(resp))
	}
	list, _, err := f.client.Organizations.ListHooks(ctx, f.org.Login, nil)
	apptest.Must(t, "org list", err)
	if len(list) != 0 {
		t.Fatalf("user lists the app's org hook: %v", list)
	}
}

func TestHookConcurrentDuplicates(t *testing.T) {
	t.Parallel()
	f := newHookFixture(t)
	const n = 8
	statuses := make(chan int, n)
	for i := 0; i < n; i++ {
		go func() { statuses <- f.send("POST", f.repoPath(""), `{"config":{"url":"https://example.com/race"}}`) }()
	}
	created := 0
	for i := 0; i < n; i++ {
		if <-statuses == http.StatusCreated {
			created++
		}
	}
	if created != 1 {
		t.Fatalf("%d concurrent duplicates created, want 1", created)
	}
	// Concurrent add_events on one hook all apply.
	hook := f.createRepoHook(webHook("https://example.com/adds", "push"))
	events := []string{"issues", "star", "watch", "fork", "release", "label"}
	done := make(chan int, len(events))
	for _, e := range events {
		go func() {
			done <- f.send("PATCH", f.repoPath(fmt.Sprintf("/%d", hook.GetID())), `{"add_events":["`+e+`"]}`)
		}()
	}
	for range events {
		if s := <-done; s != 200 {
			t.Fatalf("add_events: %d", s)
		}
	}
	got, _, err := f.client.Repositories.GetHook(apptest.Ctx(), f.owner.Login, f.repo.Name, hook.GetID())
	apptest.Must(t, "get", err)
	if len(got.Events) != len(events)+1 {
		t.Fatalf("events %v after concurrent add_events", got.Events)
	}
}

// HookJSON, the "hook" object of ping and meta payloads, is the API shape.
func TestHookJSONMatchesAPI(t *testing.T) {
	t.Parallel()
	f := newHookFixture(t)
	repoHook := f.createRepoHook(webHook("https://example.com/j"))
	orgHook, _, err := f.client.Organizations.CreateHook(apptest.Ctx(), f.org.Login, &github.Hook{Name: github.Ptr("web"),
		Config: &github.HookConfig{URL: github.Ptr("https://example.com/j"), Secret: github.Ptr("k")}})
	apptest.Must(t, "org hook", err)
	awaitAttempts(t, f.env, repoHook.GetID())
	for path, id := range map[string]int64{f.repoPath(fmt.Sprintf("/%d", repoHook.GetID())): repoHook.GetID(),
		f.orgPath(fmt.Sprintf("/%d", orgHook.GetID())): orgHook.GetID()} {
		_, api := f.env.Do("GET", path, f.token, nil)
		h, err := webhooks.HookByID(apptest.Ctx(), f.env.App.DB, id)
		apptest.Must(t, "hook", err)
		b, err := json.Marshal(f.env.App.Webhooks.HookJSON(apptest.Ctx(), f.env.App.DB, h))
		apptest.Must(t, "marshal", err)
		if strings.TrimSpace(string(api)) != string(b) {
			t.Fatalf("HookJSON %s\nAPI      %s", b, api)
		}
	}
}

// awaitAttempts waits until every delivery of the hook was attempted, so
// that its outcome (which sets last_response) does not race with the test.
func awaitAttempts(t *testing.T, env *apptest.Env, hookID int64) {
	t.Helper()
	testwait.For(t, "the hook's deliveries to be attempted", func() error {
		var pending int
		apptest.Must(t, "pending", env.App.DB.QueryRowContext(apptest.Ctx(),
			`SELECT count(*) FROM hook_deliveries WHERE hook_id = $1 AND state = 'pending'`, hookID).Scan(&pending))
		if pending != 0 {
			return fmt.Errorf("%d pending", pending)
		}
		return nil
	})
}

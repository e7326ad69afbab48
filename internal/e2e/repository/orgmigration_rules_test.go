package repository_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"forgeapi/internal/access"
	"forgeapi/internal/accounts"
	"forgeapi/internal/apptest"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
)

// errorBody is the platform's error object.
type errorBody struct {
	Message string `json:"message"`
	Errors  []struct {
		Resource string `json:"resource"`
		Field    string `json:"field"`
		Code     string `json:"code"`
		Message  string `json:"message"`
		Value    any    `json:"value"`
	} `json:"errors"`
}

// TestStartValidation sends bad bodies to POST and expects a 4xx naming
// the problem, and no migration created.
func TestStartValidation(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.env.Repo(f.org, "mine")
	other := f.env.Org(apptest.Unique("other"), f.owner)
	f.env.Repo(other, "theirs")
	cases := []struct {
		name, body string
		status     int
		field      string // errors[].field expected, "" for none
		mentions   string // text the error must contain
	}{
		{"missing repositories", `{}`, 422, "repositories", "required"},
		{"null repositories", `{"repositories":null}`, 422, "repositories", "required"},
		{"empty list", `{"repositories":[]}`, 422, "repositories", "at least one"},
		{"unknown repository", `{"repositories":["mine","nope"]}`, 422, "repositories", "nope"},
		{"another org's repository", `{"repositories":["` + other.Login + `/theirs"]}`, 422, "repositories", "theirs"},
		{"same name in another org", `{"repositories":["theirs"]}`, 422, "repositories", "theirs"},
		{"invalid name", `{"repositories":["../etc"]}`, 422, "repositories", "../etc"},
		{"string instead of array", `{"repositories":"mine"}`, 422, "repositories", "array"},
		{"number in list", `{"repositories":[1]}`, 422, "repositories", ""},
		{"flag not boolean", `{"repositories":["mine"],"lock_repositories":"yes"}`, 422, "lock_repositories", "boolean"},
		{"org_metadata_only with repositories", `{"org_metadata_only":true,"repositories":["mine"]}`, 422, "repositories", "org_metadata_only"},
		{"unknown exclude", `{"repositories":["mine"],"exclude":["owner"]}`, 422, "exclude", "repositories"},
		{"exclude not array", `{"repositories":["mine"],"exclude":"repositories"}`, 422, "exclude", ""},
		{"malformed JSON", `{"repositories":[`, 400, "", "JSON"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			resp, data := f.env.DoJSON("POST", f.path("/migrations"), f.token, c.body)
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, c.status, data)
			}
			var e errorBody
			mustUnmarshal(t, data, &e)
			if c.field != "" && (len(e.Errors) == 0 || e.Errors[0].Field != c.field) {
				t.Errorf("errors = %+v, want field %s", e.Errors, c.field)
			}
			if !strings.Contains(string(data), c.mentions) {
				t.Errorf("error %s does not mention %q", data, c.mentions)
			}
		})
	}
	t.Run("none created", func(t *testing.T) {
		t.Parallel()
		resp, data := f.env.Do("GET", f.path("/migrations"), f.token, nil)
		if resp.StatusCode != http.StatusOK || string(data) != "[]\n" && string(data) != "[]" {
			t.Errorf("migrations after refused requests: %d %s", resp.StatusCode, data)
		}
	})
}

// TestOwnersOnly checks rule 5 and the authentication rules: owners with
// classic tokens only.
func TestOwnersOnly(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.env.Repo(f.org, "app")
	member := f.env.User(apptest.Unique("member"))
	outsider := f.env.User(apptest.Unique("outsider"))
	apptest.Must(t, "add member", accounts.SetMember(apptest.Ctx(), f.env.App.DB, f.org.ID, member.ID, accounts.RoleMember))
	m := f.start(`{"repositories":["app"]}`)
	list := f.path("/migrations")
	one := f.path("/migrations/%d", m.ID)
	cases := []struct {
		name, method, path, token string
		status                    int
	}{
		{"anonymous", "GET", list, "", 404}, // the description documents no 401
		{"member", "GET", list, f.env.Token(member, "repo", "admin:org"), 403},
		{"outsider", "GET", one, f.env.Token(outsider, "repo", "admin:org"), 404},
		{"fine-grained PAT of the owner", "GET", list,
			f.env.FineGrainedToken(f.owner, f.org, apptest.AllRepos, "organization_administration:write,administration:write,contents:read"), 403},
		{"fine-grained PAT POST", "POST", list,
			f.env.FineGrainedToken(f.owner, f.org, apptest.AllRepos, "organization_administration:write,administration:write,contents:read"), 403},
		{"installation token", "GET", one, f.env.InstallationToken(f.org, apptest.AllRepos, "organization_administration:write,contents:read"), 403},
		{"app user token", "DELETE", one + "/archive", f.env.AppUserToken(f.owner, f.org, apptest.AllRepos, "organization_administration:write"), 403},
		{"classic without admin:org", "GET", list, f.env.Token(f.owner, "repo"), 403},
		{"classic admin:org reads", "GET", list, f.env.Token(f.owner, "admin:org"), 200},
		{"classic admin:org without repo starts", "POST", list, f.env.Token(f.owner, "admin:org"), 403},
		{"classic admin:org without repo downloads", "GET", one + "/archive", f.env.Token(f.owner, "admin:org"), 403},
		{"owner", "GET", one, f.token, 200},
		{"unknown org", "GET", "/orgs/no-such-org-x/migrations", f.token, 404},
		{"non-numeric id", "GET", f.path("/migrations/abc"), f.token, 404},
		{"missing id", "GET", f.path("/migrations/999999"), f.token, 404},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			resp, data := f.env.DoJSON(c.method, c.path, c.token, `{"repositories":["app"]}`)
			if resp.StatusCode != c.status {
				t.Errorf("%s %s: %d, want %d: %s", c.method, c.path, resp.StatusCode, c.status, data)
			}
			var e errorBody
			if c.status >= 400 && (json.Unmarshal(data, &e) != nil || e.Message == "") {
				t.Errorf("error body without message: %s", data)
			}
		})
	}
}

// TestLocks checks lock_repositories: locked from creation, API writes to
// the repository refused with 403 by the access guard while reads work,
// and the unlock endpoint's rules.
func TestLocks(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.env.Repo(f.org, "locked")
	f.env.Repo(f.org, "free")
	f.env.Repo(f.org, "shared")
	writes := newWriteProbe(t, f)

	m := f.start(`{"repositories":["locked","shared"],"lock_repositories":true}`)
	if !m.LockRepositories {
		t.Error("lock_repositories is false in the migration object")
	}
	for name, want := range map[string]bool{"locked": true, "shared": true, "free": false} {
		if got := repoByName(t, f, name).MigrationLocked; got != want {
			t.Errorf("%s locked = %v right after creation, want %v", name, got, want)
		}
	}
	if status, body := writes.patch("locked"); status != http.StatusForbidden || !strings.Contains(body, "locked for migration") {
		t.Errorf("API write to a locked repository: %d %s", status, body)
	}
	if status, _ := writes.patch("free"); status != http.StatusOK {
		t.Errorf("API write to an unlocked repository: %d", status)
	}
	if resp, data := f.env.Do("GET", "/repos/"+f.org.Login+"/locked", f.token, nil); resp.StatusCode != http.StatusOK {
		t.Errorf("read of a locked repository: %d %s", resp.StatusCode, data)
	}
	work := f.t.TempDir()
	f.git.run(work, "init", "-q")
	f.git.run(work, "commit", "-q", "--allow-empty", "-m", "during the migration")
	if _, err := f.git.try(work, "push", f.gitURL("locked"), "HEAD:refs/heads/main"); err == nil || !strings.Contains(err.Error(), "locked for migration") {
		t.Errorf("git push to a locked repository: %v, want a refusal naming the lock", err)
	}
	f.git.run(work, "push", "-q", f.gitURL("free"), "HEAD:refs/heads/main")
	f.git.run(work, "clone", "-q", f.gitURL("locked"), "reading") // reads keep working

	second := f.start(`{"repositories":["shared","free"],"lock_repositories":true}`)
	unlock := func(id int64, name string) int {
		resp, err := f.client.Migrations.UnlockRepo(apptest.Ctx(), f.org.Login, id, name)
		if resp == nil {
			t.Fatalf("unlock: %v", err)
		}
		return resp.StatusCode
	}
	steps := []struct {
		id     int64
		repo   string
		status int
	}{
		{m.ID, "free", 404},         // not in this migration
		{m.ID, "no-such-repo", 404}, // no such repository
		{m.ID + 1000, "locked", 404},
		{m.ID, "LOCKED", 204},
		{m.ID, "locked", 404}, // no longer locked
		{m.ID, "shared", 204}, // still locked by the second migration
	}
	for _, s := range steps {
		if got := unlock(s.id, s.repo); got != s.status {
			t.Errorf("unlock %s of migration %d: %d, want %d", s.repo, s.id, got, s.status)
		}
	}
	if !repoByName(t, f, "shared").MigrationLocked {
		t.Error("shared was unlocked while the second migration still holds its lock")
	}
	if status, _ := writes.patch("locked"); status != http.StatusOK {
		t.Errorf("API write after unlock: %d", status)
	}
	f.git.run(work, "push", "-q", f.gitURL("locked"), "HEAD:refs/heads/main")
	if got := unlock(second.ID, "shared"); got != 204 {
		t.Errorf("unlock shared of the second migration: %d", got)
	}
	if repoByName(t, f, "shared").MigrationLocked {
		t.Error("shared is still locked after every migration released it")
	}
	unlocked := f.start(`{"repositories":["free"]}`)
	if got := unlock(unlocked.ID, "free"); got != 404 {
		t.Errorf("unlock in a migration that locked nothing: %d, want 404", got)
	}
}

// writeProbe serves a repository write route through the real HTTP
// layer, authentication and access guard over the test server's
// database: the routes that write repositories (hooks, settings) live in
// other areas.
type writeProbe struct {
	f   *fixture
	srv *httptest.Server
}

func newWriteProbe(t *testing.T, f *fixture) *writeProbe {
	t.Helper()
	route := httpapi.Route{Method: "PATCH", Pattern: "/repos/{owner}/{repo}",
		Handle: func(w http.ResponseWriter, r *http.Request) error {
			httpapi.WriteJSON(w, http.StatusOK, map[string]string{"ok": "written"})
			return nil
		},
		Auth: auth.Rule{Target: auth.TargetRepo, Role: auth.RoleAdmin, TokenTypes: auth.AllTokenTypes}}
	api, err := httpapi.NewServer(httpapi.Config{BaseURL: f.env.URL}, f.env.App.Authn, &access.Guard{DB: f.env.App.DB},
		httpapi.NewMetrics(), []httpapi.Route{route})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	return &writeProbe{f: f, srv: srv}
}

func (p *writeProbe) patch(repo string) (int, string) {
	p.f.t.Helper()
	req, _ := http.NewRequest("PATCH", p.srv.URL+"/repos/"+p.f.org.Login+"/"+repo, strings.NewReader(`{}`))
	req.Header.Set("Authorization", "Bearer "+p.f.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		p.f.t.Fatal(err)
	}
	defer resp.Body.Close()
	var e errorBody
	_ = json.NewDecoder(resp.Body).Decode(&e)
	return resp.StatusCode, e.Message
}

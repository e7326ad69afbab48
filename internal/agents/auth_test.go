package agents_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"forgeapi/internal/apptest"
)

func TestAuthentication(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	env := f.env
	keyholder := env.User("keyholder", apptest.UserOpts{Password: "correct horse"})
	env.EnterpriseOwner(f.ent, keyholder)
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("keyholder:correct horse"))

	const (
		all   = "all"   // every endpoint answers
		reads = "reads" // GETs answer, PUT and DELETE are 403
		none  = "none"  // every endpoint is 403
	)
	for _, c := range []struct {
		name, token, auth, allowed, message string
	}{
		{"owner, admin:enterprise", f.bossToken, "", all, ""},
		{"owner, password", "", basic, all, ""},
		{"owner, read:enterprise", env.Token(f.boss, "read:enterprise"), "", none, "accepted scopes: admin:enterprise"},
		{"owner, repo and admin:org", env.Token(f.boss, "repo", "admin:org"), "", none, "admin:enterprise"},
		{"organization owner, admin:enterprise", f.devToken, "", none, "enterprise owner"},
		{"owner, fine-grained read", env.FineGrainedToken(f.boss, f.boss, nil, "enterprise_ai_controls:read"), "", reads, "personal access token"},
		{"owner, fine-grained write", env.FineGrainedToken(f.boss, f.boss, nil, "enterprise_ai_controls:write"), "", all, ""},
		{"owner, fine-grained without the permission", env.FineGrainedToken(f.boss, f.boss, apptest.AllRepos, "contents:write"), "", none, "personal access token"},
		{"owner, fine-grained owned by the organization", env.FineGrainedToken(f.boss, f.acme, nil, "enterprise_ai_controls:write"), "", none, "personal access token"},
		{"organization owner, fine-grained write", env.FineGrainedToken(f.dev, f.dev, nil, "enterprise_ai_controls:write"), "", none, "enterprise owner"},
		{"owner, app user token read", env.AppUserToken(f.boss, f.boss, nil, "enterprise_ai_controls:read"), "", reads, "integration"},
		{"owner, app user token write", env.AppUserToken(f.boss, f.boss, nil, "enterprise_ai_controls:write"), "", all, ""},
		{"installation", env.InstallationToken(f.acme, apptest.AllRepos, "enterprise_ai_controls:write"), "", none, "integration"},
	} {
		f.putSource(t, f.acme, nil)
		headers := []string{}
		if c.auth != "" {
			headers = append(headers, "Authorization", c.auth)
		}
		do := func(method, path, body string) (int, string, map[string]string) {
			resp, b := env.Do(method, path, c.token, strings.NewReader(body), append(headers, "Content-Type", "application/json")...)
			return resp.StatusCode, string(b), map[string]string{
				"perms": resp.Header.Get("X-Accepted-Service-Permissions"), "scopes": resp.Header.Get("X-Accepted-OAuth-Scopes")}
		}
		checks := []struct {
			method, path, body string
			ok                 int
			write              bool
		}{
			{"GET", base, "", 200, false},
			{"GET", base + "/source", "", 200, false},
			{"PUT", base + "/source", `{"organization_id": ` + itoa(f.acme.ID) + `}`, 200, true},
			{"DELETE", base + "/source", "", 204, true},
		}
		for _, ck := range checks {
			want := ck.ok
			if c.allowed == none || c.allowed == reads && ck.write {
				want = 403
			}
			status, body, h := do(ck.method, ck.path, ck.body)
			if status != want {
				t.Errorf("%s: %s %s = %d, want %d\n%s", c.name, ck.method, ck.path, status, want, body)
				continue
			}
			if want == 403 && !strings.Contains(body, c.message) {
				t.Errorf("%s: %s %s: message %s lacks %q", c.name, ck.method, ck.path, body, c.message)
			}
			level := "read"
			if ck.write {
				level = "write"
			}
			if h["perms"] != "enterprise_ai_controls="+level {
				t.Errorf("%s: %s %s: X-Accepted-Service-Permissions %q", c.name, ck.method, ck.path, h["perms"])
			}
			if strings.HasPrefix(c.token, "fap_") && h["scopes"] != "admin:enterprise" {
				t.Errorf("%s: X-Accepted-OAuth-Scopes %q", c.name, h["scopes"])
			}
		}
	}

	// Anonymous callers get 401 where the description documents it (the
	// list and the PUT), 404 elsewhere, whether the enterprise exists or not.
	for _, ck := range []struct {
		method, path string
		status       int
	}{{"GET", base, 401}, {"GET", base + "/source", 404}, {"PUT", base + "/source", 401}, {"DELETE", base + "/source", 404}} {
		f.mustCall(t, ck.status, ck.method, ck.path, "", "")
		f.mustCall(t, ck.status, ck.method, strings.Replace(ck.path, "acme-corp", "nope", 1), "", "")
	}
}

package e2e_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"forgeapi/internal/apptest"
	"forgeapi/internal/auth"
	"forgeapi/internal/repos"
)

// endpoint is one of the five artifact metadata endpoints with a valid body.
type endpoint struct {
	name, method, path string
	body               any
	write              bool
}

func endpoints() []endpoint {
	d := digest("auth")
	return []endpoint{
		{"15 deployment record", "POST", deploymentPath, deployment(map[string]any{"digest": d}), true},
		{"16 cluster", "POST", clusterPath("moda-1"), clusterBody(item("auth", nil)), true},
		{"17 storage record", "POST", storagePath, storage(d, nil), true},
		{"18 list deployment records", "GET", listDeploymentsPath(d), nil, false},
		{"19 list storage records", "GET", listStoragePath(d), nil, false},
	}
}

// oauthToken creates a token of the authorizations API for the user.
func oauthToken(t *testing.T, env *apptest.Env, userID int64) string {
	t.Helper()
	tok, err := auth.CreateToken(context.Background(), env.App.DB, auth.TokenSpec{Kind: auth.KindOAuth, UserID: userID,
		Scopes: auth.Scopes{"repo", "admin:org"}})
	apptest.Must(t, "create oauth token", err)
	return tok.Value
}

func TestArtifactEndpointsRefuseOtherCredentials(t *testing.T) {
	t.Parallel()
	f := newArtifactFixture(t)
	password := f.env.User("pw", apptest.UserOpts{Password: "correct horse battery"})
	f.env.Org("pworg", password)
	classic := f.env.Token(f.owner, "repo", "admin:org", "write:packages")
	oauth := oauthToken(t, f.env, f.owner.ID)
	for _, e := range endpoints() {
		t.Run(e.name, func(t *testing.T) {
			f.call(e.method, e.path, "", e.body).want(t, http.StatusNotFound) // no 401 documented
			for kind, tok := range map[string]string{"classic": classic, "oauth": oauth} {
				r := f.call(e.method, e.path, tok, e.body)
				if r.Status != http.StatusForbidden || !strings.Contains(string(r.Body), "fine-grained") {
					t.Fatalf("%s token: %d %s", kind, r.Status, r.Body)
				}
			}
			resp, body := f.env.Do(e.method, strings.Replace(e.path, "/orgs/acme/", "/orgs/pworg/", 1), "", strings.NewReader(`{}`),
				"Authorization", "Basic "+artifactsBasic("pw", "correct horse battery"))
			if resp.StatusCode != http.StatusForbidden {
				t.Fatalf("password: %d %s", resp.StatusCode, body)
			}
		})
	}
}

func TestArtifactEndpointsPermissions(t *testing.T) {
	t.Parallel()
	f := newArtifactFixture(t)
	all := apptest.AllRepos
	tokens := map[string]string{
		"fine-grained contents:write":          f.env.FineGrainedToken(f.owner, f.org, all, "contents:write"),
		"fine-grained artifact_metadata:write": f.token,
		"fine-grained contents:read":           f.env.FineGrainedToken(f.owner, f.org, all, "contents:read"),
		"fine-grained artifact_metadata:read":  f.env.FineGrainedToken(f.owner, f.org, all, "artifact_metadata:read"),
		"fine-grained issues:write":            f.env.FineGrainedToken(f.owner, f.org, all, "issues:write,attestations:write"),
		"app user artifact_metadata:write":     f.env.AppUserToken(f.owner, f.org, all, "artifact_metadata:write"),
		"app user contents:read":               f.env.AppUserToken(f.owner, f.org, all, "contents:read"),
		"installation artifact_metadata:write": f.env.InstallationToken(f.org, all, "artifact_metadata:write"),
		"installation contents:read":           f.env.InstallationToken(f.org, all, "contents:read"),
		"installation metadata:read":           f.env.InstallationToken(f.org, all, "metadata:read"),
		"member artifact_metadata:write":       f.env.FineGrainedToken(f.member, f.org, all, "artifact_metadata:write"),
	}
	canWrite := map[string]bool{"fine-grained contents:write": true, "fine-grained artifact_metadata:write": true,
		"app user artifact_metadata:write": true, "installation artifact_metadata:write": true, "member artifact_metadata:write": true}
	cannotRead := map[string]bool{"fine-grained issues:write": true, "installation metadata:read": true}
	for _, e := range endpoints() {
		for name, tok := range tokens {
			want := http.StatusOK
			if (e.write && !canWrite[name]) || (!e.write && cannotRead[name]) {
				want = http.StatusForbidden
			}
			t.Run(e.name+"/"+name, func(t *testing.T) {
				r := f.call(e.method, e.path, tok, e.body).want(t, want)
				wantHeader := "contents=read; artifact_metadata=read"
				if e.write {
					wantHeader = "contents=write; artifact_metadata=write"
				}
				if got := r.Header.Get("X-Accepted-Service-Permissions"); got != wantHeader {
					t.Fatalf("X-Accepted-Service-Permissions %q, want %q", got, wantHeader)
				}
				if want == http.StatusForbidden && !strings.Contains(string(r.Body), "not accessible") {
					t.Fatalf("403 body %s", r.Body)
				}
			})
		}
	}
}

func TestArtifactEndpointsOrganizationVisibility(t *testing.T) {
	t.Parallel()
	f := newArtifactFixture(t)
	other := f.env.Org("other", f.outsider)
	cases := map[string]string{
		// A fine-grained token acts only on its resource owner.
		"token on the user, not the org": f.env.FineGrainedToken(f.owner, f.owner, apptest.AllRepos, "artifact_metadata:write"),
		"token on another org":           f.env.FineGrainedToken(f.owner, other, apptest.AllRepos, "artifact_metadata:write"),
		"non-member":                     f.env.FineGrainedToken(f.outsider, f.org, apptest.AllRepos, "artifact_metadata:write"),
		"installation on another org":    f.env.InstallationToken(other, apptest.AllRepos, "artifact_metadata:write"),
	}
	for _, e := range endpoints() {
		for name, tok := range cases {
			t.Run(e.name+"/"+name, func(t *testing.T) {
				f.call(e.method, e.path, tok, e.body).want(t, http.StatusNotFound)
			})
		}
		t.Run(e.name+"/unknown org", func(t *testing.T) {
			f.call(e.method, strings.Replace(e.path, "/orgs/acme/", "/orgs/nope/", 1), f.token, e.body).want(t, http.StatusNotFound)
		})
		t.Run(e.name+"/a user is not an org", func(t *testing.T) {
			f.call(e.method, strings.Replace(e.path, "/orgs/acme/", "/orgs/owner/", 1), f.token, e.body).want(t, http.StatusNotFound)
		})
		t.Run(e.name+"/org name in another case", func(t *testing.T) {
			f.call(e.method, strings.Replace(e.path, "/orgs/acme/", "/orgs/ACME/", 1), f.token, e.body).want(t, http.StatusOK)
		})
	}
}

func TestRepositoryWriteAccessForRecords(t *testing.T) {
	t.Parallel()
	f := newArtifactFixture(t)
	member := f.env.FineGrainedToken(f.member, f.org, apptest.AllRepos, "artifact_metadata:write")
	webOnly := f.env.FineGrainedToken(f.owner, f.org, []*repos.Repository{f.web}, "contents:write")
	cases := []struct {
		name, token, repo string
		want              int
	}{
		{"owner, selected repository", webOnly, "web", http.StatusOK},
		{"owner, public repository not selected", webOnly, "docs", http.StatusForbidden},
		{"owner, private repository not selected", webOnly, "api", http.StatusUnprocessableEntity},
		{"member reads but cannot write a public repository", member, "web", http.StatusForbidden},
		{"member reads but cannot write a private repository", member, "api", http.StatusForbidden},
		{"member, no repository", member, "", http.StatusOK},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := deployment(map[string]any{"service_repository": c.repo, "deployment_name": c.name})
			if c.repo == "" {
				delete(body, "service_repository")
			}
			r := f.call("POST", deploymentPath, c.token, body).want(t, c.want)
			if c.want == http.StatusForbidden && !strings.Contains(string(r.Body), "write permission required") {
				t.Fatalf("403 body %s", r.Body)
			}
		})
	}
}

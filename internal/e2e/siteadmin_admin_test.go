package e2e_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"
	"golang.org/x/crypto/ssh"

	"forgeapi/internal/apptest"
)

// newKey is a fresh ed25519 public key as authorized_keys holds it.
func newAdminKey(t *testing.T) string {
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	apptest.Must(t, "generate a key", err)
	k, err := ssh.NewPublicKey(pub)
	apptest.Must(t, "ssh key", err)
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(k)))
}

// TestCreateOrganization: a site administrator creates an organization
// owned by the admin user it names (201, organization-simple), who then
// administers it; an unknown admin, a taken login or a missing field is
// a 422; anyone else gets 403.
func TestCreateOrganization(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	root := env.User("root", apptest.UserOpts{SiteAdmin: true})
	octo := env.User("octo")
	admin := env.Client(env.Token(root, "site_admin"))

	if _, resp, _ := env.Client(env.Token(octo, "site_admin", "admin:org")).Admin.CreateOrg(ctx, &github.Organization{Login: github.Ptr("acme")}, "octo"); status(resp) != http.StatusForbidden {
		t.Fatalf("creation by a user: %d, want 403", status(resp))
	}
	org, resp, err := admin.Admin.CreateOrg(ctx, &github.Organization{Login: github.Ptr("acme")}, "octo")
	apptest.Must(t, "create organization", err)
	if resp.StatusCode != http.StatusCreated || org.GetLogin() != "acme" || !strings.HasSuffix(org.GetURL(), "/orgs/acme") {
		t.Fatalf("create organization: %d %+v", resp.StatusCode, org)
	}
	owner := env.Client(env.Token(octo, "admin:org"))
	m, _, err := owner.Organizations.GetOrgMembership(ctx, "", "acme")
	apptest.Must(t, "octo's membership", err)
	if m.GetRole() != "admin" || m.GetState() != "active" {
		t.Fatalf("octo's membership: %s %s", m.GetRole(), m.GetState())
	}
	// go-github sends no profile_name; a provisioning script does.
	if resp, body := env.DoJSON("POST", "/admin/organizations", env.Token(root, "site_admin"),
		`{"login":"acme-labs","admin":"octo","profile_name":"Acme Corp"}`); resp.StatusCode != http.StatusCreated {
		t.Fatalf("create with a profile name: %d %s", resp.StatusCode, body)
	}
	got, _, err := owner.Organizations.Get(ctx, "acme-labs")
	apptest.Must(t, "the organization", err)
	if got.GetName() != "Acme Corp" {
		t.Fatalf("profile name: %q", got.GetName())
	}
	for _, c := range []struct{ name, body string }{
		{"unknown admin", `{"login":"acme2","admin":"nobody"}`},
		{"taken login", `{"login":"OCTO","admin":"octo"}`},
		{"missing admin", `{"login":"acme3"}`},
	} {
		if resp, body := env.DoJSON("POST", "/admin/organizations", env.Token(root, "site_admin"), c.body); resp.StatusCode != http.StatusUnprocessableEntity {
			t.Fatalf("%s: %d %s, want 422", c.name, resp.StatusCode, body)
		}
	}
}

// adminKey is the part of GET /admin/keys the tests read.
type adminKey struct {
	ID           int64  `json:"id"`
	Key          string `json:"key"`
	UserID       *int64 `json:"user_id"`
	RepositoryID *int64 `json:"repository_id"`
	URL          string `json:"url"`
}

// TestKeysAndTokens: a site administrator lists every SSH key (users'
// keys and deploy keys) and deletes one of each; lists every user's
// personal access tokens (never their values) and revokes one, which
// stops working at once. Users get 403.
func TestKeysAndTokens(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	root := env.User("root", apptest.UserOpts{SiteAdmin: true})
	octo := env.User("octo")
	repo := env.Repo(octo, "rockets")
	adminToken := env.Token(root, "site_admin")
	octoToken := env.Token(octo, "admin:public_key", "repo")
	c := env.Client(octoToken)
	userKey, _, err := c.Users.CreateKey(ctx, github.CreateUserKeyRequest{Key: newAdminKey(t), Title: github.Ptr("laptop")})
	apptest.Must(t, "user key", err)
	deployKey, _, err := c.Repositories.CreateKey(ctx, "octo", "rockets", github.CreateDeployKeyRequest{Key: newAdminKey(t), Title: github.Ptr("ci")})
	apptest.Must(t, "deploy key", err)

	listKeys := func(t *testing.T, query string) []adminKey {
		resp, body := env.Do("GET", "/admin/keys"+query, adminToken, nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /admin/keys%s: %d %s", query, resp.StatusCode, body)
		}
		var out []adminKey
		apptest.Must(t, "keys", json.Unmarshal(body, &out))
		return out
	}
	apptest.Step(t, "every key, users' and deploy keys, newest first", func(t *testing.T) {
		if resp, _ := env.Do("GET", "/admin/keys", octoToken, nil); resp.StatusCode != http.StatusForbidden {
			t.Fatalf("a user lists keys: %d, want 403", resp.StatusCode)
		}
		keys := listKeys(t, "")
		if len(keys) != 2 || keys[0].ID != deployKey.GetID() || keys[1].ID != userKey.GetID() {
			t.Fatalf("keys: %+v", keys)
		}
		if keys[0].RepositoryID == nil || *keys[0].RepositoryID != repo.ID || keys[0].UserID != nil ||
			!strings.HasSuffix(keys[0].URL, "/repos/octo/rockets/keys/"+strconv.FormatInt(deployKey.GetID(), 10)) {
			t.Fatalf("deploy key: %+v", keys[0])
		}
		if keys[1].UserID == nil || *keys[1].UserID != octo.ID || keys[1].Key != userKey.GetKey() {
			t.Fatalf("user key: %+v", keys[1])
		}
		if asc := listKeys(t, "?direction=asc&per_page=1"); len(asc) != 1 || asc[0].ID != userKey.GetID() {
			t.Fatalf("oldest first, one a page: %+v", asc)
		}
		if used := listKeys(t, "?sort=accessed&since=2020-01-01T00:00:00Z"); len(used) != 0 {
			t.Fatalf("keys used since 2020 (none ever was): %+v", used)
		}
		if resp, _ := env.Do("GET", "/admin/keys?sort=size", adminToken, nil); resp.StatusCode != http.StatusUnprocessableEntity {
			t.Fatalf("unknown sort: %d, want 422", resp.StatusCode)
		}
	})

	apptest.Step(t, "a site administrator deletes a user's key and a deploy key", func(t *testing.T) {
		for _, id := range []int64{userKey.GetID(), deployKey.GetID()} {
			path := "/admin/keys/" + strconv.FormatInt(id, 10)
			if resp, body := env.Do("DELETE", path, adminToken, nil); resp.StatusCode != http.StatusNoContent {
				t.Fatalf("DELETE %s: %d %s", path, resp.StatusCode, body)
			}
			if resp, _ := env.Do("DELETE", path, adminToken, nil); resp.StatusCode != http.StatusNotFound {
				t.Fatalf("DELETE %s again: %d, want 404", path, resp.StatusCode)
			}
		}
		if keys := listKeys(t, ""); len(keys) != 0 {
			t.Fatalf("keys left: %+v", keys)
		}
		if list, _, err := c.Users.ListKeys(ctx, "", nil); err != nil || len(list) != 0 {
			t.Fatalf("octo's keys: %v %v", list, err)
		}
	})

	apptest.Step(t, "every user's personal access tokens, one revoked", func(t *testing.T) {
		resp, body := env.Do("GET", "/admin/tokens", adminToken, nil)
		var tokens []struct {
			ID             int64    `json:"id"`
			Token          string   `json:"token"`
			TokenLastEight string   `json:"token_last_eight"`
			Scopes         []string `json:"scopes"`
			User           struct {
				Login string `json:"login"`
			} `json:"user"`
		}
		apptest.Must(t, "tokens", json.Unmarshal(body, &tokens))
		if resp.StatusCode != http.StatusOK || len(tokens) != 2 {
			t.Fatalf("GET /admin/tokens: %d %s", resp.StatusCode, body)
		}
		octoID := int64(0)
		for _, z := range tokens {
			if z.Token != "" {
				t.Fatalf("a listed token shows its value: %+v", z)
			}
			if z.User.Login == "octo" {
				octoID = z.ID
				if z.TokenLastEight != octoToken[len(octoToken)-8:] || strings.Join(z.Scopes, " ") != "admin:public_key repo" {
					t.Fatalf("octo's token: %+v", z)
				}
			}
		}
		if resp, _ := env.Do("GET", "/admin/tokens", octoToken, nil); resp.StatusCode != http.StatusForbidden {
			t.Fatalf("a user lists tokens: %d, want 403", resp.StatusCode)
		}
		path := "/admin/tokens/" + strconv.FormatInt(octoID, 10)
		if resp, body := env.Do("DELETE", path, adminToken, nil); resp.StatusCode != http.StatusNoContent {
			t.Fatalf("DELETE %s: %d %s", path, resp.StatusCode, body)
		}
		if _, resp, _ := c.Users.Get(ctx, ""); status(resp) != http.StatusUnauthorized {
			t.Fatalf("the revoked token: %d, want 401", status(resp))
		}
		if resp, _ := env.Do("DELETE", path, adminToken, nil); resp.StatusCode != http.StatusNotFound {
			t.Fatalf("DELETE %s again: %d, want 404", path, resp.StatusCode)
		}
	})
}

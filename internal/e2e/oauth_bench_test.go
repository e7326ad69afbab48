package e2e_test

import (
	"fmt"
	"net/http"
	"testing"

	"forgeapi/internal/apptest"
	"forgeapi/internal/auth"
	"forgeapi/internal/oauth"
)

// BenchmarkTokenRequest measures a request authenticated with a token
// made by the authorizations API (GET /user): the per-request token
// lookup that makes revocation immediate.
func BenchmarkTokenRequest(b *testing.B) {
	env := apptest.Start(b)
	u := newUser(b, env, "octocat")
	z, err := env.App.OAuth.Create(apptest.Ctx(), u.ID, oauth.NewAuthorization{Note: "bench", Scopes: auth.Scopes{"user"}})
	apptest.Must(b, "create authorization", err)
	c := bearer(b, env, z.Token)
	for b.Loop() {
		if resp, err := c.do("GET", "user", nil, nil); resp.StatusCode != http.StatusOK {
			b.Fatalf("GET /user: %d %v", resp.StatusCode, err)
		}
	}
}

// BenchmarkListGrants measures GET /applications/grants?per_page=100 for
// a user with 100 applications holding three tokens each (the scope
// unions included). Basic authentication uses a low-cost bcrypt hash,
// so the number is the API's own work.
func BenchmarkListGrants(b *testing.B) {
	env := apptest.Start(b)
	u := newUser(b, env, "octocat", apptest.UserOpts{Password: password})
	for i := range 100 {
		app := newApp(b, env, u, fmt.Sprint("app", i))
		for j, scope := range []string{"repo", "gist", "user"} {
			_, err := env.App.OAuth.Create(apptest.Ctx(), u.ID, oauth.NewAuthorization{App: &app.App,
				Scopes: auth.Scopes{scope}, Fingerprint: fmt.Sprint("fp", j)})
			apptest.Must(b, "create authorization", err)
		}
	}
	c := oauthBasic(b, env, "octocat", password, "")
	for b.Loop() {
		var grants []map[string]any
		if resp, err := c.do("GET", "applications/grants?per_page=100", nil, &grants); resp.StatusCode != http.StatusOK || len(grants) != 100 {
			b.Fatalf("list grants: %d %d %v", resp.StatusCode, len(grants), err)
		}
	}
}

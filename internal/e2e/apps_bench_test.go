package e2e_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"forgeapi/internal/apptest"
)

// BenchmarkMintInstallationToken measures the server time of POST
// /app/installations/{installation_id}/access_tokens on SQLite, in
// process (every middleware, JWT verification, the installation lookup,
// the token row written in its transaction, the response): ns/op is the
// server time. The app signs one JWT and reuses it, as ghinstallation
// and @octokit/auth-app do for its lifetime; the server parses the app's
// public key once and then finds it in its cache, checking only the
// signature per request.
func BenchmarkMintInstallationToken(b *testing.B) {
	env := apptest.Start(b)
	octo := env.User("octo")
	org := env.Org("acme", octo)
	repo := env.Repo(org, "widgets", apptest.RepoOpts{Private: true})
	a := env.RegisterApp(org, "Bench Bot", "contents:read,statuses:write")
	inst := env.Install(a, org, repo)
	now := time.Now().Unix()
	token := jwtFor(b, a.PrivateKeyPEM, jwt.MapClaims{"iss": a.ID, "iat": now - 60, "exp": now + 540})
	path := fmt.Sprintf("/app/installations/%d/access_tokens", inst.ID)
	h := env.Main.Handler()
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest("POST", path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusCreated {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
}

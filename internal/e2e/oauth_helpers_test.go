package e2e_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"
	"golang.org/x/crypto/bcrypt"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apptest"
)

// caller sends raw API requests through a go-github client (go-github
// has no methods for most of these endpoints any more).
type caller struct {
	t  testing.TB
	gh *github.Client
}

// basic returns a caller using HTTP Basic with the login and password,
// and otp in go-github's OTP header when not empty.
func oauthBasic(t testing.TB, env *apptest.Env, login, password, otp string) caller {
	return caller{t: t, gh: env.BasicClient(login, password, otp)}
}

// bearer returns a caller sending the token.
func bearer(t testing.TB, env *apptest.Env, token string) caller {
	return caller{t: t, gh: env.Client(token)}
}

// do sends the request (body nil for none) and decodes a 2xx body into
// out. headers are name, value pairs. It returns the response and, for a
// status outside 2xx, go-github's error (an *github.ErrorResponse).
func (c caller) do(method, path string, body, out any, headers ...string) (*github.Response, error) {
	c.t.Helper()
	req, err := c.gh.NewRequest(apptest.Ctx(), method, strings.TrimPrefix(path, "/"), body)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := c.gh.Do(req, out)
	if resp == nil {
		c.t.Fatalf("%s %s: no response: %v", method, path, err)
	}
	return resp, err
}

// want sends the request and fails the test unless the status is status.
func (c caller) want(status int, method, path string, body, out any, headers ...string) *github.Response {
	c.t.Helper()
	resp, err := c.do(method, path, body, out, headers...)
	if resp.StatusCode != status {
		c.t.Fatalf("%s %s: status %d, want %d (%v)", method, path, resp.StatusCode, status, err)
	}
	return resp
}

// wantError sends the request, expects the status, and returns the error
// body go-github parsed.
func (c caller) wantError(status int, method, path string, body any, headers ...string) *github.ErrorResponse {
	c.t.Helper()
	resp, err := c.do(method, path, body, nil, headers...)
	if resp.StatusCode != status {
		c.t.Fatalf("%s %s: status %d, want %d (%v)", method, path, resp.StatusCode, status, err)
	}
	var er *github.ErrorResponse
	switch e := err.(type) {
	case *github.ErrorResponse:
		er = e
	case *github.TwoFactorAuthError:
		er = (*github.ErrorResponse)(e)
	default:
		c.t.Fatalf("%s %s: error %T %v, want an error response", method, path, err, err)
	}
	if er.Message == "" {
		c.t.Fatalf("%s %s: error without a message", method, path)
	}
	return er
}

// wantField fails unless the error lists a field error with the field
// and code.
func wantField(t *testing.T, er *github.ErrorResponse, field, code string) {
	t.Helper()
	for _, e := range er.Errors {
		if e.Field == field && e.Code == code {
			return
		}
	}
	t.Fatalf("errors %+v: want field %q code %q", er.Errors, field, code)
}

// newUser creates a user whose password is hashed with bcrypt's lowest
// cost: the server checks it on every Basic request exactly as it checks
// any other hash, only faster, which keeps these Basic-only tests quick
// under the race detector.
func newUser(t testing.TB, env *apptest.Env, login string, opts ...apptest.UserOpts) *accounts.Account {
	t.Helper()
	var o apptest.UserOpts
	if len(opts) > 0 {
		o = opts[0]
	}
	pw := o.Password
	o.Password = ""
	u := env.User(login, o)
	if pw != "" {
		h, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.MinCost)
		apptest.Must(t, "hash password", err)
		_, err = env.App.DB.ExecContext(apptest.Ctx(), `UPDATE accounts SET password_hash = $1 WHERE id = $2`, string(h), u.ID)
		apptest.Must(t, "set password", err)
	}
	return u
}

// basicHeader is the Authorization header of HTTP Basic, for raw
// requests through env.Do.
func basicHeader(login, password string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(login+":"+password))
}

// authorization is the JSON of an authorization, with the fields tests
// check (go-github's Authorization lacks expires_at).
type authorization struct {
	ID             int64    `json:"id"`
	URL            string   `json:"url"`
	Scopes         []string `json:"scopes"`
	Token          string   `json:"token"`
	TokenLastEight string   `json:"token_last_eight"`
	HashedToken    string   `json:"hashed_token"`
	App            struct {
		ClientID string `json:"client_id"`
		Name     string `json:"name"`
		URL      string `json:"url"`
	} `json:"app"`
	Note        *string `json:"note"`
	NoteURL     *string `json:"note_url"`
	Fingerprint *string `json:"fingerprint"`
	CreatedAt   string  `json:"created_at"`
	UpdatedAt   string  `json:"updated_at"`
	User        struct {
		Login string `json:"login"`
	} `json:"user"`
}

// createBody is the body of POST /authorizations and the PUT endpoints.
type createBody struct {
	Scopes       []string `json:"scopes,omitempty"`
	Note         string   `json:"note,omitempty"`
	NoteURL      string   `json:"note_url,omitempty"`
	ClientID     string   `json:"client_id,omitempty"`
	ClientSecret string   `json:"client_secret,omitempty"`
	Fingerprint  string   `json:"fingerprint,omitempty"`
}

// checkSecretFields checks the token-derived fields of a created
// authorization against its token.
func checkSecretFields(t *testing.T, a authorization) {
	t.Helper()
	if a.Token == "" {
		t.Fatalf("created authorization %d has no token", a.ID)
	}
	sum := sha256.Sum256([]byte(a.Token))
	if a.HashedToken != hex.EncodeToString(sum[:]) {
		t.Fatalf("hashed_token %q is not the SHA-256 of the token", a.HashedToken)
	}
	if a.TokenLastEight != a.Token[len(a.Token)-8:] {
		t.Fatalf("token_last_eight %q, token ends %q", a.TokenLastEight, a.Token[len(a.Token)-8:])
	}
}

// scopesOf returns the scopes the token authenticates with, from the
// X-OAuth-Scopes header of GET /user, or the status when it does not.
func scopesOf(t *testing.T, env *apptest.Env, token string) (string, int) {
	t.Helper()
	resp, _ := bearer(t, env, token).do("GET", "user", nil, nil)
	if resp.StatusCode != http.StatusOK {
		return "", resp.StatusCode
	}
	return resp.Header.Get("X-OAuth-Scopes"), resp.StatusCode
}

// wantScopes fails unless the token authenticates with exactly scopes.
func wantScopes(t *testing.T, env *apptest.Env, token string, scopes ...string) {
	t.Helper()
	got, status := scopesOf(t, env, token)
	if status != http.StatusOK {
		t.Fatalf("token does not authenticate: GET /user %d", status)
	}
	if want := strings.Join(scopes, ", "); got != want {
		t.Fatalf("X-OAuth-Scopes %q, want %q", got, want)
	}
}

// wantRevoked fails unless the token is refused with 401.
func wantRevoked(t *testing.T, env *apptest.Env, token string) {
	t.Helper()
	if _, status := scopesOf(t, env, token); status != http.StatusUnauthorized {
		t.Fatalf("revoked token: GET /user %d, want 401", status)
	}
}

// newApp registers an OAuth application owned by owner.
func newApp(t testing.TB, env *apptest.Env, owner *accounts.Account, name string) *accounts.CreatedApp {
	t.Helper()
	app, err := accounts.CreateApp(apptest.Ctx(), env.App.DB, owner.ID, name, "https://"+strings.ToLower(name)+".example")
	apptest.Must(t, "create app", err)
	return app
}

func sameStrings(a, b []string) bool { return slices.Equal(a, b) }

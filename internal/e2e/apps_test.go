package e2e_test

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/golang-jwt/jwt/v5"
	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apps"
	"forgeapi/internal/apptest"
)

// fixture is an organization with two private repositories, one pushed
// to, and an app installed on the first only.
type appFixture struct {
	env   *apptest.Env
	app   *apps.Created
	inst  *apps.Installation
	owner string // the organization owner's classic token
	sha   string // the head commit of acme/inside
}

func setUp(t *testing.T, permissions string) *appFixture {
	t.Helper()
	env := apptest.Start(t)
	octo := env.User("octo")
	org := env.Org("acme", octo)
	inside := env.Repo(org, "inside", apptest.RepoOpts{Private: true})
	env.Repo(org, "outside", apptest.RepoOpts{Private: true})
	token := env.Token(octo, "repo")
	work := apptest.WorkTree(t, map[string]string{"a.txt": "1\n"})
	sha := strings.TrimSpace(apptest.Git(t, work, "rev-parse", "HEAD"))
	apptest.Git(t, work, "push", "-q", env.GitURL("acme", "inside", "octo", token), "HEAD:refs/heads/main")
	a := env.RegisterApp(org, "Status Bot", permissions, apptest.AppOpts{Events: []string{"push"}})
	inst := env.Install(a, org, inside)
	return &appFixture{env: env, app: a, inst: inst, owner: token, sha: sha}
}

// appsTransport is ghinstallation's app transport for the fixture's app.
func (f *appFixture) appsTransport(t *testing.T) *ghinstallation.AppsTransport {
	t.Helper()
	atr, err := ghinstallation.NewAppsTransport(f.env.Transport(), f.app.ID, f.app.PrivateKeyPEM)
	apptest.Must(t, "apps transport", err)
	atr.BaseURL = f.env.APIBase()
	return atr
}

// TestGhinstallationAppAndInstallation drives the app dance with
// ghinstallation and go-github as an integration does: the app reads
// itself and its installations with its JWT, then an installation
// transport mints a token and uses it on the installation's repository,
// is refused one outside the selection, and posts a commit status.
func TestGhinstallationAppAndInstallation(t *testing.T) {
	t.Parallel()
	f := setUp(t, "contents:read,statuses:write")
	ctx := apptest.Ctx()
	atr := f.appsTransport(t)
	ac := f.env.ClientWith(atr)

	app, _, err := ac.Apps.Get(ctx, "")
	apptest.Must(t, "GET /app", err)
	if app.GetSlug() != "status-bot" || app.GetID() != f.app.ID || app.GetOwner().GetLogin() != "acme" ||
		app.GetInstallationsCount() != 1 || app.GetPermissions().GetStatuses() != "write" {
		t.Fatalf("app = %+v", app)
	}
	// Not validated: the description of apps/list-installations gives
	// account as allOf simple-user and enterprise (its other operations
	// say anyOf), which no account matches; it needs an allow rule.
	unvalidated, err := ghinstallation.NewAppsTransport(http.DefaultTransport, f.app.ID, f.app.PrivateKeyPEM)
	apptest.Must(t, "apps transport", err)
	unvalidated.BaseURL = f.env.APIBase()
	insts, _, err := f.env.ClientWith(unvalidated).Apps.ListInstallations(ctx, nil)
	apptest.Must(t, "list installations", err)
	if len(insts) != 1 || insts[0].GetID() != f.inst.ID || insts[0].GetAccount().GetLogin() != "acme" ||
		insts[0].GetRepositorySelection() != "selected" || insts[0].GetTargetType() != "Organization" {
		t.Fatalf("installations = %+v", insts)
	}
	for _, get := range []func() (*github.Installation, *github.Response, error){
		func() (*github.Installation, *github.Response, error) { return ac.Apps.GetInstallation(ctx, f.inst.ID) },
		func() (*github.Installation, *github.Response, error) {
			return ac.Apps.GetOrganizationInstallation(ctx, "acme")
		},
		func() (*github.Installation, *github.Response, error) {
			return ac.Apps.GetRepositoryInstallation(ctx, "acme", "inside")
		},
	} {
		inst, _, err := get()
		apptest.Must(t, "get installation", err)
		if inst.GetID() != f.inst.ID {
			t.Fatalf("installation = %+v", inst)
		}
	}
	if _, resp, err := ac.Apps.GetRepositoryInstallation(ctx, "acme", "outside"); apptest.ResponseStatus(resp) != 404 {
		t.Fatalf("installation of a repository outside the selection: %v", err)
	}
	if _, resp, err := ac.Apps.GetUserInstallation(ctx, "octo"); apptest.ResponseStatus(resp) != 404 {
		t.Fatalf("installation on a user it is not installed on: %v", err)
	}

	itr := ghinstallation.NewFromAppsTransport(atr, f.inst.ID)
	ic := f.env.ClientWith(itr)
	repo, _, err := ic.Repositories.Get(ctx, "acme", "inside")
	apptest.Must(t, "installation reads its private repository", err)
	if !repo.GetPrivate() {
		t.Fatalf("repo = %+v", repo)
	}
	if _, resp, _ := ic.Repositories.Get(ctx, "acme", "outside"); apptest.ResponseStatus(resp) != 404 {
		t.Fatalf("a repository outside the selection: %d, want 404", apptest.ResponseStatus(resp))
	}
	st, _, err := ic.Repositories.CreateStatus(ctx, "acme", "inside", f.sha,
		github.RepoStatus{State: github.Ptr("success"), Context: github.Ptr("ci/bot")})
	apptest.Must(t, "installation posts a status", err)
	if st.GetCreator().GetLogin() != "status-bot[bot]" || st.GetCreator().GetType() != "Bot" {
		t.Fatalf("status creator = %+v", st.GetCreator())
	}
	list, _, err := ic.Apps.ListRepos(ctx, nil)
	apptest.Must(t, "GET /installation/repositories", err)
	if list.GetTotalCount() != 1 || list.Repositories[0].GetFullName() != "acme/inside" {
		t.Fatalf("installation repositories = %+v", list)
	}
	perms, err := itr.Permissions()
	apptest.Must(t, "token permissions", err)
	if perms.GetStatuses() != "write" || perms.GetContents() != "read" || perms.GetMetadata() != "read" {
		t.Fatalf("token permissions = %+v", perms)
	}
}

// jwtFor signs claims with key as an app's JWT (RS256).
func jwtFor(t testing.TB, key []byte, claims jwt.MapClaims) string {
	t.Helper()
	k, err := jwt.ParseRSAPrivateKeyFromPEM(key)
	apptest.Must(t, "private key", err)
	s, err := jwt.NewWithClaims(jwt.SigningMethodRS256, claims).SignedString(k)
	apptest.Must(t, "sign", err)
	return s
}

func otherKeyPEM(t *testing.T) []byte {
	t.Helper()
	k, err := rsa.GenerateKey(randReader{}, 2048)
	apptest.Must(t, "key", err)
	return pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})
}

// wantMessage checks a response's status and error message.
func wantMessage(t *testing.T, what string, resp *http.Response, body []byte, status int, message string) {
	t.Helper()
	var e struct{ Message string }
	_ = json.Unmarshal(body, &e)
	if resp.StatusCode != status || e.Message != message {
		t.Errorf("%s: %d %s, want %d %q", what, resp.StatusCode, body, status, message)
	}
}

// TestJWTErrors sends bad JWTs where the platform documents a 401
// (minting a token) and wants its messages; a JWT on any other route is
// no credential, and other credentials on JWT routes are refused.
func TestJWTErrors(t *testing.T) {
	t.Parallel()
	f := setUp(t, "contents:read")
	now := time.Now().Unix()
	path := fmt.Sprintf("/app/installations/%d/access_tokens", f.inst.ID)
	good := func(c jwt.MapClaims) jwt.MapClaims {
		out := jwt.MapClaims{"iss": f.app.ID, "iat": now - 30, "exp": now + 540}
		for k, v := range c {
			out[k] = v
		}
		return out
	}
	cases := []struct {
		name    string
		token   string
		message string
	}{
		{"expired", jwtFor(t, f.app.PrivateKeyPEM, good(jwt.MapClaims{"iat": now - 400, "exp": now - 100})),
			"'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires"},
		{"iat too old", jwtFor(t, f.app.PrivateKeyPEM, good(jwt.MapClaims{"iat": now - 3600})),
			"'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued"},
		{"iat not an integer", jwtFor(t, f.app.PrivateKeyPEM, good(jwt.MapClaims{"iat": "soon"})),
			"'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued"},
		{"exp too far", jwtFor(t, f.app.PrivateKeyPEM, good(jwt.MapClaims{"exp": now + 900})),
			"'Expiration time' claim ('exp') is too far in the future"},
		{"wrong key", jwtFor(t, otherKeyPEM(t), good(nil)), "A JSON web token could not be decoded"},
		{"unknown iss", jwtFor(t, f.app.PrivateKeyPEM, good(jwt.MapClaims{"iss": 999999})), "Integration not found"},
		{"not a JWT", "eyJhbGciOiJSUzI1NiJ9.e30", "A JSON web token could not be decoded"},
		{"a token", f.owner, "A JSON web token could not be decoded"},
	}
	for _, c := range cases {
		resp, body := f.env.Do("POST", path, c.token, nil)
		wantMessage(t, c.name, resp, body, 401, c.message)
	}
	// The client id and the id as a string are issuers too.
	for _, iss := range []any{f.app.ClientID, fmt.Sprint(f.app.ID)} {
		resp, body := f.env.Do("POST", path, jwtFor(t, f.app.PrivateKeyPEM, good(jwt.MapClaims{"iss": iss})), nil)
		if resp.StatusCode != 201 {
			t.Errorf("iss %v: %d %s", iss, resp.StatusCode, body)
		}
	}
	resp, body := f.env.Do("GET", "/user", jwtFor(t, f.app.PrivateKeyPEM, good(nil)), nil)
	wantMessage(t, "a JWT on GET /user", resp, body, 401, "Bad credentials")
}

// TestInstallationLifecycle narrows, suspends, revokes and uninstalls.
func TestInstallationLifecycle(t *testing.T) {
	t.Parallel()
	f := setUp(t, "contents:read,statuses:write")
	ctx := apptest.Ctx()
	atr := f.appsTransport(t)
	ac := f.env.ClientWith(atr)
	mint := func(opts *github.InstallationTokenOptions) (*github.InstallationToken, *github.Response, error) {
		return ac.Apps.CreateInstallationToken(ctx, f.inst.ID, opts)
	}

	_, resp, _ := mint(&github.InstallationTokenOptions{Permissions: &github.InstallationPermissions{Contents: github.Ptr("write")}})
	if apptest.ResponseStatus(resp) != 422 {
		t.Fatalf("more than the installation holds: %d, want 422", apptest.ResponseStatus(resp))
	}
	_, resp, _ = mint(&github.InstallationTokenOptions{Repositories: []string{"outside"}})
	if apptest.ResponseStatus(resp) != 422 {
		t.Fatalf("a repository outside the selection: %d, want 422", apptest.ResponseStatus(resp))
	}
	narrow, _, err := mint(&github.InstallationTokenOptions{Repositories: []string{"inside"},
		Permissions: &github.InstallationPermissions{Contents: github.Ptr("read")}})
	apptest.Must(t, "narrowed token", err)
	if len(narrow.Repositories) != 1 ||
		narrow.GetPermissions().GetStatuses() != "" || narrow.ExpiresAt.Sub(time.Now()) < 59*time.Minute {
		t.Fatalf("narrowed token = %+v", narrow)
	}
	nc := f.env.Client(narrow.GetToken())
	if _, resp, _ := nc.Repositories.CreateStatus(ctx, "acme", "inside", f.sha, github.RepoStatus{State: github.Ptr("success")}); apptest.ResponseStatus(resp) != 403 {
		t.Fatalf("a status without statuses:write: %d, want 403", apptest.ResponseStatus(resp))
	}

	// Suspended: no minting, and the tokens it minted stop.
	_, err = ac.Apps.SuspendInstallation(ctx, f.inst.ID)
	apptest.Must(t, "suspend", err)
	if _, resp, _ := mint(nil); apptest.ResponseStatus(resp) != 403 {
		t.Fatalf("minting while suspended: %d, want 403", apptest.ResponseStatus(resp))
	}
	r, body := f.env.Do("GET", "/installation/repositories", narrow.GetToken(), nil)
	wantMessage(t, "a token while suspended", r, body, 403, "This installation has been suspended")
	inst, _, err := ac.Apps.GetInstallation(ctx, f.inst.ID)
	apptest.Must(t, "get suspended", err)
	if inst.SuspendedAt == nil {
		t.Fatalf("installation not shown suspended: %+v", inst)
	}
	_, err = ac.Apps.UnsuspendInstallation(ctx, f.inst.ID)
	apptest.Must(t, "unsuspend", err)
	if _, _, err := nc.Apps.ListRepos(ctx, nil); err != nil {
		t.Fatalf("token after unsuspension: %v", err)
	}

	// DELETE /installation/token revokes the caller.
	if _, err := nc.Apps.RevokeInstallationToken(ctx); err != nil {
		t.Fatalf("revoke: %v", err)
	}
	r, body = f.env.Do("GET", "/installation/repositories", narrow.GetToken(), nil)
	wantMessage(t, "a revoked token", r, body, 401, "Bad credentials")

	// Uninstalling deletes the installation's tokens at once.
	tok, _, err := mint(nil)
	apptest.Must(t, "mint", err)
	_, err = ac.Apps.DeleteInstallation(ctx, f.inst.ID)
	apptest.Must(t, "uninstall", err)
	r, body = f.env.Do("GET", "/installation/repositories", tok.GetToken(), nil)
	wantMessage(t, "a token of an uninstalled installation", r, body, 401, "Bad credentials")
	if _, resp, _ := ac.Apps.GetInstallation(ctx, f.inst.ID); apptest.ResponseStatus(resp) != 404 {
		t.Fatalf("uninstalled installation: %d, want 404", apptest.ResponseStatus(resp))
	}
}

// TestGetAppBySlug: a private app is seen by its owner's members only.
func TestGetAppBySlug(t *testing.T) {
	t.Parallel()
	f := setUp(t, "contents:read")
	ctx := apptest.Ctx()
	if _, resp, _ := f.env.Client("").Apps.Get(ctx, "status-bot"); apptest.ResponseStatus(resp) != 404 {
		t.Fatalf("anonymous on a private app: %d, want 404", apptest.ResponseStatus(resp))
	}
	app, _, err := f.env.Client(f.owner).Apps.Get(ctx, "status-bot")
	apptest.Must(t, "owner reads its private app", err)
	if app.GetName() != "Status Bot" || app.InstallationsCount != nil {
		t.Fatalf("app = %+v", app)
	}
	pub := f.env.RegisterApp(f.env.User("hubot"), "Public Thing", "issues:write", apptest.AppOpts{Public: true})
	app, _, err = f.env.Client("").Apps.Get(ctx, pub.Slug)
	apptest.Must(t, "anyone reads a public app", err)
	if app.GetSlug() != "public-thing" {
		t.Fatalf("app = %+v", app)
	}
}

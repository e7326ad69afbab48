package e2e_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"forgeapi/internal/app"
	"forgeapi/internal/apptest"
	"forgeapi/internal/auth"
	"forgeapi/internal/cli"
	"forgeapi/internal/oauth"
)

// clock is a server clock the test moves by hand, so that one-time
// passwords fall in known steps.
type oauthClock struct{ unix atomic.Int64 }

func (c *oauthClock) Now() time.Time          { return time.Unix(c.unix.Load(), 0) }
func (c *oauthClock) advance(d time.Duration) { c.unix.Add(int64(d / time.Second)) }

func TestOneTimePasswords(t *testing.T) {
	t.Parallel()
	clk := &oauthClock{}
	clk.unix.Store(1_900_000_020 / auth.TOTPPeriod * auth.TOTPPeriod) // the start of a step
	env := apptest.Start(t, apptest.WithClock(clk.Now))
	const secret = "JBSWY3DPEHPK3PXP"
	user := newUser(t, env, "mona", apptest.UserOpts{Password: password, TOTPSecret: secret})
	ci := newApp(t, env, user, "CI")
	code := func() string {
		t.Helper()
		c, err := auth.TOTPCode(secret, clk.Now())
		apptest.Must(t, "totp code", err)
		return c
	}
	wrong := func() string {
		if code() == "123456" {
			return "654321"
		}
		return "123456"
	}
	noOTP := oauthBasic(t, env, "mona", password, "")
	wantOTPRequired := func(method, path string, body any, c caller) {
		t.Helper()
		resp, err := c.do(method, path, body, nil)
		if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("X-Service-OTP") != "required; app" {
			t.Fatalf("%s %s: %d, X-Service-OTP %q (%v); want 401 required; app", method, path,
				resp.StatusCode, resp.Header.Get("X-Service-OTP"), err)
		}
	}

	// Endpoint 5: missing, wrong, valid, replayed.
	wantOTPRequired("POST", "authorizations", createBody{Note: "n"}, noOTP)
	wantOTPRequired("POST", "authorizations", createBody{Note: "n"}, oauthBasic(t, env, "mona", password, wrong()))
	var a authorization
	valid := code()
	oauthBasic(t, env, "mona", password, valid).want(http.StatusCreated, "POST", "authorizations", createBody{Note: "n", Scopes: []string{"repo"}}, &a)
	wantOTPRequired("POST", "authorizations", createBody{Note: "n2"}, oauthBasic(t, env, "mona", password, valid))

	// Reads and deletes need no code.
	noOTP.want(http.StatusOK, "GET", "authorizations", nil, nil)
	noOTP.want(http.StatusOK, "GET", "authorizations/"+fmt.Sprint(a.ID), nil, nil)
	noOTP.want(http.StatusOK, "GET", "applications/grants", nil, nil)

	// Endpoint 9, with the code in X-Service-OTP itself.
	clk.advance(auth.TOTPPeriod * time.Second)
	wantOTPRequired("PATCH", "authorizations/"+fmt.Sprint(a.ID), map[string]any{"add_scopes": []string{"user"}}, noOTP)
	noOTP.want(http.StatusOK, "PATCH", "authorizations/"+fmt.Sprint(a.ID), map[string]any{"add_scopes": []string{"user"}}, nil,
		"X-Service-OTP", code())

	// Endpoints 6 and 7.
	clk.advance(auth.TOTPPeriod * time.Second)
	body := createBody{ClientSecret: ci.ClientSecret, Scopes: []string{"gist"}}
	wantOTPRequired("PUT", "authorizations/clients/"+ci.ClientID, body, noOTP)
	var forApp authorization
	oauthBasic(t, env, "mona", password, code()).want(http.StatusCreated, "PUT", "authorizations/clients/"+ci.ClientID, body, &forApp)
	clk.advance(auth.TOTPPeriod * time.Second)
	wantOTPRequired("PUT", "authorizations/clients/"+ci.ClientID+"/fp", body, noOTP)
	wantOTPRequired("PUT", "authorizations/clients/"+ci.ClientID+"/fp", body, oauthBasic(t, env, "mona", password, wrong()))
	oauthBasic(t, env, "mona", password, code()).want(http.StatusCreated, "PUT", "authorizations/clients/"+ci.ClientID+"/fp", body, nil)

	// Nothing refused above was stored.
	var list []authorization
	noOTP.want(http.StatusOK, "GET", "authorizations", nil, &list)
	if len(list) != 3 || !sameStrings(list[0].Scopes, []string{"repo", "user"}) {
		t.Fatalf("authorizations: %+v", list)
	}

	// Deleting needs no code; the tokens were real.
	wantScopes(t, env, a.Token, "repo", "user")
	noOTP.want(http.StatusNoContent, "DELETE", "authorizations/"+fmt.Sprint(a.ID), nil, nil)
	wantRevoked(t, env, a.Token)
	var grants []map[string]any
	noOTP.want(http.StatusOK, "GET", "applications/grants", nil, &grants)
	noOTP.want(http.StatusNoContent, "DELETE", "applications/grants/"+fmt.Sprint(grants[0]["id"]), nil, nil)
	wantRevoked(t, env, forApp.Token)
}

func TestSAMLEnforcedOrganizationRefusesAuthorizationTokens(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	user := newUser(t, env, "octocat", apptest.UserOpts{Password: password})
	enforced := env.Org("acme", user)
	open := env.Org("open", user)
	env.Repo(enforced, "widgets", apptest.RepoOpts{Private: true})
	env.Repo(open, "tools", apptest.RepoOpts{Private: true})
	_, err := env.App.DB.ExecContext(apptest.Ctx(), `UPDATE accounts SET saml_enforced = TRUE WHERE id = $1`, enforced.ID)
	apptest.Must(t, "enforce SAML", err)

	var a authorization
	oauthBasic(t, env, "octocat", password, "").want(http.StatusCreated, "POST", "authorizations",
		createBody{Note: "sso", Scopes: []string{"repo", "read:org"}}, &a)
	tok := bearer(t, env, a.Token)
	for _, path := range []string{"repos/acme/widgets", "orgs/acme"} {
		er := tok.wantError(http.StatusForbidden, "GET", path, nil)
		if !strings.Contains(er.Message, "SAML") {
			t.Fatalf("GET %s: message %q does not name SAML enforcement", path, er.Message)
		}
	}
	// The same token works elsewhere, and other credentials work there.
	tok.want(http.StatusOK, "GET", "repos/open/tools", nil, nil)
	tok.want(http.StatusOK, "GET", "orgs/open", nil, nil)
	bearer(t, env, env.Token(user, "repo")).want(http.StatusOK, "GET", "repos/acme/widgets", nil, nil)
	oauthBasic(t, env, "octocat", password, "").want(http.StatusOK, "GET", "repos/acme/widgets", nil, nil)

	// Lists leave out the organization's repositories, which the token
	// cannot open.
	env.Repo(enforced, "docs", apptest.RepoOpts{})
	listed := func(c caller, path string) string {
		t.Helper()
		var repos []struct {
			FullName string `json:"full_name"`
		}
		c.want(http.StatusOK, "GET", path, nil, &repos)
		names := make([]string, 0, len(repos))
		for _, r := range repos {
			names = append(names, r.FullName)
		}
		return strings.Join(names, " ")
	}
	if got := listed(tok, "user/repos"); got != "open/tools" {
		t.Fatalf("GET /user/repos with the authorization token: %q, want only open/tools", got)
	}
	if got := listed(tok, "users/acme/repos"); got != "" {
		t.Fatalf("GET /users/acme/repos with the authorization token: %q, want none", got)
	}
	if got := listed(bearer(t, env, env.Token(user, "repo")), "user/repos"); got != "acme/docs acme/widgets open/tools" {
		t.Fatalf("GET /user/repos with a classic token: %q", got)
	}

	// Git over HTTP refuses the token on the organization's repositories
	// too, and lets it and other credentials through elsewhere.
	dir := t.TempDir()
	out, err := apptest.TryGit(t, dir, "clone", "-q", env.GitURL("acme", "widgets", "octocat", a.Token), "refused")
	if err == nil || !strings.Contains(out, "SAML") {
		t.Fatalf("git clone of a SAML-enforced organization's repository with an authorization token: %v\n%s", err, out)
	}
	apptest.Git(t, dir, "clone", "-q", env.GitURL("open", "tools", "octocat", a.Token), "tools")
	apptest.Git(t, dir, "clone", "-q", env.GitURL("acme", "widgets", "octocat", env.Token(user, "repo")), "widgets")
}

func TestRemovedAuthorizationsAPI(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, func(c *app.Config) { c.AuthorizationsAPI = oauth.APIRemoved })
	user := newUser(t, env, "octocat", apptest.UserOpts{Password: password})
	ci := newApp(t, env, user, "CI")
	// A token made before the API was removed keeps working.
	earlier, err := env.App.OAuth.Create(apptest.Ctx(), user.ID, oauth.NewAuthorization{Note: "old", Scopes: auth.Scopes{"repo"}})
	apptest.Must(t, "create authorization", err)

	c := oauthBasic(t, env, "octocat", password, "")
	er := c.wantError(http.StatusGone, "POST", "authorizations", createBody{Note: "new"})
	if !strings.Contains(er.Message, "removed") {
		t.Fatalf("410 message %q", er.Message)
	}
	bearer(t, env, "").wantError(http.StatusGone, "POST", "authorizations", createBody{Note: "new"})
	id := fmt.Sprint(earlier.ID)
	for _, e := range []struct{ method, path string }{
		{"GET", "applications/grants"}, {"GET", "applications/grants/1"}, {"DELETE", "applications/grants/1"},
		{"GET", "authorizations"}, {"PUT", "authorizations/clients/" + ci.ClientID},
		{"PUT", "authorizations/clients/" + ci.ClientID + "/fp"}, {"GET", "authorizations/" + id},
		{"PATCH", "authorizations/" + id}, {"DELETE", "authorizations/" + id},
	} {
		c.wantError(http.StatusNotFound, e.method, e.path, createBody{ClientSecret: ci.ClientSecret})
	}
	wantScopes(t, env, earlier.Token, "repo")
}

func TestServeRefusesUnknownAuthorizationsAPIState(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	code := cli.Execute(apptest.Ctx(), []string{"serve", "--data", t.TempDir(), "--addr", "127.0.0.1:0",
		"--authorizations-api", "sunset"}, &stdout, &stderr)
	if code == 0 || !strings.Contains(stderr.String(), "enabled or removed") {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
}

// TestServeFlagRemovesAuthorizationsAPI runs `forgeapi serve
// --authorizations-api removed` and calls the server it starts.
func TestServeFlagRemovesAuthorizationsAPI(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(apptest.Ctx())
	logs, logw := io.Pipe()
	exited := make(chan int, 1)
	// The data directory is made before the cleanup below is registered,
	// so that it is removed after the server has stopped (cleanups run
	// last first); made in the goroutine, it could be removed first.
	data := t.TempDir()
	go func() {
		exited <- cli.Execute(ctx, []string{"serve", "--data", data, "--addr", "127.0.0.1:0",
			"--authorizations-api", "removed"}, io.Discard, logw)
		logw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-exited; code != 0 {
			t.Errorf("serve exited %d", code)
		}
	})
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(logs)
		for sc.Scan() { // keep reading so that the server never blocks on its log
			if _, u, ok := strings.Cut(sc.Text(), "listening on "); ok {
				select {
				case urls <- strings.Trim(strings.Fields(u)[0], `"`):
				default:
				}
			}
		}
	}()
	var base string
	select {
	case base = <-urls:
	case code := <-exited:
		t.Fatalf("serve exited %d before listening", code)
	}
	for _, e := range []struct {
		method, path string
		status       int
	}{{"POST", "/authorizations", http.StatusGone}, {"GET", "/authorizations", http.StatusNotFound},
		{"GET", "/applications/grants", http.StatusNotFound}, {"GET", "/applications/grants/1", http.StatusNotFound},
		{"GET", "/authorizations/1", http.StatusNotFound}} {
		req, err := http.NewRequestWithContext(ctx, e.method, base+e.path, strings.NewReader("{}"))
		apptest.Must(t, "request", err)
		// The answer itself, not where a redirect leads.
		resp, err := http.DefaultTransport.RoundTrip(req)
		apptest.Must(t, e.method+" "+e.path, err)
		resp.Body.Close()
		if resp.StatusCode != e.status || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			t.Fatalf("%s %s: %d %s, want %d JSON", e.method, e.path, resp.StatusCode, resp.Header.Get("Content-Type"), e.status)
		}
	}
}

func TestConcurrentGetOrCreateMakesOneAuthorization(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	user := newUser(t, env, "octocat", apptest.UserOpts{Password: password})
	ci := newApp(t, env, user, "CI")
	const n = 6
	for _, path := range []string{"authorizations/clients/" + ci.ClientID, "authorizations/clients/" + ci.ClientID + "/fp"} {
		var wg sync.WaitGroup
		ids := make([]int64, n)
		statuses := make([]int, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var a authorization
				resp, _ := oauthBasic(t, env, "octocat", password, "").do("PUT", path, createBody{ClientSecret: ci.ClientSecret}, &a)
				ids[i], statuses[i] = a.ID, resp.StatusCode
			}()
		}
		wg.Wait()
		created := 0
		for i := range n {
			if statuses[i] == http.StatusCreated {
				created++
			}
			if (statuses[i] != http.StatusCreated && statuses[i] != http.StatusOK) || ids[i] != ids[0] {
				t.Fatalf("%s: statuses %v ids %v", path, statuses, ids)
			}
		}
		if created != 1 {
			t.Fatalf("%s: %d creations, want 1 (statuses %v)", path, created, statuses)
		}
	}
}

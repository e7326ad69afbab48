package e2e_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/oauthweb"
)

// TestWebFlowOAuthApp drives the web application flow of an OAuth
// application: consent, the code exchanged over HTTP (form-encoded
// answer), the token used on GET /user, listed in the grants and
// authorizations, a second use of the code refused, and the grant's
// deletion revoking the token.
func TestWebFlowOAuthApp(t *testing.T) {
	e := apptest.Start(t)
	ctx := context.Background()
	owner := e.User("app-owner")
	alice := e.User("alice", apptest.UserOpts{Password: "correct horse battery"})
	clientID, secret := oauthApp(t, e, owner)

	req := oauthweb.AuthorizeRequest{ClientID: clientID, Scope: "repo,user bogus", RedirectURI: callback + "/done"}
	con, err := e.App.OAuthWeb.Check(ctx, alice.ID, req)
	if err != nil {
		t.Fatal(err)
	}
	if con.AppName != "Octo Reader" || con.OwnerLogin != "app-owner" || con.IsApp || con.AlreadyGranted ||
		!slices.Equal(con.Scopes, []string{"repo", "user"}) || con.RedirectURI != callback+"/done" {
		t.Fatalf("consent %+v", con)
	}
	code := approve(t, e, alice.ID, oauthweb.AuthorizeRequest{ClientID: clientID, Scope: "repo,user bogus"})

	form := url.Values{"client_id": {clientID}, "client_secret": {secret}, "code": {code}}
	got := postForm(t, e, "/login/oauth/access_token", form, false, false)
	token := got.Get("access_token")
	if token == "" || got.Get("token_type") != "bearer" || got.Get("scope") != "repo,user" || got.Get("refresh_token") != "" {
		t.Fatalf("exchange answered %v", got)
	}
	user, resp, err := e.Client(token).Users.Get(ctx, "")
	if err != nil || user.GetLogin() != "alice" {
		t.Fatalf("GET /user with the token: %v %v", user.GetLogin(), err)
	}
	if resp.Header.Get("X-OAuth-Scopes") != "repo, user" {
		t.Errorf("X-OAuth-Scopes %q", resp.Header.Get("X-OAuth-Scopes"))
	}

	// The endpoint is at the web root only, not under /api/v3.
	if resp, _ := e.Do("POST", "/api/v3/login/oauth/access_token", "", strings.NewReader(form.Encode()),
		"Content-Type", "application/x-www-form-urlencoded"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("POST /api/v3/login/oauth/access_token: %d", resp.StatusCode)
	}

	// The code is single use; the token made by its first use stays.
	wantError(t, postForm(t, e, "/login/oauth/access_token", form, false, false), "bad_verification_code")
	if _, _, err := e.Client(token).Users.Get(ctx, ""); err != nil {
		t.Fatalf("the token after the code's reuse: %v", err)
	}

	// The consent page now passes straight through.
	if con, err = e.App.OAuthWeb.Check(ctx, alice.ID, oauthweb.AuthorizeRequest{ClientID: clientID, Scope: "repo"}); err != nil || !con.AlreadyGranted {
		t.Fatalf("consent after the grant: %+v %v", con, err)
	}

	basic := e.BasicClient("alice", "correct horse battery", "")
	grants, _, err := listGrants(ctx, e, basic)
	if err != nil || len(grants) != 1 || grants[0].GetApp().GetClientID() != clientID ||
		!slices.Equal(grants[0].Scopes, []string{"repo", "user"}) {
		t.Fatalf("grants %v %v", grants, err)
	}
	var auths []*github.Authorization
	areq, _ := basic.NewRequest(ctx, "GET", "authorizations", nil)
	if _, err := basic.Do(areq, &auths); err != nil || len(auths) != 1 || auths[0].GetApp().GetClientID() != clientID ||
		!strings.HasSuffix(token, auths[0].GetTokenLastEight()) {
		t.Fatalf("authorizations %v %v", auths, err)
	}
	dreq, _ := basic.NewRequest(ctx, "DELETE", "applications/grants/"+strconv.FormatInt(grants[0].GetID(), 10), nil)
	if _, err := basic.Do(dreq, nil); err != nil {
		t.Fatal(err)
	}
	_, resp, err = e.Client(token).Users.Get(ctx, "")
	if err == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("GET /user with the revoked token: %v", err)
	}
}

// listGrants lists the caller's grants.
func listGrants(ctx context.Context, e *apptest.Env, c *github.Client) ([]*github.Grant, *github.Response, error) {
	var out []*github.Grant
	req, err := c.NewRequest(ctx, "GET", "applications/grants", nil)
	if err != nil {
		return nil, nil, err
	}
	resp, err := c.Do(req, &out)
	return out, resp, err
}

// TestExchangeJSONAndPKCE exchanges codes with a JSON body and a JSON
// answer: a wrong code_verifier is refused (and uses the code up), the
// right one gets the token.
func TestExchangeJSONAndPKCE(t *testing.T) {
	e := apptest.Start(t)
	ctx := context.Background()
	bob := e.User("bob")
	clientID, secret := oauthApp(t, e, e.User("owner2"))
	verifier := strings.Repeat("v3rifier-", 6)
	challenge := s256(verifier)
	r := oauthweb.AuthorizeRequest{ClientID: clientID, Scope: "read:org", CodeChallenge: challenge, CodeChallengeMethod: "S256"}

	code := approve(t, e, bob.ID, r)
	form := url.Values{"client_id": {clientID}, "client_secret": {secret}, "code": {code}, "code_verifier": {verifier + "x"}}
	wantError(t, postForm(t, e, "/login/oauth/access_token", form, true, true), "bad_verification_code")
	form.Set("code_verifier", verifier)
	wantError(t, postForm(t, e, "/login/oauth/access_token", form, true, true), "bad_verification_code")

	form.Set("code", approve(t, e, bob.ID, r))
	form.Del("code_verifier")
	wantError(t, postForm(t, e, "/login/oauth/access_token", form, true, true), "bad_verification_code")

	form.Set("code", approve(t, e, bob.ID, r))
	form.Set("code_verifier", verifier)
	got := postForm(t, e, "/login/oauth/access_token", form, true, true)
	if got.Get("access_token") == "" || got.Get("scope") != "read:org" || got.Get("token_type") != "bearer" {
		t.Fatalf("answer %v", got)
	}
	if u, _, err := e.Client(got.Get("access_token")).Users.Get(ctx, ""); err != nil || u.GetLogin() != "bob" {
		t.Fatalf("GET /user: %v", err)
	}
}

// TestAuthorizeErrors covers the requests the consent step refuses: an
// error page (never a redirect) for an unknown client or a redirect_uri
// outside the callback URL, a redirect with the error for a bad PKCE
// method, and access_denied with the state when the user denies.
func TestAuthorizeErrors(t *testing.T) {
	e := apptest.Start(t)
	ctx := context.Background()
	u := e.User("carol")
	clientID, _ := oauthApp(t, e, e.User("owner3"))

	var page *oauthweb.ErrorPage
	if _, err := e.App.OAuthWeb.Check(ctx, u.ID, oauthweb.AuthorizeRequest{ClientID: "nope"}); !errors.As(err, &page) || page.Status != 404 {
		t.Fatalf("unknown client: %v", err)
	}
	for _, bad := range []string{"https://evil.example/callback", "https://app.example/other", "http://app.example/callback",
		"https://app.example:8443/callback", "https://app.example/callback/../x", "javascript:alert(1)",
		"https://app.example/callback/..%2F..%2Fevil", "https://app.example/callback/%2e%2e/x", "https://app.example/callback/..;/x"} {
		_, err := e.App.OAuthWeb.Check(ctx, u.ID, oauthweb.AuthorizeRequest{ClientID: clientID, RedirectURI: bad})
		if !errors.As(err, &page) || page.Code != "redirect_uri_mismatch" {
			t.Errorf("redirect_uri %s: %v", bad, err)
		}
		if _, err := e.App.OAuthWeb.Approve(ctx, u.ID, oauthweb.AuthorizeRequest{ClientID: clientID, RedirectURI: bad}); !errors.As(err, &page) {
			t.Errorf("approve with redirect_uri %s: %v", bad, err)
		}
	}
	var redirect *oauthweb.ErrorRedirect
	_, err := e.App.OAuthWeb.Check(ctx, u.ID, oauthweb.AuthorizeRequest{ClientID: clientID, State: "s1",
		CodeChallenge: strings.Repeat("a", 43), CodeChallengeMethod: "plain"})
	if !errors.As(err, &redirect) || !strings.HasPrefix(redirect.URL, callback+"?") || !strings.Contains(redirect.URL, "state=s1") ||
		!strings.Contains(redirect.URL, "error=invalid_request") {
		t.Fatalf("plain PKCE: %v", err)
	}
	to, err := e.App.OAuthWeb.Deny(ctx, oauthweb.AuthorizeRequest{ClientID: clientID, State: "s2"})
	if err != nil {
		t.Fatal(err)
	}
	q, _ := url.Parse(to)
	if q.Query().Get("error") != "access_denied" || q.Query().Get("state") != "s2" || q.Query().Get("code") != "" {
		t.Fatalf("deny redirected to %s", to)
	}
}

// TestExchangeErrors covers the token endpoint's refusals.
func TestExchangeErrors(t *testing.T) {
	e := apptest.Start(t)
	u := e.User("dave")
	clientID, secret := oauthApp(t, e, e.User("owner4"))
	otherID, otherSecret := oauthApp(t, e, e.User("owner5"))
	code := approve(t, e, u.ID, oauthweb.AuthorizeRequest{ClientID: clientID, RedirectURI: callback + "/x"})
	try := func(v url.Values, want string) {
		t.Helper()
		wantError(t, postForm(t, e, "/login/oauth/access_token", v, false, true), want)
	}
	try(url.Values{"client_id": {clientID}, "client_secret": {"wrong"}, "code": {code}}, "incorrect_client_credentials")
	try(url.Values{"client_id": {"unknown"}, "client_secret": {secret}, "code": {code}}, "incorrect_client_credentials")
	// Another application's code is not this one's, and is not used up.
	try(url.Values{"client_id": {otherID}, "client_secret": {otherSecret}, "code": {code}}, "bad_verification_code")
	try(url.Values{"client_id": {clientID}, "client_secret": {secret}, "code": {code}, "grant_type": {"password"}}, "unsupported_grant_type")
	try(url.Values{"client_id": {clientID}, "client_secret": {secret}, "code": {code}, "redirect_uri": {callback + "/y"}}, "redirect_uri_mismatch")
	try(url.Values{"client_id": {clientID}, "client_secret": {secret}, "code": {code}}, "bad_verification_code") // used up
	try(url.Values{"client_id": {clientID}, "client_secret": {secret}, "grant_type": {"refresh_token"}, "refresh_token": {"far_x"}}, "bad_refresh_token")
}

// TestCodeExpires checks that a code is refused after CodeLifetime.
func TestCodeExpires(t *testing.T) {
	clk := newWebClock()
	e := apptest.Start(t, apptest.WithClock(clk.Now))
	u := e.User("erin")
	clientID, secret := oauthApp(t, e, e.User("owner6"))
	code := approve(t, e, u.ID, oauthweb.AuthorizeRequest{ClientID: clientID})
	clk.Advance(oauthweb.CodeLifetime + time.Second)
	wantError(t, postForm(t, e, "/login/oauth/access_token",
		url.Values{"client_id": {clientID}, "client_secret": {secret}, "code": {code}}, false, false), "bad_verification_code")
}

// TestRedirectAllowed checks the platform's redirect_uri rules.
func TestRedirectAllowed(t *testing.T) {
	for _, c := range []struct {
		callback, redirect string
		ok                 bool
	}{
		{"http://example.com/path", "http://example.com/path", true},
		{"http://example.com/path", "http://example.com/path/subdir/other", true},
		{"http://example.com/path", "http://oauth.example.com/path", true},
		{"http://example.com/path", "http://oauth.example.com/path/subdir/other", true},
		{"http://example.com/path", "http://example.com/bar", false},
		{"http://example.com/path", "http://example.com/", false},
		{"http://example.com/path", "http://example.com:8080/path", false},
		{"http://example.com/path", "http://oauth.example.com:8080/path", false},
		{"http://example.com/path", "http://example.org", false},
		{"http://example.com/path", "http://badexample.com/path", false},
		{"http://example.com/path", "https://example.com/path", false},
		{"http://example.com/path", "http://example.com/pathology", false},
		{"http://127.0.0.1/path", "http://127.0.0.1:1234/path", true},
		{"http://[::1]/cb", "http://[::1]:1234/cb/x", true},
		{"http://localhost/path", "http://localhost:1234/path", false},
		{"http://127.0.0.1/path", "http://127.0.0.2:1234/path", false},
		// Names with dots are names; a path that a browser or the
		// application's server may read as leaving the callback's is not
		// below it: dot segments in any spelling, hidden separators.
		{"http://example.com/path", "http://example.com/path/a..b/.well-known", true},
		{"http://example.com/path", "http://example.com/path/x;y/z%20w", true},
		{"http://example.com/path", "http://example.com/path/..%2F..%2Fevil", false},
		{"http://example.com/path", "http://example.com/path/..%2fevil", false},
		{"http://example.com/path", "http://example.com/path/sub%2Fdir", false},
		{"http://example.com/path", "http://example.com/path/%2e%2e/evil", false},
		{"http://example.com/path", "http://example.com/path/.%2e/evil", false},
		{"http://example.com/path", "http://example.com/path/%2E./evil", false},
		{"http://example.com/path", "http://example.com/path/%2e/../evil", false},
		{"http://example.com/path", "http://example.com/path/%252e%252e/evil", false},
		{"http://example.com/path", "http://example.com/path/%25252e%25252e/evil", false},
		{"http://example.com/path", "http://example.com/path/..;/evil", false},
		{"http://example.com/path", "http://example.com/path/%2e%2e;x/evil", false},
		{"http://example.com/path", "http://example.com/path/.../evil", false},
		{"http://example.com/path", `http://example.com/path\..\evil`, false},
		{"http://example.com/path", "http://example.com/path/%5c..%5cevil", false},
		{"http://example.com/path", "http://example.com/path/%255c..%255cevil", false},
		{"http://example.com/path", `http://evil.com\@example.com/path`, false},
		{"http://example.com/path", "http://example.com%2F@evil.com/path", false},
		{"http://example.com/path", "http://evil.com#@example.com/path", false},
		{"http://example.com/path", "http://example.com.evil.com/path", false},
	} {
		if got := oauthweb.RedirectAllowed(c.callback, c.redirect); got != c.ok {
			t.Errorf("RedirectAllowed(%s, %s) = %v", c.callback, c.redirect, got)
		}
	}
}

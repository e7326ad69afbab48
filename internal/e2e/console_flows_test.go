package e2e_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"forgeapi/internal/accounts"
	"forgeapi/internal/app"
	"forgeapi/internal/apptest"
	"forgeapi/internal/oauthweb"
)

// callbackServer is an application's callback: it records the query of
// each request.
type callbackServer struct {
	*httptest.Server
	mu      sync.Mutex
	queries []url.Values
}

func newCallback(t *testing.T) *callbackServer {
	c := &callbackServer{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/callback" { // not /favicon.ico
			c.mu.Lock()
			c.queries = append(c.queries, r.URL.Query())
			c.mu.Unlock()
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<!doctype html><title>callback</title><p id="done">Signed in</p>`))
	}))
	t.Cleanup(c.Close)
	return c
}

func (c *callbackServer) count() int { c.mu.Lock(); defer c.mu.Unlock(); return len(c.queries) }

func (c *callbackServer) last() url.Values {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.queries[len(c.queries)-1]
}

// oauthApp registers an OAuth application with the callback URL and the
// device flow on, and returns its client id and secret.
func consoleOAuthApp(t *testing.T, e *apptest.Env, owner *accounts.Account, name, callback string) (string, string) {
	t.Helper()
	a, err := accounts.CreateApp(context.Background(), e.App.DB, owner.ID, name, "https://app.example")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.App.OAuthWeb.Configure(context.Background(), a.ClientID,
		oauthweb.ClientSettings{CallbackURL: callback, DeviceFlow: true}); err != nil {
		t.Fatal(err)
	}
	return a.ClientID, a.ClientSecret
}

// TestAuthorizeOAuthApp runs the web application flow in the browser:
// the authorize URL asks for sign-in, then shows the consent page; Authorize
// redirects to the test callback with code and state; the code is
// exchanged over HTTP and the token calls GET /user. A second authorize
// with the same scopes redirects at once; revoking the grant on the
// applications page ends the token.
func TestAuthorizeOAuthApp(t *testing.T) {
	t.Parallel()
	e := apptest.Start(t)
	owner := e.User(apptest.Unique("owner"))
	user := e.User(apptest.Unique("mona"), apptest.UserOpts{Password: consolePassword})
	cb := newCallback(t)
	clientID, secret := consoleOAuthApp(t, e, owner, "Octo Reader", cb.URL+"/callback")
	b := newBrowser(t)

	authorize := "/login/oauth/authorize?" + url.Values{"client_id": {clientID}, "scope": {"repo read:org"},
		"state": {"xyz-1"}, "redirect_uri": {cb.URL + "/callback"}, "login": {user.Login}}.Encode()
	b.goTo(e, authorize)
	b.run("login form", chromedp.WaitVisible(chromedp.CSS("#login-form")))
	login, err := chromedp.Run(b.ctx, chromedp.Value(chromedp.CSS("#login")))
	if err != nil {
		t.Fatal(err)
	}
	if login != user.Login {
		t.Errorf("login field %q, want %q from the authorize request", login, user.Login)
	}
	b.signIn(user.Login, consolePassword)
	b.run("consent", chromedp.WaitVisible(chromedp.CSS("#consent-form")))
	b.shot("consent")
	if name := b.text("#app-name"); name != "Octo Reader" {
		t.Fatalf("consent names %q", name)
	}
	if scopes := b.text("#scopes"); !strings.Contains(scopes, "repo") || !strings.Contains(scopes, "read:org") {
		t.Fatalf("consent scopes %q", scopes)
	}
	b.run("authorize", chromedp.Click(chromedp.CSS("#authorize")), chromedp.WaitVisible(chromedp.CSS("#done")))
	b.shot("callback")
	q := cb.last()
	if q.Get("state") != "xyz-1" || q.Get("code") == "" {
		t.Fatalf("callback query %v", q)
	}
	tok := postJSON(t, e, "/login/oauth/access_token", url.Values{"client_id": {clientID}, "client_secret": {secret},
		"code": {q.Get("code")}, "redirect_uri": {cb.URL + "/callback"}})
	access, _ := tok["access_token"].(string)
	if access == "" || tok["token_type"] != "bearer" {
		t.Fatalf("exchange answered %v", tok)
	}
	me, _, err := e.Client(access).Users.Get(apptest.Ctx(), "")
	if err != nil || me.GetLogin() != user.Login {
		t.Fatalf("GET /user with the token: %v %v", me.GetLogin(), err)
	}

	// The grant covers the scopes now: no consent page the second time.
	before := cb.count()
	b.goTo(e, strings.Replace(authorize, "xyz-1", "xyz-2", 1))
	b.run("second authorize", chromedp.WaitVisible(chromedp.CSS("#done")))
	if cb.count() != before+1 || cb.last().Get("state") != "xyz-2" || cb.last().Get("code") == "" {
		t.Fatalf("second authorize: %v", cb.last())
	}

	// Cancel: access_denied.
	other := e.User(apptest.Unique("lisa"), apptest.UserOpts{Password: consolePassword})
	b2 := newBrowser(t)
	b2.goTo(e, strings.Replace(authorize, "xyz-1", "xyz-3", 1))
	b2.signIn(other.Login, consolePassword)
	b2.run("cancel", chromedp.WaitVisible(chromedp.CSS("#consent-form")), chromedp.Click(chromedp.CSS("#cancel")),
		chromedp.WaitVisible(chromedp.CSS("#done")))
	if q := cb.last(); q.Get("error") != "access_denied" || q.Get("state") != "xyz-3" || q.Get("code") != "" {
		t.Fatalf("cancel: %v", q)
	}

	// The grant is on the applications page; revoking it ends the token.
	b.goTo(e, "/settings/applications")
	b.run("grants", chromedp.WaitVisible(chromedp.CSS("#grants")))
	b.shot("applications")
	if text := b.text("#grants"); !strings.Contains(text, "Octo Reader") || !strings.Contains(text, "read:org") {
		t.Fatalf("applications page: %q", text)
	}
	b.run("revoke grant", chromedp.Click(chromedp.CSS("#grants button.danger")), chromedp.WaitVisible(chromedp.CSS("#no-grants")))
	if resp, _ := e.Do("GET", "/user", access, nil); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("token after revoking the grant: %d", resp.StatusCode)
	}
}

// TestAuthorizeErrorPage: an unknown client or a redirect_uri the app
// does not allow is a page of its own (never a redirect).
func TestAuthorizeErrorPage(t *testing.T) {
	t.Parallel()
	e := apptest.Start(t)
	owner := e.User(apptest.Unique("owner"))
	user := e.User(apptest.Unique("mona"), apptest.UserOpts{Password: consolePassword})
	clientID, _ := consoleOAuthApp(t, e, owner, "Octo Reader", "https://app.example/callback")
	c := pageClient(t, e)
	_, _, page := getPage(t, c, e.URL+"/login")
	form(t, c, e.URL+"/session", url.Values{"authenticity_token": {apptest.CSRFToken(t, page)}, "login": {user.Login}, "password": {consolePassword}})
	for _, q := range []url.Values{{"client_id": {"nope"}}, {"client_id": {clientID}, "redirect_uri": {"https://evil.example/cb"}},
		{"client_id": {clientID}, "redirect_uri": {"https://app.example/callback/..%2F..%2Fevil"}}} {
		status, loc, body := getPage(t, c, e.URL+"/login/oauth/authorize?"+q.Encode())
		if status < 400 || status > 499 || loc != "" || !strings.Contains(body, "<!doctype html>") {
			t.Errorf("authorize %v: %d %q", q, status, loc)
		}
	}
}

// TestDeviceFlowInBrowser approves a device code in the browser while a
// client polls POST /login/oauth/access_token with the device grant; the
// token it gets calls GET /user.
func TestDeviceFlowInBrowser(t *testing.T) {
	t.Parallel()
	e := apptest.Start(t, func(c *app.Config) { c.OAuthWeb.DeviceInterval = time.Millisecond })
	owner := e.User(apptest.Unique("owner"))
	user := e.User(apptest.Unique("mona"), apptest.UserOpts{Password: consolePassword})
	clientID, _ := consoleOAuthApp(t, e, owner, "Octo CLI", "https://app.example/callback")
	start := postJSON(t, e, "/login/device/code", url.Values{"client_id": {clientID}, "scope": {"repo"}})
	userCode, deviceCode := start["user_code"].(string), start["device_code"].(string)
	if userCode == "" || deviceCode == "" || !strings.HasSuffix(start["verification_uri"].(string), "/login/device") {
		t.Fatalf("device code answer %v", start)
	}

	type result struct {
		token    string
		statuses []string
	}
	done := make(chan result, 1)
	stop := make(chan struct{})
	defer close(stop)
	pending := make(chan struct{}) // closed at the first authorization_pending
	interval, _ := start["interval"].(float64)
	go func() { // the device: polls at the interval asked until the user decides
		var r result
		for {
			wait := max(time.Duration(interval*float64(time.Second)), 50*time.Millisecond)
			select {
			case <-stop:
				return
			case <-time.After(wait):
			}
			m := postJSON(t, e, "/login/oauth/access_token", url.Values{"client_id": {clientID}, "device_code": {deviceCode},
				"grant_type": {"urn:ietf:params:oauth:grant-type:device_code"}})
			if tok, _ := m["access_token"].(string); tok != "" {
				r.token = tok
				done <- r
				return
			}
			code, _ := m["error"].(string)
			r.statuses = append(r.statuses, code)
			if len(r.statuses) == 1 && code == "authorization_pending" {
				close(pending)
			}
			if i, ok := m["interval"].(float64); ok && code == "slow_down" {
				interval = i
			}
			if code != "authorization_pending" && code != "slow_down" {
				done <- r
				return
			}
		}
	}()

	b := newBrowser(t)
	b.goTo(e, "/login/device")
	b.signIn(user.Login, consolePassword)
	b.run("device form", chromedp.WaitVisible(chromedp.CSS("#device-form")))
	b.shot("device")
	b.run("wrong code", chromedp.SendKeys(chromedp.CSS("#user_code"), "BBBB-BBBB"), chromedp.Click(chromedp.CSS("#continue")),
		chromedp.WaitVisible(chromedp.CSS("#device-error")))
	b.run("enter code", chromedp.Clear(chromedp.CSS("#user_code")), chromedp.SendKeys(chromedp.CSS("#user_code"), strings.ToLower(userCode)),
		chromedp.Click(chromedp.CSS("#continue")), chromedp.WaitVisible(chromedp.CSS("#device-confirm-form")))
	b.shot("device-confirm")
	if name := b.text("#app-name"); name != "Octo CLI" {
		t.Fatalf("device page names %q", name)
	}
	select { // the device has asked once before the user approves, whatever the machine's pace
	case <-pending:
	case <-time.After(30 * time.Second):
		t.Fatal("the polling client got no authorization_pending before the approval")
	}
	b.run("approve", chromedp.Click(chromedp.CSS("#authorize")), chromedp.WaitVisible(chromedp.CSS("#device-approved")))
	b.shot("device-approved")
	var r result
	select {
	case r = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the polling client got no token")
	}
	if r.token == "" {
		t.Fatalf("polling ended with %v", r.statuses)
	}
	if len(r.statuses) == 0 || r.statuses[0] != "authorization_pending" {
		t.Errorf("polls before approval answered %v", r.statuses)
	}
	me, _, err := e.Client(r.token).Users.Get(apptest.Ctx(), "")
	if err != nil || me.GetLogin() != user.Login {
		t.Fatalf("GET /user with the device token: %v %v", me.GetLogin(), err)
	}
}

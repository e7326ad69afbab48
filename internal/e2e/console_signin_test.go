package e2e_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"forgeapi/internal/app"
	"forgeapi/internal/apptest"
	"forgeapi/internal/auth"
	"forgeapi/internal/console"
)

const (
	consolePassword = "correct horse battery staple"
)

func sessionRows(t *testing.T, e *apptest.Env, userID int64) int {
	t.Helper()
	var n int
	if err := e.App.DB.QueryRowContext(context.Background(),
		`SELECT COUNT(*) FROM console_sessions WHERE user_id = $1 AND state = 'active'`, userID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSignInWithTwoFactor signs in through the browser with a password
// and a one-time password (a wrong code first), checks the session
// cookie's attributes, that a restart keeps the session (stored on the
// server) and that signing out ends it there.
func TestSignInWithTwoFactor(t *testing.T) {
	t.Parallel()
	e := apptest.Start(t)
	user := e.User(apptest.Unique("mona"), apptest.UserOpts{Password: consolePassword, TOTPSecret: totpSecret})
	b := newBrowser(t)

	b.goTo(e, "/settings")
	if loc := b.location(); !strings.Contains(loc, "/login?return_to=%2Fsettings") {
		t.Fatalf("signed out /settings went to %s", loc)
	}
	b.signIn(user.Login, consolePassword)
	b.run("two-factor form", chromedp.WaitVisible(chromedp.CSS("#otp-form")))
	b.shot("two-factor")
	if n := sessionRows(t, e, user.ID); n != 0 {
		t.Fatalf("%d active sessions before the one-time password", n)
	}
	b.run("wrong code", chromedp.SendKeys(chromedp.CSS("#otp"), "000000"), chromedp.Click(chromedp.CSS("#verify")),
		chromedp.WaitVisible(chromedp.CSS("#otp-error")))
	b.shot("two-factor-wrong")
	code, err := auth.TOTPCode(totpSecret, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	b.run("right code", chromedp.SendKeys(chromedp.CSS("#otp"), code), chromedp.Click(chromedp.CSS("#verify")),
		chromedp.WaitVisible(chromedp.CSS("header nav .who")))
	if who := b.text("header nav .who"); who != user.Login {
		t.Fatalf("signed in as %q", who)
	}
	if loc := b.location(); loc != e.URL+"/settings" {
		t.Fatalf("after sign-in at %s", loc)
	}
	b.shot("settings")

	var session *network.Cookie
	for _, c := range b.cookies() {
		if c.Name == console.SessionCookie {
			session = c
		}
	}
	if session == nil || !session.HTTPOnly || session.SameSite != network.CookieSameSiteLax || session.Secure || session.Path != "/" {
		t.Fatalf("session cookie %+v", session)
	}
	if n := sessionRows(t, e, user.ID); n != 1 {
		t.Fatalf("%d active sessions after sign-in", n)
	}

	// A restart keeps the session: it is in the database, the cookie
	// holds only its id (cookies ignore the port, which changes).
	e.Stop()
	e = apptest.StartConfig(t, e.Config)
	b.goTo(e, "/settings")
	if who := b.text("header nav .who"); who != user.Login {
		t.Fatalf("after a restart signed in as %q", who)
	}

	b.run("sign out", chromedp.Click(chromedp.CSS("header nav form button")), chromedp.WaitVisible(chromedp.CSS("#login-form")))
	if n := sessionRows(t, e, user.ID); n != 0 {
		t.Fatalf("%d active sessions after sign-out", n)
	}
	// The old cookie is dead on the server even if a client kept it.
	c := pageClient(t, e)
	u, _ := url.Parse(e.URL)
	c.Jar.SetCookies(u, []*http.Cookie{{Name: console.SessionCookie, Value: session.Value}})
	if status, loc, _ := getPage(t, c, e.URL+"/settings"); status != http.StatusSeeOther || !strings.HasPrefix(loc, "/login") {
		t.Fatalf("old session cookie after sign-out: %d %s", status, loc)
	}
}

// TestSignInLimits: the pages count wrong passwords and one-time
// passwords as the API does, and a blocked account is refused even with
// the right password.
func TestSignInLimits(t *testing.T) {
	t.Parallel()
	e := apptest.Start(t, func(c *app.Config) { c.LoginLimits = auth.LoginLimits{PerAddress: 2, PerAccount: -1} })
	user := e.User(apptest.Unique("hubot"), apptest.UserOpts{Password: consolePassword})
	c := pageClient(t, e)
	_, _, page := getPage(t, c, e.URL+"/login")
	token := apptest.CSRFToken(t, page)
	for range 2 {
		status, _, body := form(t, c, e.URL+"/session", url.Values{"authenticity_token": {token}, "login": {user.Login}, "password": {"wrong"}})
		if status != http.StatusUnauthorized || !strings.Contains(body, "Incorrect username or password") {
			t.Fatalf("wrong password: %d", status)
		}
	}
	status, _, body := form(t, c, e.URL+"/session", url.Values{"authenticity_token": {token}, "login": {user.Login}, "password": {consolePassword}})
	if status != http.StatusForbidden || !strings.Contains(body, auth.LoginBlockedMessage) {
		t.Fatalf("blocked account with the right password: %d %s", status, body)
	}
	// And the API refuses the same account from the same address.
	resp, _ := e.Do("GET", "/user", "", nil, "Authorization", "Basic "+basic(user.Login, consolePassword))
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("API after the pages' failures: %d", resp.StatusCode)
	}
}

// TestCSRFRefused: a form posted without its token, with a wrong one or
// from another site is refused with the 403 page, in the browser and
// over plain HTTP.
func TestCSRFRefused(t *testing.T) {
	t.Parallel()
	e := apptest.Start(t)
	user := e.User(apptest.Unique("octo"), apptest.UserOpts{Password: consolePassword})
	b := newBrowser(t)
	b.goTo(e, "/settings/tokens")
	b.signIn(user.Login, consolePassword)
	b.run("tokens page", chromedp.WaitVisible(chromedp.CSS("#token-form")))
	// Tamper with the form's token, as a forged form would lack it.
	b.run("forge", chromedp.SetAttributeValue(chromedp.CSS(`#token-form input[name="authenticity_token"]`), "value", "forged"),
		chromedp.SendKeys(chromedp.CSS("#note"), "forged"), chromedp.Click(chromedp.CSS("#generate")),
		chromedp.WaitVisible(chromedp.CSS("#error-message")))
	b.shot("csrf-refused")
	if msg := b.text("#error-message"); !strings.Contains(msg, "could not be verified") {
		t.Fatalf("forged form: %q", msg)
	}
	toks, err := auth.ListTokens(context.Background(), e.App.DB, user.ID)
	if err != nil || len(toks) != 0 {
		t.Fatalf("a forged form made tokens: %v %v", toks, err)
	}

	// Over HTTP: sign in for a session, then post without the token.
	c := pageClient(t, e)
	_, _, page := getPage(t, c, e.URL+"/login")
	if status, _, _ := form(t, c, e.URL+"/session", url.Values{"login": {user.Login}, "password": {consolePassword}}); status != http.StatusForbidden {
		t.Fatalf("sign-in without token: %d", status)
	}
	token := apptest.CSRFToken(t, page)
	if status, loc, _ := form(t, c, e.URL+"/session", url.Values{"authenticity_token": {token}, "login": {user.Login}, "password": {consolePassword}}); status != http.StatusSeeOther || loc != "/settings" {
		t.Fatalf("sign-in: %d %s", status, loc)
	}
	for _, v := range []url.Values{{"note": {"x"}, "expires_in_days": {"7"}}, {"note": {"x"}, "expires_in_days": {"7"}, "authenticity_token": {token}}} {
		// The visitor's token before sign-in is no good for the session.
		if status, _, _ := form(t, c, e.URL+"/settings/tokens", v); status != http.StatusForbidden {
			t.Fatalf("token form without the session's token: %d", status)
		}
	}
	if status, _, _ := form(t, c, e.URL+"/logout", nil); status != http.StatusForbidden {
		t.Fatalf("sign-out without token: %d", status)
	}
	_, _, page = getPage(t, c, e.URL+"/settings/tokens")
	if status, _, _ := form(t, c, e.URL+"/settings/tokens", url.Values{"note": {"ok"}, "expires_in_days": {"7"}, "authenticity_token": {apptest.CSRFToken(t, page)}}); status != http.StatusCreated {
		t.Fatalf("token form with the session's token: %d", status)
	}
}

// TestReturnToNotFollowed: return_to is followed only to a path of this
// site; another origin (absolute, scheme-relative, backslashed) goes to
// the settings page instead.
func TestReturnToNotFollowed(t *testing.T) {
	t.Parallel()
	e := apptest.Start(t)
	user := e.User(apptest.Unique("lisa"), apptest.UserOpts{Password: consolePassword})
	for _, bad := range []string{"https://evil.example/", "//evil.example/x", "/\\evil.example", "javascript:alert(1)", "evil"} {
		c := pageClient(t, e)
		_, _, page := getPage(t, c, e.URL+"/login?return_to="+url.QueryEscape(bad))
		if strings.Contains(page, "evil.example") {
			t.Errorf("the form carries return_to %q", bad)
		}
		status, loc, _ := form(t, c, e.URL+"/session", url.Values{"authenticity_token": {apptest.CSRFToken(t, page)},
			"login": {user.Login}, "password": {consolePassword}, "return_to": {bad}})
		if status != http.StatusSeeOther || loc != "/settings" {
			t.Errorf("return_to %q: %d %s", bad, status, loc)
		}
	}
	// In the browser, too: the sign-in ends on this site.
	b := newBrowser(t)
	b.goTo(e, "/login?return_to="+url.QueryEscape("//evil.example/"))
	b.signIn(user.Login, consolePassword)
	b.run("settings", chromedp.WaitVisible(chromedp.CSS("header nav .who")))
	if loc := b.location(); loc != e.URL+"/settings" {
		t.Fatalf("return_to //evil.example ended at %s", loc)
	}
	// A path of the site is followed.
	c := pageClient(t, e)
	_, _, page := getPage(t, c, e.URL+"/login")
	if _, loc, _ := form(t, c, e.URL+"/session", url.Values{"authenticity_token": {apptest.CSRFToken(t, page)},
		"login": {user.Login}, "password": {consolePassword}, "return_to": {"/settings/tokens?x=1"}}); loc != "/settings/tokens?x=1" {
		t.Fatalf("return_to a path: %s", loc)
	}
}

func basic(login, pw string) string {
	return base64.StdEncoding.EncodeToString([]byte(login + ":" + pw))
}

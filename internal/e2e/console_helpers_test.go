package e2e_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"forgeapi/internal/apptest"
	"forgeapi/internal/apptest/browsertest"
)

// browserTimeout bounds one test's browser session.
const browserTimeout = 5 * time.Minute

// actionTimeout bounds one step, so that a failing step leaves time to
// read the page it failed on.
const actionTimeout = time.Minute

// TestMain closes the package's chromium after the last test.
func TestMain(m *testing.M) {
	code := m.Run()
	chromium.Close()
	os.Exit(code)
}

// chromium is the package's one headless browser.
var chromium browsertest.Chromium

// browser is a test's tab in the package's chromium, in a browser context
// of its own (its own cookies and storage), with a phone's viewport
// (412x915); it closes, with its browser context, when the test ends.
// Screenshots go to a directory under t.TempDir() that the test logs.
type browser struct {
	t     *testing.T
	ctx   context.Context
	shots string
	n     int
}

// newBrowser opens the test's tab, for at most browserTimeout; the test
// is skipped when chromium is not installed, and under the race detector
// (apptest.OnceWithoutRace).
func newBrowser(t *testing.T) *browser {
	t.Helper()
	apptest.OnceWithoutRace(t)
	ctx := chromium.Tab(t, 412, 915, browserTimeout)
	b := &browser{t: t, ctx: ctx, shots: filepath.Join(t.TempDir(), "screenshots")}
	if err := os.MkdirAll(b.shots, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", b.shots)
	return b
}

// run runs browser actions, failing the test on an error.
func (b *browser) run(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, actionTimeout)
	defer cancel()
	start := time.Now()
	defer func() {
		if d := time.Since(start); d > 5*time.Second {
			b.t.Logf("%s took %s", what, d.Round(time.Millisecond))
		}
	}()
	if err := chromedp.Do(ctx, actions...); err != nil {
		html, _ := chromedp.Run(b.ctx, chromedp.OuterHTML(chromedp.CSS("main")))
		b.t.Fatalf("%s: %v (at %s)\n%s", what, err, b.location(), html)
	}
}

// location is the tab's URL.
func (b *browser) location() string {
	loc, _ := chromedp.Run(b.ctx, chromedp.Location())
	return loc
}

// text returns the text of the element the selector finds (waiting for it).
func (b *browser) text(sel string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		b.t.Fatalf("read %s: %v (at %s)", sel, err, b.location())
	}
	return s
}

// shot saves a full-page screenshot named after the page.
func (b *browser) shot(name string) {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(90))
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	b.n++
	file := filepath.Join(b.shots, strings.Join([]string{twoDigits(b.n), name}, "-")+".png")
	if err := os.WriteFile(file, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

func twoDigits(n int) string { return string([]byte{byte('0' + n/10%10), byte('0' + n%10)}) }

// signIn signs in on the page the browser is at (the sign-in form).
func (b *browser) signIn(login, password string) {
	b.t.Helper()
	b.run("sign in",
		chromedp.WaitVisible(chromedp.CSS("#login-form")),
		chromedp.Clear(chromedp.CSS("#login")),
		chromedp.SendKeys(chromedp.CSS("#login"), login),
		chromedp.SendKeys(chromedp.CSS("#password"), password),
	)
	b.shot("sign-in")
	b.run("submit sign-in", chromedp.Click(chromedp.CSS("#sign-in")), chromedp.WaitReady(chromedp.CSS("body")))
}

// goTo navigates to a path of the server.
func (b *browser) goTo(e *apptest.Env, path string) {
	b.t.Helper()
	b.run("navigate to "+path, chromedp.Navigate(e.URL+path), chromedp.WaitReady(chromedp.CSS("body")))
}

// cookies returns the browser's cookies.
func (b *browser) cookies() []*network.Cookie {
	b.t.Helper()
	res, err := chromedp.Call(b.ctx, network.GetCookies, network.GetCookiesParams{})
	if err != nil {
		b.t.Fatalf("read cookies: %v", err)
	}
	return res.Cookies
}

// pageClient is an HTTP client with a cookie jar that does not follow
// redirects, for checking the pages' answers without a browser.
func pageClient(t *testing.T, e *apptest.Env) *http.Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, Transport: e.Transport(),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// form posts a form with the client and returns the status, Location and body.
func form(t *testing.T, c *http.Client, target string, v url.Values) (int, string, string) {
	t.Helper()
	resp, err := c.PostForm(target, v)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Location"), string(b)
}

// get fetches a page with the client.
func getPage(t *testing.T, c *http.Client, target string) (int, string, string) {
	t.Helper()
	resp, err := c.Get(target)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Location"), string(b)
}

// postJSON posts a form to a path of the web root asking for JSON and
// decodes the answer.
func postJSON(t *testing.T, e *apptest.Env, path string, v url.Values) map[string]any {
	t.Helper()
	req, err := http.NewRequest("POST", e.URL+path, strings.NewReader(v.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := e.HTTPClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	return m
}

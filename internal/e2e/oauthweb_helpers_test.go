package e2e_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apptest"
	"forgeapi/internal/oauthweb"
)

// callback is the callback URL of the test applications.
const callback = "https://app.example/callback"

// oauthApp registers an OAuth application owned by owner with the test
// callback URL and returns its client id and secret.
func oauthApp(t *testing.T, e *apptest.Env, owner *accounts.Account) (string, string) {
	t.Helper()
	a, err := accounts.CreateApp(context.Background(), e.App.DB, owner.ID, "Octo Reader", "https://app.example")
	if err != nil {
		t.Fatal(err)
	}
	configure(t, e, a.ClientID)
	return a.ClientID, a.ClientSecret
}

func configure(t *testing.T, e *apptest.Env, clientID string) {
	t.Helper()
	if err := e.App.OAuthWeb.Configure(context.Background(), clientID,
		oauthweb.ClientSettings{CallbackURL: callback, DeviceFlow: true}); err != nil {
		t.Fatal(err)
	}
}

// approve runs the consent step through the service (the console's
// page calls it) and returns the code of the redirect, checking the state.
func approve(t *testing.T, e *apptest.Env, userID int64, r oauthweb.AuthorizeRequest) string {
	t.Helper()
	r.State = "st-" + t.Name()
	to, err := e.App.OAuthWeb.Approve(e.Context(), userID, r)
	if err != nil {
		t.Fatalf("approve: %v", err)
	}
	u, err := url.Parse(to)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(to, callback) || u.Query().Get("state") != r.State || u.Query().Get("code") == "" {
		t.Fatalf("approve redirected to %s", to)
	}
	return u.Query().Get("code")
}

// post sends a form (or, with asJSON, a JSON body) to a path of the web
// root, asking for JSON or the default form encoding, and returns the
// answer's fields. The platform answers 200 to errors too.
func postForm(t *testing.T, e *apptest.Env, path string, params url.Values, asJSON, wantJSON bool) url.Values {
	t.Helper()
	var body io.Reader = strings.NewReader(params.Encode())
	ct := "application/x-www-form-urlencoded"
	if asJSON {
		m := map[string]string{}
		for k := range params {
			m[k] = params.Get(k)
		}
		b, _ := json.Marshal(m)
		body, ct = strings.NewReader(string(b)), "application/json"
	}
	req, err := http.NewRequest("POST", e.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", ct)
	if wantJSON {
		req.Header.Set("Accept", "application/json")
	}
	resp, err := e.HTTPClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("POST %s: %d %s", path, resp.StatusCode, raw)
	}
	if resp.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("POST %s: Cache-Control %q", path, resp.Header.Get("Cache-Control"))
	}
	if !wantJSON {
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
			t.Fatalf("POST %s: Content-Type %q", path, resp.Header.Get("Content-Type"))
		}
		v, err := url.ParseQuery(string(raw))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("POST %s: %v in %s", path, err, raw)
	}
	v := url.Values{}
	for k, x := range m {
		switch x := x.(type) {
		case string:
			v.Set(k, x)
		case float64:
			v.Set(k, strconv.FormatFloat(x, 'f', -1, 64))
		}
	}
	return v
}

// wantError checks an answer's error code.
func wantError(t *testing.T, v url.Values, code string) {
	t.Helper()
	if v.Get("error") != code || v.Get("error_description") == "" || v.Get("access_token") != "" {
		t.Fatalf("answer %v, want error %s", v, code)
	}
	if !strings.Contains(v.Get("error_uri"), "/docs/oauth#") {
		t.Errorf("error_uri %q", v.Get("error_uri"))
	}
}

// clock is a settable clock for the server.
type webClock struct {
	mu  sync.Mutex
	now time.Time
}

func newWebClock() *webClock { return &webClock{now: time.Now().UTC()} }

func (c *webClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *webClock) Advance(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

// s256 is the PKCE S256 challenge of a verifier.
func s256(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

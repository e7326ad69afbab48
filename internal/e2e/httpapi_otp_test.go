package e2e_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/access"
	"forgeapi/internal/accounts"
	"forgeapi/internal/apptest"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/secretbox"
)

// No public route declares OTP yet (the authorizations API will), so this
// test serves the real middleware, authenticator and guard over a real
// store with one route of its own that asks for a code.

const totpSecret = "JBSWY3DPEHPK3PXP"

// clock is a settable time source.
type otpClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *otpClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *otpClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func startOTPServer(t *testing.T, now func() time.Time) string {
	t.Helper()
	ctx := context.Background()
	db := apptest.OpenStore(t)
	key, err := secretbox.GenerateKey()
	apptest.Must(t, "generate key", err)
	box, err := secretbox.New(key)
	apptest.Must(t, "secret box", err)
	for _, u := range []struct{ login, secret string }{{"twofa", totpSecret}, {"plain", ""}} {
		hash, err := auth.HashPassword("pw")
		apptest.Must(t, "hash", err)
		sealed, err := auth.SealTOTPSecret(box, u.secret)
		apptest.Must(t, "seal TOTP secret", err)
		_, err = accounts.Create(ctx, db, accounts.NewAccount{Type: accounts.TypeUser, Login: u.login, PasswordHash: hash, SealedTOTPSecret: sealed})
		apptest.Must(t, "create user", err)
	}
	routes := []httpapi.Route{{Method: "GET", Pattern: "/otp-check", Auth: auth.Rule{OTP: true},
		Handle: func(w http.ResponseWriter, r *http.Request) error {
			httpapi.WriteJSON(w, http.StatusOK, map[string]string{"login": auth.PrincipalFrom(r.Context()).Account.Login})
			return nil
		}}}
	srv, err := httpapi.NewServer(httpapi.Config{Now: now}, &auth.Authenticator{DB: db, Now: now, Secrets: box}, &access.Guard{DB: db}, nil, routes)
	apptest.Must(t, "new server", err)
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return ts.URL
}

func otpRequest(t *testing.T, url, login, header, code string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("GET", url+"/otp-check", nil)
	req.SetBasicAuth(login, "pw")
	if header != "" {
		req.Header.Set(header, code)
	}
	resp, err := http.DefaultClient.Do(req)
	apptest.Must(t, "request", err)
	resp.Body.Close()
	return resp
}

func TestOTPChallenge(t *testing.T) {
	t.Parallel()
	c := &otpClock{t: time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)}
	url := startOTPServer(t, c.Now)
	code := func() string {
		s, err := auth.TOTPCode(totpSecret, c.Now())
		apptest.Must(t, "code", err)
		return s
	}

	resp := otpRequest(t, url, "twofa", "", "")
	if resp.StatusCode != 401 || resp.Header.Get("X-Service-OTP") != "required; app" {
		t.Fatalf("no code: %d, X-Service-OTP %q", resp.StatusCode, resp.Header.Get("X-Service-OTP"))
	}
	if resp := otpRequest(t, url, "twofa", "X-Service-OTP", "000000"); resp.StatusCode != 401 || resp.Header.Get("X-Service-OTP") == "" {
		t.Fatalf("wrong code: %d", resp.StatusCode)
	}
	if resp := otpRequest(t, url, "twofa", "X-Service-OTP", "12ab"); resp.StatusCode != 401 {
		t.Fatalf("malformed code: %d", resp.StatusCode)
	}
	first := code()
	if resp := otpRequest(t, url, "twofa", "X-Service-OTP", first); resp.StatusCode != 200 {
		t.Fatalf("valid code: %d", resp.StatusCode)
	}
	if resp := otpRequest(t, url, "twofa", "X-Service-OTP", first); resp.StatusCode != 401 || resp.Header.Get("X-Service-OTP") != "required; app" {
		t.Fatalf("replayed code: %d", resp.StatusCode)
	}
	if resp := otpRequest(t, url, "plain", "", ""); resp.StatusCode != 200 {
		t.Fatalf("user without two-factor: %d", resp.StatusCode)
	}

	// go-github's BasicAuthTransport sends the code as X-GitHub-OTP, and
	// recognises the challenge by that header name.
	c.Add(time.Minute)
	ctx := context.Background()
	call := func(otp string) error {
		tr := &github.BasicAuthTransport{Username: "twofa", Password: "pw", OTP: otp}
		base := url + "/"
		client, err := github.NewClient(github.WithHTTPClient(tr.Client()), github.WithURLs(&base, &base))
		apptest.Must(t, "client", err)
		req, err := client.NewRequest(ctx, "GET", "otp-check", nil)
		apptest.Must(t, "new request", err)
		_, err = client.Do(req, nil)
		return err
	}
	var twoFactor *github.TwoFactorAuthError
	if err := call(""); !errors.As(err, &twoFactor) {
		t.Fatalf("go-github without a code: %v, want a TwoFactorAuthError", err)
	}
	if err := call(code()); err != nil {
		t.Fatalf("go-github with a code: %v", err)
	}
}

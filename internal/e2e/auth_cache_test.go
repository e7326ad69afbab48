package e2e_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"forgeapi/internal/apptest"
	"forgeapi/internal/auth"
	"forgeapi/internal/testwait"
)

// The test servers cache lookups for an hour (apptest), so whatever these
// tests see change at once was dropped from the caches by the write.

func TestCachedTokenExpires(t *testing.T) {
	t.Parallel()
	var offset atomic.Int64
	env := apptest.Start(t, apptest.WithClock(func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }))
	user := env.User("expiring")
	expires := time.Now().Add(time.Hour)
	created, err := auth.CreateToken(apptest.Ctx(), env.App.DB,
		auth.TokenSpec{Kind: auth.KindClassic, UserID: user.ID, ExpiresAt: &expires})
	apptest.Must(t, "create token", err)

	if resp, body := env.Do("GET", "/user", created.Value, nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /user: %d %s", resp.StatusCode, body)
	}
	offset.Store(int64(2 * time.Hour))
	if resp, _ := env.Do("GET", "/user", created.Value, nil); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("expired cached token: %d, want 401", resp.StatusCode)
	}
}

func TestAccountLookupsSeeNewAccountsAtOnce(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	if resp, _ := env.Do("GET", "/users/newcomer/events/public", "", nil); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown user: %d, want 404", resp.StatusCode)
	}
	env.User("Newcomer")
	for _, path := range []string{"/users/newcomer/events/public", "/users/NEWCOMER/events/public"} {
		if resp, body := env.Do("GET", path, "", nil); resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s after the user was created: %d %s", path, resp.StatusCode, body)
		}
	}
}

// TestRevocationReachesOtherServers: with two servers on one PostgreSQL
// database, a token revoked through one stops working on the other
// without waiting for its cache to expire (an hour here).
func TestRevocationReachesOtherServers(t *testing.T) {
	t.Parallel()
	if !apptest.Postgres() {
		t.Skip("servers share a database on PostgreSQL")
	}
	first := apptest.Start(t)
	second := apptest.StartConfig(t, first.Config)
	const password = "correct horse battery staple"
	first.User("roamer", apptest.UserOpts{Password: password})
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("roamer:"+password))

	resp, body := first.DoJSON("POST", "/authorizations", "", `{"scopes": ["repo"], "note": "roaming"}`, "Authorization", basic)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create authorization: %d %s", resp.StatusCode, body)
	}
	var created struct {
		ID    int64  `json:"id"`
		Token string `json:"token"`
	}
	apptest.Must(t, "decode", json.Unmarshal(body, &created))
	if resp, body := second.Do("GET", "/user", created.Token, nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("second server before revocation: %d %s", resp.StatusCode, body)
	}

	resp, body = first.Do("DELETE", fmt.Sprintf("/authorizations/%d", created.ID), "", nil, "Authorization", basic)
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("revoke: %d %s", resp.StatusCode, body)
	}
	if resp, _ := first.Do("GET", "/user", created.Token, nil); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("revoking server: %d, want 401", resp.StatusCode)
	}
	// The notification travels asynchronously; it takes milliseconds.
	testwait.For(t, "the second server to refuse the revoked token", func() error {
		if resp, _ := second.Do("GET", "/user", created.Token, nil); resp.StatusCode != http.StatusUnauthorized {
			return fmt.Errorf("it still accepts it: %d", resp.StatusCode)
		}
		return nil
	})
}

// A token's principal carries the cache key and X-OAuth-Scopes value made
// when its record was loaded: the same, first and cached, as CacheKey and
// Scopes.String make them for a principal built by hand.
func TestCachedTokenKeysAreTheComputedOnes(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	user := env.User("keyed")
	created, err := auth.CreateToken(apptest.Ctx(), env.App.DB,
		auth.TokenSpec{Kind: auth.KindClassic, UserID: user.ID, Scopes: auth.Scopes{"repo", "read:org"}})
	apptest.Must(t, "create token", err)
	for _, pass := range []string{"loaded", "cached"} {
		r, _ := http.NewRequest("GET", "/user", nil)
		r.Header.Set("Authorization", "token "+created.Value)
		p, err := env.App.Authn.Authenticate(apptest.Ctx(), r)
		apptest.Must(t, "authenticate", err)
		byHand := &auth.Principal{Account: p.Account, Token: &auth.Token{ID: p.Token.ID, Scopes: p.Token.Scopes}}
		want := fmt.Sprintf("u%dt%d", user.ID, p.Token.ID)
		if p.CacheKey() != want || byHand.CacheKey() != want {
			t.Errorf("%s: cache key %q, by hand %q, want %q", pass, p.CacheKey(), byHand.CacheKey(), want)
		}
		if got := p.Token.ScopesHeader(); got != "read:org, repo" || byHand.Token.ScopesHeader() != got {
			t.Errorf("%s: scopes header %q, by hand %q", pass, got, byHand.Token.ScopesHeader())
		}
	}
}

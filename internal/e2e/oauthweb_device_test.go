package e2e_test

import (
	"context"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"forgeapi/internal/apierr"
	"forgeapi/internal/apptest"
	"forgeapi/internal/oauthweb"
)

var userCodeForm = regexp.MustCompile(`^[A-Z]{4}-[A-Z]{4}$`)

// startDevice asks POST /login/device/code for a device code.
func startDevice(t *testing.T, e *apptest.Env, clientID, scope string, asJSON bool) url.Values {
	t.Helper()
	got := postForm(t, e, "/login/device/code", url.Values{"client_id": {clientID}, "scope": {scope}}, asJSON, asJSON)
	if got.Get("device_code") == "" || !userCodeForm.MatchString(got.Get("user_code")) ||
		got.Get("verification_uri") != e.URL+"/login/device" || got.Get("expires_in") != "900" || got.Get("interval") != "5" {
		t.Fatalf("device code answer %v", got)
	}
	return got
}

// TestDeviceFlow polls a device code through its states with the
// server's clock: authorization_pending, slow_down for a poll inside the
// interval (which grows by 5 s), the user's approval on the device page
// (the service), the token, and expired_token for a poll after it.
func TestDeviceFlow(t *testing.T) {
	clk := newWebClock()
	e := apptest.Start(t, apptest.WithClock(clk.Now))
	ctx := context.Background()
	frank := e.User("frank")
	clientID, _ := oauthApp(t, e, e.User("owner7"))
	d := startDevice(t, e, clientID, "repo gist", true)
	poll := url.Values{"client_id": {clientID}, "device_code": {d.Get("device_code")},
		"grant_type": {oauthweb.GrantDeviceCode}}

	wantError(t, postForm(t, e, "/login/oauth/access_token", poll, false, true), "authorization_pending")
	slow := postForm(t, e, "/login/oauth/access_token", poll, false, true)
	wantError(t, slow, "slow_down")
	if slow.Get("interval") != "10" {
		t.Fatalf("slow_down interval %q", slow.Get("interval"))
	}
	clk.Advance(10 * time.Second)
	wantError(t, postForm(t, e, "/login/oauth/access_token", poll, false, false), "authorization_pending")

	// The user types the code in any case, without the dash.
	typed := strings.ToLower(strings.ReplaceAll(d.Get("user_code"), "-", ""))
	req, err := e.App.OAuthWeb.LookupDevice(ctx, typed)
	if err != nil || req.AppName != "Octo Reader" || req.OwnerLogin != "owner7" || strings.Join(req.Scopes, " ") != "gist repo" {
		t.Fatalf("lookup %+v %v", req, err)
	}
	if err := e.App.OAuthWeb.ApproveDevice(ctx, frank.ID, typed); err != nil {
		t.Fatal(err)
	}
	if _, err := e.App.OAuthWeb.LookupDevice(ctx, typed); !isStatus(err, 404) {
		t.Fatalf("lookup of an approved code: %v", err)
	}
	clk.Advance(10 * time.Second)
	got := postForm(t, e, "/login/oauth/access_token", poll, false, true)
	if got.Get("access_token") == "" || got.Get("scope") != "gist,repo" {
		t.Fatalf("answer %v", got)
	}
	if u, _, err := e.Client(got.Get("access_token")).Users.Get(ctx, ""); err != nil || u.GetLogin() != "frank" {
		t.Fatalf("GET /user: %v", err)
	}
	clk.Advance(10 * time.Second)
	wantError(t, postForm(t, e, "/login/oauth/access_token", poll, false, true), "expired_token")
}

// TestDeviceFlowDeniedAndExpired covers a denied code, an expired one,
// an unknown one and an application with the device flow turned off.
func TestDeviceFlowDeniedAndExpired(t *testing.T) {
	clk := newWebClock()
	e := apptest.Start(t, apptest.WithClock(clk.Now))
	ctx := context.Background()
	gina := e.User("gina")
	clientID, _ := oauthApp(t, e, e.User("owner8"))
	pollOf := func(d url.Values) url.Values {
		return url.Values{"client_id": {clientID}, "device_code": {d.Get("device_code")}, "grant_type": {oauthweb.GrantDeviceCode}}
	}

	denied := startDevice(t, e, clientID, "", false)
	if err := e.App.OAuthWeb.DenyDevice(ctx, gina.ID, denied.Get("user_code")); err != nil {
		t.Fatal(err)
	}
	wantError(t, postForm(t, e, "/login/oauth/access_token", pollOf(denied), false, true), "access_denied")

	expired := startDevice(t, e, clientID, "", false)
	clk.Advance(oauthweb.DeviceCodeLifetime)
	if _, err := e.App.OAuthWeb.LookupDevice(ctx, expired.Get("user_code")); !isStatus(err, 404) {
		t.Fatalf("lookup of an expired code: %v", err)
	}
	if err := e.App.OAuthWeb.ApproveDevice(ctx, gina.ID, expired.Get("user_code")); !isStatus(err, 404) {
		t.Fatalf("approval of an expired code: %v", err)
	}
	wantError(t, postForm(t, e, "/login/oauth/access_token", pollOf(expired), false, true), "expired_token")
	// An hour on, the next device code sweeps it away.
	clk.Advance(2 * time.Hour)
	startDevice(t, e, clientID, "", false)
	wantError(t, postForm(t, e, "/login/oauth/access_token", pollOf(expired), false, true), "incorrect_device_code")

	wantError(t, postForm(t, e, "/login/oauth/access_token", pollOf(url.Values{"device_code": {"nope"}}), false, true), "incorrect_device_code")
	wantError(t, postForm(t, e, "/login/device/code", url.Values{"client_id": {"nope"}}, false, true), "incorrect_client_credentials")

	if err := e.App.OAuthWeb.Configure(ctx, clientID, oauthweb.ClientSettings{CallbackURL: callback}); err != nil {
		t.Fatal(err)
	}
	wantError(t, postForm(t, e, "/login/device/code", url.Values{"client_id": {clientID}}, false, true), "device_flow_disabled")
}

func isStatus(err error, status int) bool {
	e, ok := err.(*apierr.Error)
	return ok && e.Status == status
}

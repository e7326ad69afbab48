package e2e_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"forgeapi/internal/apptest"
	"forgeapi/internal/oauthweb"
)

// TestAppUserTokenRefresh runs the web flow of an app: its user access
// token expires in 8 hours and comes with a refresh token; refreshing
// rotates both (the old ones stop working), and an old refresh token is
// bad_refresh_token.
func TestAppUserTokenRefresh(t *testing.T) {
	e := apptest.Start(t)
	ctx := context.Background()
	hana := e.User("hana")
	app := e.RegisterApp(e.User("owner9"), "Octo Builder", "contents:read", apptest.AppOpts{Public: true})
	configure(t, e, app.ClientID)
	repo := e.Repo(hana, "notes")
	e.Install(app, hana, repo)

	con, err := e.App.OAuthWeb.Check(ctx, hana.ID, oauthweb.AuthorizeRequest{ClientID: app.ClientID, Scope: "repo"})
	if err != nil || !con.IsApp || con.AppName != "Octo Builder" || len(con.Scopes) != 0 || con.AlreadyGranted ||
		con.Permissions["contents"] != "read" {
		t.Fatalf("consent %+v %v", con, err)
	}
	code := approve(t, e, hana.ID, oauthweb.AuthorizeRequest{ClientID: app.ClientID})
	form := url.Values{"client_id": {app.ClientID}, "client_secret": {app.ClientSecret}, "code": {code}}
	first := postForm(t, e, "/login/oauth/access_token", form, false, true)
	if !strings.HasPrefix(first.Get("access_token"), "fau_") || first.Get("expires_in") != "28800" ||
		!strings.HasPrefix(first.Get("refresh_token"), "far_") || first.Get("refresh_token_expires_in") != "15897600" ||
		first.Get("scope") != "" || first.Get("token_type") != "bearer" {
		t.Fatalf("answer %v", first)
	}
	if u, _, err := e.Client(first.Get("access_token")).Users.Get(ctx, ""); err != nil || u.GetLogin() != "hana" {
		t.Fatalf("GET /user: %v", err)
	}
	if _, _, err := e.Client(first.Get("access_token")).Repositories.Get(ctx, "hana", "notes"); err != nil {
		t.Fatalf("the installation's repository: %v", err)
	}
	if con, err = e.App.OAuthWeb.Check(ctx, hana.ID, oauthweb.AuthorizeRequest{ClientID: app.ClientID}); err != nil || !con.AlreadyGranted {
		t.Fatalf("consent after the grant: %+v %v", con, err)
	}

	refresh := url.Values{"client_id": {app.ClientID}, "client_secret": {app.ClientSecret}, "grant_type": {"refresh_token"},
		"refresh_token": {first.Get("refresh_token")}}
	second := postForm(t, e, "/login/oauth/access_token", refresh, false, false)
	if !strings.HasPrefix(second.Get("access_token"), "fau_") || second.Get("access_token") == first.Get("access_token") ||
		second.Get("refresh_token") == first.Get("refresh_token") || second.Get("expires_in") != "28800" {
		t.Fatalf("refresh answered %v", second)
	}
	if _, resp, err := e.Client(first.Get("access_token")).Users.Get(ctx, ""); err == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the old access token after the refresh: %v", err)
	}
	if u, _, err := e.Client(second.Get("access_token")).Users.Get(ctx, ""); err != nil || u.GetLogin() != "hana" {
		t.Fatalf("GET /user with the new token: %v", err)
	}
	wantError(t, postForm(t, e, "/login/oauth/access_token", refresh, false, true), "bad_refresh_token")
	refresh.Set("client_secret", "wrong")
	refresh.Set("refresh_token", second.Get("refresh_token"))
	wantError(t, postForm(t, e, "/login/oauth/access_token", refresh, false, true), "incorrect_client_credentials")
}

// TestAppUserTokenExpires checks that an app's user access token stops
// working after UserTokenLifetime, and that its refresh token then still
// gets a new one.
func TestAppUserTokenExpires(t *testing.T) {
	clk := newWebClock()
	e := apptest.Start(t, apptest.WithClock(clk.Now))
	ctx := context.Background()
	ian := e.User("ian")
	app := e.RegisterApp(e.User("owner11"), "Octo Timer", "contents:read")
	configure(t, e, app.ClientID)
	code := approve(t, e, ian.ID, oauthweb.AuthorizeRequest{ClientID: app.ClientID})
	got := postForm(t, e, "/login/oauth/access_token",
		url.Values{"client_id": {app.ClientID}, "client_secret": {app.ClientSecret}, "code": {code}}, false, true)
	if _, _, err := e.Client(got.Get("access_token")).Users.Get(ctx, ""); err != nil {
		t.Fatalf("GET /user: %v", err)
	}
	clk.Advance(oauthweb.UserTokenLifetime + time.Second)
	if _, resp, err := e.Client(got.Get("access_token")).Users.Get(ctx, ""); err == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("GET /user with the expired token: %v", err)
	}
	next := postForm(t, e, "/login/oauth/access_token", url.Values{"client_id": {app.ClientID}, "client_secret": {app.ClientSecret},
		"grant_type": {"refresh_token"}, "refresh_token": {got.Get("refresh_token")}}, false, true)
	if u, _, err := e.Client(next.Get("access_token")).Users.Get(ctx, ""); err != nil || u.GetLogin() != "ian" {
		t.Fatalf("GET /user with the refreshed token: %v", err)
	}
}

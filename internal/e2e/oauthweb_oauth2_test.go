package e2e_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"forgeapi/internal/app"
	"forgeapi/internal/apptest"
	"forgeapi/internal/oauthweb"
)

// TestOAuth2Client runs both flows with golang.org/x/oauth2 as the
// client: Exchange with a PKCE verifier, and DeviceAuth then
// DeviceAccessToken, polling while the user approves (the server's
// interval set to 1 s so that the client's wait is short).
func TestOAuth2Client(t *testing.T) {
	e := apptest.Start(t, func(c *app.Config) { c.OAuthWeb = oauthweb.Config{DeviceInterval: time.Second} })
	ivy := e.User("ivy")
	clientID, secret := oauthApp(t, e, e.User("owner10"))
	cfg := oauth2.Config{ClientID: clientID, ClientSecret: secret, Scopes: []string{"repo"}, RedirectURL: callback,
		Endpoint: oauth2.Endpoint{AuthURL: e.URL + "/login/oauth/authorize", TokenURL: e.URL + "/login/oauth/access_token",
			DeviceAuthURL: e.URL + "/login/device/code", AuthStyle: oauth2.AuthStyleInParams}}
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, &http.Client{Transport: e.Transport()})

	verifier := oauth2.GenerateVerifier()
	code := approve(t, e, ivy.ID, oauthweb.AuthorizeRequest{ClientID: clientID, Scope: "repo", RedirectURI: callback,
		CodeChallenge: oauth2.S256ChallengeFromVerifier(verifier), CodeChallengeMethod: "S256"})
	tok, err := cfg.Exchange(ctx, code, oauth2.VerifierOption(verifier))
	if err != nil || tok.AccessToken == "" || tok.Type() != "Bearer" {
		t.Fatalf("exchange: %+v %v", tok, err)
	}
	if u, _, err := e.Client(tok.AccessToken).Users.Get(ctx, ""); err != nil || u.GetLogin() != "ivy" {
		t.Fatalf("GET /user: %v", err)
	}
	if _, err := cfg.Exchange(ctx, code, oauth2.VerifierOption(verifier)); err == nil {
		t.Fatal("a second exchange of the code succeeded")
	}

	da, err := cfg.DeviceAuth(ctx)
	if err != nil || da.VerificationURI != e.URL+"/login/device" || da.Interval != 1 {
		t.Fatalf("device auth: %+v %v", da, err)
	}
	if err := e.App.OAuthWeb.ApproveDevice(ctx, ivy.ID, da.UserCode); err != nil {
		t.Fatal(err)
	}
	tok, err = cfg.DeviceAccessToken(ctx, da)
	if err != nil || tok.AccessToken == "" {
		t.Fatalf("device access token: %+v %v", tok, err)
	}
	if u, _, err := e.Client(tok.AccessToken).Users.Get(ctx, ""); err != nil || u.GetLogin() != "ivy" {
		t.Fatalf("GET /user with the device token: %v", err)
	}
}

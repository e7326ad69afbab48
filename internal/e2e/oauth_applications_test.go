package e2e_test

import (
	"net/http"
	"strings"
	"testing"

	"forgeapi/internal/app"
	"forgeapi/internal/apptest"
	"forgeapi/internal/oauth"
)

// TestApplicationTokenEndpoints drives the application token endpoints
// with go-github's Authorizations methods, as an OAuth application does:
// HTTP Basic with its client id and secret.
func TestApplicationTokenEndpoints(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	user := newUser(t, env, "octocat", apptest.UserOpts{Password: password})
	other := newUser(t, env, "hubot", apptest.UserOpts{Password: password})
	ci := newApp(t, env, user, "CI")
	editor := newApp(t, env, user, "Editor")
	token := env.OAuthToken(user, ci.ID, "repo")
	second := env.OAuthToken(user, ci.ID, "gist")
	hubots := env.OAuthToken(other, ci.ID, "user")
	editors := env.OAuthToken(user, editor.ID, "repo")
	app := env.BasicClient(ci.ClientID, ci.ClientSecret, "").Authorizations
	ctx := apptest.Ctx()

	// Check: the token's authorization, with the token and its owner.
	z, _, err := app.Check(ctx, ci.ClientID, token)
	apptest.Must(t, "check", err)
	if z.GetToken() != token || z.GetUser().GetLogin() != "octocat" || z.GetApp().GetClientID() != ci.ClientID ||
		len(z.Scopes) != 1 || z.Scopes[0] != "repo" || z.GetTokenLastEight() != token[len(token)-8:] {
		t.Fatalf("check: %+v", z)
	}
	// Tokens the application does not hold are a 404: another app's, a
	// personal one, an unknown one.
	for _, v := range []string{editors, env.Token(user, "repo"), "gho_unknown"} {
		if _, resp, err := app.Check(ctx, ci.ClientID, v); apptest.ResponseStatus(resp) != http.StatusNotFound {
			t.Fatalf("check of a token the app does not hold: %v %v", apptest.ResponseStatus(resp), err)
		}
	}

	// Reset: a new value for the same authorization; the old one stops.
	reset, _, err := app.Reset(ctx, ci.ClientID, token)
	apptest.Must(t, "reset", err)
	if reset.GetID() != z.GetID() || reset.GetToken() == "" || reset.GetToken() == token || reset.GetHashedToken() == z.GetHashedToken() {
		t.Fatalf("reset: %+v, was %+v", reset, z)
	}
	wantRevoked(t, env, token)
	wantScopes(t, env, reset.GetToken(), "repo")

	// Revoke one token: it stops, the app's other token stays.
	_, err = app.Revoke(ctx, ci.ClientID, reset.GetToken())
	apptest.Must(t, "revoke", err)
	wantRevoked(t, env, reset.GetToken())
	wantScopes(t, env, second, "gist")

	// Delete the grant: every token of the app for that user stops, and
	// the grant is gone; other users' tokens and other apps' stay.
	_, err = app.DeleteGrant(ctx, ci.ClientID, second)
	apptest.Must(t, "delete grant", err)
	wantRevoked(t, env, second)
	wantScopes(t, env, hubots, "user")
	wantScopes(t, env, editors, "repo")
	var grants []authorization
	oauthBasic(t, env, "octocat", password, "").want(http.StatusOK, "GET", "applications/grants", nil, &grants)
	for _, g := range grants {
		if g.App.ClientID == ci.ClientID {
			t.Fatalf("grant of %s listed after its deletion: %+v", ci.ClientID, grants)
		}
	}
	if _, resp, _ := app.Check(ctx, ci.ClientID, second); apptest.ResponseStatus(resp) != http.StatusNotFound {
		t.Fatalf("check after the grant's deletion: %d", apptest.ResponseStatus(resp))
	}
}

// TestApplicationTokenEndpointsRefuseBadCalls: wrong or missing client
// credentials are a 404 (no 401 is documented), a missing access_token a
// 422, and a user's password or token is not an application's
// credential.
func TestApplicationTokenEndpointsRefuseBadCalls(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	user := newUser(t, env, "octocat", apptest.UserOpts{Password: password})
	ci := newApp(t, env, user, "CI")
	other := newApp(t, env, user, "Other")
	token := env.OAuthToken(user, ci.ID, "repo")
	body := `{"access_token":"` + token + `"}`
	path := "/applications/" + ci.ClientID + "/token"
	for _, c := range []struct {
		name, authorization string
	}{
		{"no credentials", ""},
		{"wrong secret", basicHeader(ci.ClientID, "wrong")},
		{"another app's credentials", basicHeader(other.ClientID, other.ClientSecret)},
		{"the user's password", basicHeader("octocat", password)},
		{"a token", "Bearer " + token},
	} {
		for _, method := range []string{"POST", "PATCH", "DELETE"} {
			resp, b := env.DoJSON(method, path, "", body, "Authorization", c.authorization)
			if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(b), `"message"`) {
				t.Fatalf("%s %s with %s: %d %s, want a JSON 404", method, path, c.name, resp.StatusCode, b)
			}
		}
	}
	auth := basicHeader(ci.ClientID, ci.ClientSecret)
	for _, method := range []string{"POST", "PATCH", "DELETE"} {
		resp, b := env.DoJSON(method, path, "", `{}`, "Authorization", auth)
		if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(string(b), `"access_token"`) {
			t.Fatalf("%s without access_token: %d %s, want 422 naming access_token", method, resp.StatusCode, b)
		}
	}
	if resp, b := env.DoJSON("DELETE", "/applications/"+ci.ClientID+"/tokens", "", body, "Authorization", auth); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("DELETE .../tokens: %d %s, want 404", resp.StatusCode, b)
	}
	wantScopes(t, env, token, "repo") // nothing above touched it
}

// TestApplicationTokenEndpointsWithAuthorizationsAPIRemoved: the
// application token endpoints stay when the authorizations API is gone.
func TestApplicationTokenEndpointsWithAuthorizationsAPIRemoved(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, func(c *app.Config) { c.AuthorizationsAPI = oauth.APIRemoved })
	user := newUser(t, env, "octocat", apptest.UserOpts{Password: password})
	ci := newApp(t, env, user, "CI")
	token := env.OAuthToken(user, ci.ID, "repo")
	z, _, err := env.BasicClient(ci.ClientID, ci.ClientSecret, "").Authorizations.Check(apptest.Ctx(), ci.ClientID, token)
	apptest.Must(t, "check", err)
	if z.GetToken() != token {
		t.Fatalf("check: %+v", z)
	}
}

package e2e_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"forgeapi/internal/apptest"
	"forgeapi/internal/oauthweb"
)

// TestScopedUserToken narrows an app's user access token with POST
// /applications/{client_id}/token/scoped to one repository of an
// organization the app is installed on and to fewer permissions: the
// scoped token reaches that repository only. Wrong client credentials
// are a 401, a token that is not the app's a 404, a repository outside
// the installation or a permission the app lacks a 422.
func TestScopedUserToken(t *testing.T) {
	e := apptest.Start(t)
	ctx := context.Background()
	jo := e.User("jo")
	org := e.Org("acme", e.User("boss"), jo)
	e.Repo(org, "api", apptest.RepoOpts{Private: true})
	e.Repo(org, "web", apptest.RepoOpts{Private: true})
	e.Repo(jo, "mine", apptest.RepoOpts{Private: true})
	app := e.RegisterApp(e.User("owner12"), "Octo Scoper", "contents:read,issues:write", apptest.AppOpts{Public: true})
	configure(t, e, app.ClientID)
	e.Install(app, org, nil)

	code := approve(t, e, jo.ID, oauthweb.AuthorizeRequest{ClientID: app.ClientID})
	uat := postForm(t, e, "/login/oauth/access_token",
		url.Values{"client_id": {app.ClientID}, "client_secret": {app.ClientSecret}, "code": {code}}, false, true).Get("access_token")

	scope := func(secret, body string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest("POST", e.URL+"/applications/"+app.ClientID+"/token/scoped", nil)
		req.SetBasicAuth(app.ClientID, secret)
		return e.DoJSON("POST", "/applications/"+app.ClientID+"/token/scoped", "", body, "Authorization", req.Header.Get("Authorization"))
	}
	resp, body := scope(app.ClientSecret, `{"access_token":"`+uat+`","target":"acme","repositories":["api"],"permissions":{"issues":"read"}}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scoped: %d %s", resp.StatusCode, body)
	}
	var got struct {
		Token        string `json:"token"`
		Installation struct {
			Permissions         map[string]string      `json:"permissions"`
			RepositorySelection string                 `json:"repository_selection"`
			Account             struct{ Login string } `json:"account"`
		} `json:"installation"`
		User struct{ Login string } `json:"user"`
	}
	apptest.Must(t, "scoped body", json.Unmarshal(body, &got))
	if got.Token == "" || got.Token == uat || got.User.Login != "jo" || got.Installation.Account.Login != "acme" ||
		got.Installation.RepositorySelection != "selected" || got.Installation.Permissions["issues"] != "read" ||
		got.Installation.Permissions["contents"] != "" {
		t.Fatalf("scoped answer %s", body)
	}
	c := e.Client(got.Token)
	if _, _, err := c.Repositories.Get(ctx, "acme", "api"); err != nil {
		t.Fatalf("the scoped repository: %v", err)
	}
	if _, resp, err := c.Repositories.Get(ctx, "acme", "web"); err == nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("a repository outside the scope: %v", err)
	}

	for _, bad := range []struct {
		secret, body string
		status       int
	}{
		{"wrong", `{"access_token":"` + uat + `","target":"acme"}`, 401},
		{app.ClientSecret, `{"access_token":"fau_unknown","target":"acme"}`, 404},
		{app.ClientSecret, `{"access_token":"` + uat + `","target":"acme","repositories":["nope"]}`, 422},
		{app.ClientSecret, `{"access_token":"` + uat + `","target":"acme","permissions":{"administration":"write"}}`, 422},
		{app.ClientSecret, `{"access_token":"` + uat + `","target":"jo"}`, 422}, // not installed there
		{app.ClientSecret, `{"access_token":"` + uat + `"}`, 422},
	} {
		if resp, body := scope(bad.secret, bad.body); resp.StatusCode != bad.status {
			t.Errorf("%s: %d %s, want %d", bad.body, resp.StatusCode, body, bad.status)
		}
	}
}

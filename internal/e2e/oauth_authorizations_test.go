package e2e_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"forgeapi/internal/apptest"
	"forgeapi/internal/oauth"
)

const password = "correct horse battery"

func TestPersonalAuthorizationLifecycle(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	user := newUser(t, env, "octocat", apptest.UserOpts{Password: password})
	env.Repo(user, "secret", apptest.RepoOpts{Private: true})
	c := oauthBasic(t, env, "octocat", password, "")

	// Create: 201 with Location and the only sight of the token.
	var created authorization
	resp := c.want(http.StatusCreated, "POST", "authorizations",
		createBody{Scopes: []string{"repo", "gist"}, Note: "laptop", NoteURL: "https://example.com/laptop"}, &created)
	checkSecretFields(t, created)
	if want := env.URL + "/authorizations/" + fmt.Sprint(created.ID); created.URL != want || resp.Header.Get("Location") != want {
		t.Fatalf("url %q, Location %q, want %q", created.URL, resp.Header.Get("Location"), want)
	}
	if !sameStrings(created.Scopes, []string{"gist", "repo"}) {
		t.Fatalf("scopes %v", created.Scopes)
	}
	if created.App.Name != "laptop" || created.App.ClientID != oauth.PersonalClientID || created.App.URL == "" {
		t.Fatalf("personal app object %+v", created.App)
	}
	if created.Note == nil || *created.Note != "laptop" || created.NoteURL == nil || *created.NoteURL != "https://example.com/laptop" {
		t.Fatalf("note %v note_url %v", created.Note, created.NoteURL)
	}
	if created.Fingerprint == nil || *created.Fingerprint != "" {
		t.Fatalf("fingerprint %v, want \"\"", created.Fingerprint)
	}
	if created.User.Login != "octocat" || created.CreatedAt == "" || created.UpdatedAt == "" {
		t.Fatalf("user/timestamps: %+v", created)
	}
	token := created.Token

	// The token authenticates elsewhere with exactly its scopes.
	wantScopes(t, env, token, "gist", "repo")
	bearer(t, env, token).want(http.StatusOK, "GET", "repos/octocat/secret", nil, nil)

	// Single responses carry expires_at and an empty token; lists omit
	// expires_at.
	var single map[string]any
	c.want(http.StatusOK, "GET", "authorizations/"+fmt.Sprint(created.ID), nil, &single)
	if _, ok := single["expires_at"]; !ok || single["token"] != "" || single["hashed_token"] != created.HashedToken {
		t.Fatalf("single authorization: %v", single)
	}
	var list []map[string]any
	c.want(http.StatusOK, "GET", "authorizations", nil, &list)
	if len(list) != 1 || list[0]["token"] != "" || list[0]["token_last_eight"] != created.TokenLastEight {
		t.Fatalf("list: %v", list)
	}
	if _, ok := list[0]["expires_at"]; ok {
		t.Fatalf("list item has expires_at: %v", list[0])
	}

	// Update the scopes three ways; the token's scopes follow at once.
	var updated authorization
	c.want(http.StatusOK, "PATCH", "authorizations/"+fmt.Sprint(created.ID),
		map[string]any{"add_scopes": []string{"user"}, "note": "work laptop"}, &updated)
	if !sameStrings(updated.Scopes, []string{"gist", "repo", "user"}) || updated.Token != "" || *updated.Note != "work laptop" || updated.App.Name != "work laptop" {
		t.Fatalf("after add_scopes: %+v", updated)
	}
	wantScopes(t, env, token, "gist", "repo", "user")
	c.want(http.StatusOK, "PATCH", "authorizations/"+fmt.Sprint(created.ID), map[string]any{"remove_scopes": []string{"repo"}}, &updated)
	if !sameStrings(updated.Scopes, []string{"gist", "user"}) {
		t.Fatalf("after remove_scopes: %v", updated.Scopes)
	}
	wantScopes(t, env, token, "gist", "user")
	bearer(t, env, token).want(http.StatusNotFound, "GET", "repos/octocat/secret", nil, nil)
	c.want(http.StatusOK, "PATCH", "authorizations/"+fmt.Sprint(created.ID), map[string]any{"scopes": []string{"read:user"}}, &updated)
	wantScopes(t, env, token, "read:user")
	c.want(http.StatusOK, "PATCH", "authorizations/"+fmt.Sprint(created.ID), map[string]any{"scopes": nil}, &updated)
	if len(updated.Scopes) != 0 {
		t.Fatalf("scopes null: %v", updated.Scopes)
	}
	wantScopes(t, env, token)

	// Delete: 204, and the token stops working at once.
	c.want(http.StatusNoContent, "DELETE", "authorizations/"+fmt.Sprint(created.ID), nil, nil)
	wantRevoked(t, env, token)
	c.want(http.StatusNotFound, "GET", "authorizations/"+fmt.Sprint(created.ID), nil, nil)
	c.want(http.StatusNotFound, "PATCH", "authorizations/"+fmt.Sprint(created.ID), map[string]any{"note": "x"}, nil)
	c.want(http.StatusNotFound, "DELETE", "authorizations/"+fmt.Sprint(created.ID), nil, nil)
	c.want(http.StatusNotFound, "GET", "authorizations/clients", nil, nil)
	c.want(http.StatusOK, "GET", "authorizations", nil, &list)
	if len(list) != 0 {
		t.Fatalf("list after delete: %v", list)
	}
}

// in returns the caller failing t (a step of a story) instead.
func (c caller) in(t testing.TB) caller {
	c.t = t
	return c
}

func TestAppAuthorizationsGrantsAndCascade(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	user := newUser(t, env, "octocat", apptest.UserOpts{Password: password})
	ci := newApp(t, env, user, "CI")
	editor := newApp(t, env, user, "Editor")
	c := oauthBasic(t, env, "octocat", password, "")

	var first, printed, third, personal, other authorization // the tokens made
	var grantID string                                       // the CI app's grant

	apptest.Step(t, "get-or-create for the app answers 201, then 200 with the same authorization", func(t *testing.T) {
		c := c.in(t)
		var again authorization
		resp := c.want(http.StatusCreated, "PUT", "authorizations/clients/"+ci.ClientID,
			createBody{ClientSecret: ci.ClientSecret, Scopes: []string{"repo"}}, &first)
		checkSecretFields(t, first)
		if resp.Header.Get("Location") != first.URL || first.App.ClientID != ci.ClientID || first.App.Name != "CI" ||
			first.App.URL != "https://ci.example" || first.Note != nil || *first.Fingerprint != "" {
			t.Fatalf("created for app: %+v, Location %q", first, resp.Header.Get("Location"))
		}
		c.want(http.StatusOK, "PUT", "authorizations/clients/"+ci.ClientID,
			createBody{ClientSecret: ci.ClientSecret, Scopes: []string{"user"}}, &again)
		if again.ID != first.ID || again.Token != "" || again.HashedToken != first.HashedToken || !sameStrings(again.Scopes, []string{"repo"}) {
			t.Fatalf("get-or-create existing: %+v, want authorization %d unchanged without token", again, first.ID)
		}
	})

	apptest.Step(t, "a fingerprint makes another token of the same app, from the path or the body", func(t *testing.T) {
		c := c.in(t)
		var printedAgain authorization
		resp := c.want(http.StatusCreated, "PUT", "authorizations/clients/"+ci.ClientID+"/laptop-1",
			createBody{ClientSecret: ci.ClientSecret, Scopes: []string{"gist"}, Note: "on the laptop"}, &printed)
		checkSecretFields(t, printed)
		if printed.ID == first.ID || *printed.Fingerprint != "laptop-1" || *printed.Note != "on the laptop" ||
			resp.Header.Get("Location") != printed.URL {
			t.Fatalf("fingerprinted: %+v", printed)
		}
		c.want(http.StatusOK, "PUT", "authorizations/clients/"+ci.ClientID+"/laptop-1",
			createBody{ClientSecret: ci.ClientSecret}, &printedAgain)
		if printedAgain.ID != printed.ID || printedAgain.Token != "" {
			t.Fatalf("fingerprinted again: %+v", printedAgain)
		}
		// Endpoint 6 takes the fingerprint from its body.
		var viaBody authorization
		c.want(http.StatusOK, "PUT", "authorizations/clients/"+ci.ClientID,
			createBody{ClientSecret: ci.ClientSecret, Fingerprint: "laptop-1"}, &viaBody)
		if viaBody.ID != printed.ID {
			t.Fatalf("endpoint 6 with body fingerprint: got %d, want %d", viaBody.ID, printed.ID)
		}
	})

	apptest.Step(t, "client credentials add a third token for the app; a personal token has no grant", func(t *testing.T) {
		c := c.in(t)
		c.want(http.StatusCreated, "POST", "authorizations",
			createBody{ClientID: ci.ClientID, ClientSecret: ci.ClientSecret, Scopes: []string{"read:org"}, Fingerprint: "desk"}, &third)
		checkSecretFields(t, third)
		c.want(http.StatusCreated, "POST", "authorizations", createBody{Note: "scripts", Scopes: []string{"repo"}}, &personal)
		c.want(http.StatusCreated, "PUT", "authorizations/clients/"+editor.ClientID,
			createBody{ClientSecret: editor.ClientSecret, Scopes: []string{"user:email"}}, &other)
		for _, a := range []authorization{first, printed, third, other, personal} {
			if _, status := scopesOf(t, env, a.Token); status != http.StatusOK {
				t.Fatalf("token of authorization %d: GET /user %d", a.ID, status)
			}
		}
	})

	apptest.Step(t, "the grants are one per application, their scopes the union of its tokens'", func(t *testing.T) {
		c := c.in(t)
		var grants []map[string]any
		c.want(http.StatusOK, "GET", "applications/grants", nil, &grants)
		if len(grants) != 2 {
			t.Fatalf("grants: %v", grants)
		}
		ciGrant := grantByClient(t, grants, ci.ClientID)
		if got := fmt.Sprint(ciGrant["scopes"]); got != "[gist read:org repo]" {
			t.Fatalf("CI grant scopes %s, want the union [gist read:org repo]", got)
		}
		app := ciGrant["app"].(map[string]any)
		if app["name"] != "CI" || app["url"] != "https://ci.example" || ciGrant["url"] != env.URL+"/applications/grants/"+fmt.Sprint(ciGrant["id"]) {
			t.Fatalf("grant shape: %v", ciGrant)
		}
		for _, k := range []string{"id", "url", "app", "created_at", "updated_at", "scopes", "user"} {
			if _, ok := ciGrant[k]; !ok {
				t.Fatalf("grant lacks %q: %v", k, ciGrant)
			}
		}
		grantID = fmt.Sprint(ciGrant["id"])
		var one map[string]any
		c.want(http.StatusOK, "GET", "applications/grants/"+grantID, nil, &one)
		if fmt.Sprint(one["scopes"]) != "[gist read:org repo]" || fmt.Sprint(one["id"]) != grantID {
			t.Fatalf("single grant: %v", one)
		}
	})

	apptest.Step(t, "lists filter by client id", func(t *testing.T) {
		c := c.in(t)
		var grants []map[string]any
		c.want(http.StatusOK, "GET", "applications/grants?client_id="+editor.ClientID, nil, &grants)
		if len(grants) != 1 || grantByClient(t, grants, editor.ClientID) == nil {
			t.Fatalf("grants for Editor: %v", grants)
		}
		var auths []authorization
		c.want(http.StatusOK, "GET", "authorizations?client_id="+ci.ClientID, nil, &auths)
		if len(auths) != 3 || auths[0].ID != first.ID || auths[1].ID != printed.ID || auths[2].ID != third.ID {
			t.Fatalf("authorizations for CI: %+v", auths)
		}
		c.want(http.StatusOK, "GET", "authorizations?client_id="+oauth.PersonalClientID, nil, &auths)
		if len(auths) != 1 || auths[0].ID != personal.ID {
			t.Fatalf("personal authorizations: %+v", auths)
		}
		c.want(http.StatusOK, "GET", "authorizations?client_id=Iv1.0000000000000000", nil, &auths)
		if len(auths) != 0 {
			t.Fatalf("authorizations of an unknown client: %+v", auths)
		}
	})

	apptest.Step(t, "deleting one token narrows the union and the grant stays", func(t *testing.T) {
		c := c.in(t)
		var one map[string]any
		c.want(http.StatusNoContent, "DELETE", "authorizations/"+fmt.Sprint(third.ID), nil, nil)
		wantRevoked(t, env, third.Token)
		c.want(http.StatusOK, "GET", "applications/grants/"+grantID, nil, &one)
		if fmt.Sprint(one["scopes"]) != "[gist repo]" {
			t.Fatalf("grant scopes after deleting a token: %v", one["scopes"])
		}
	})

	apptest.Step(t, "deleting the grant deletes every token of the app for the user", func(t *testing.T) {
		c := c.in(t)
		var auths []authorization
		c.want(http.StatusNoContent, "DELETE", "applications/grants/"+grantID, nil, nil)
		wantRevoked(t, env, first.Token)
		wantRevoked(t, env, printed.Token)
		wantScopes(t, env, other.Token, "user:email")
		wantScopes(t, env, personal.Token, "repo")
		c.want(http.StatusNotFound, "GET", "applications/grants/"+grantID, nil, nil)
		c.want(http.StatusNotFound, "DELETE", "applications/grants/"+grantID, nil, nil)
		c.want(http.StatusNotFound, "GET", "authorizations/"+fmt.Sprint(first.ID), nil, nil)
		c.want(http.StatusOK, "GET", "authorizations", nil, &auths)
		if len(auths) != 2 {
			t.Fatalf("authorizations after deleting the grant: %+v", auths)
		}
	})

	apptest.Step(t, "a grant disappears with its application's last token", func(t *testing.T) {
		c := c.in(t)
		var grants []map[string]any
		c.want(http.StatusNoContent, "DELETE", "authorizations/"+fmt.Sprint(other.ID), nil, nil)
		c.want(http.StatusOK, "GET", "applications/grants", nil, &grants)
		if len(grants) != 0 {
			t.Fatalf("grants after the last tokens went: %v", grants)
		}
	})

	apptest.Step(t, "a new token for the app makes a new grant", func(t *testing.T) {
		c := c.in(t)
		var grants []map[string]any
		var fresh authorization
		c.want(http.StatusCreated, "PUT", "authorizations/clients/"+ci.ClientID, createBody{ClientSecret: ci.ClientSecret}, &fresh)
		c.want(http.StatusOK, "GET", "applications/grants", nil, &grants)
		if len(grants) != 1 || fmt.Sprint(grants[0]["scopes"]) != "[]" {
			t.Fatalf("grants after a new token: %v", grants)
		}
	})
}

func grantByClient(t *testing.T, grants []map[string]any, clientID string) map[string]any {
	t.Helper()
	for _, g := range grants {
		if g["app"].(map[string]any)["client_id"] == clientID {
			return g
		}
	}
	t.Fatalf("no grant for %s in %v", clientID, grants)
	return nil
}

func TestOtherUsersSeeNothing(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	owner := newUser(t, env, "octocat", apptest.UserOpts{Password: password})
	newUser(t, env, "hubot", apptest.UserOpts{Password: password})
	ci := newApp(t, env, owner, "CI")
	c := oauthBasic(t, env, "octocat", password, "")
	other := oauthBasic(t, env, "hubot", password, "")

	var a authorization
	c.want(http.StatusCreated, "PUT", "authorizations/clients/"+ci.ClientID, createBody{ClientSecret: ci.ClientSecret, Scopes: []string{"repo"}}, &a)
	var grants []map[string]any
	c.want(http.StatusOK, "GET", "applications/grants", nil, &grants)
	grantID := fmt.Sprint(grants[0]["id"])

	id := fmt.Sprint(a.ID)
	other.want(http.StatusNotFound, "GET", "authorizations/"+id, nil, nil)
	other.want(http.StatusNotFound, "PATCH", "authorizations/"+id, map[string]any{"scopes": []string{"user"}}, nil)
	other.want(http.StatusNotFound, "DELETE", "authorizations/"+id, nil, nil)
	other.want(http.StatusNotFound, "GET", "applications/grants/"+grantID, nil, nil)
	other.want(http.StatusNotFound, "DELETE", "applications/grants/"+grantID, nil, nil)
	var list []authorization
	other.want(http.StatusOK, "GET", "authorizations", nil, &list)
	other.want(http.StatusOK, "GET", "applications/grants", nil, &grants)
	if len(list) != 0 || len(grants) != 0 {
		t.Fatalf("another user's lists: %v %v", list, grants)
	}
	// hubot's own get-or-create for the same app is a new authorization.
	var mine authorization
	other.want(http.StatusCreated, "PUT", "authorizations/clients/"+ci.ClientID, createBody{ClientSecret: ci.ClientSecret}, &mine)
	wantScopes(t, env, a.Token, "repo")
}

func TestValidationErrors(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	user := newUser(t, env, "octocat", apptest.UserOpts{Password: password})
	ci := newApp(t, env, user, "CI")
	c := oauthBasic(t, env, "octocat", password, "")

	var personal, printed, printed3 authorization
	c.want(http.StatusCreated, "POST", "authorizations", createBody{Note: "taken"}, &personal)
	c.want(http.StatusCreated, "POST", "authorizations", createBody{Note: "second"}, nil)
	c.want(http.StatusCreated, "PUT", "authorizations/clients/"+ci.ClientID+"/fp-1", createBody{ClientSecret: ci.ClientSecret}, &printed)
	c.want(http.StatusCreated, "PUT", "authorizations/clients/"+ci.ClientID+"/fp-3", createBody{ClientSecret: ci.ClientSecret}, &printed3)
	pid := fmt.Sprint(personal.ID)

	for _, tc := range []struct {
		name         string
		method, path string
		body         any
		field, code  string
	}{
		{"unknown scope", "POST", "authorizations", createBody{Note: "n", Scopes: []string{"repo", "rule:the-world"}}, "scopes", "invalid"},
		{"missing note", "POST", "authorizations", createBody{Scopes: []string{"repo"}}, "note", "missing_field"},
		{"duplicate note", "POST", "authorizations", createBody{Note: "taken"}, "note", "already_exists"},
		{"short client id", "POST", "authorizations", createBody{ClientID: "Iv1.short", ClientSecret: "x"}, "client_id", "invalid"},
		{"unknown client id", "POST", "authorizations", createBody{ClientID: "Iv1.0000000000000000", ClientSecret: "x"}, "client_id", "invalid"},
		{"wrong client secret", "POST", "authorizations", createBody{ClientID: ci.ClientID, ClientSecret: "wrong"}, "client_secret", "invalid"},
		{"client id without secret", "POST", "authorizations", createBody{ClientID: ci.ClientID}, "client_secret", "missing_field"},
		{"secret without client id", "POST", "authorizations", createBody{ClientSecret: "x", Note: "n"}, "client_id", "missing_field"},
		{"duplicate fingerprint", "POST", "authorizations", createBody{ClientID: ci.ClientID, ClientSecret: ci.ClientSecret, Fingerprint: "fp-1"}, "fingerprint", "already_exists"},
		{"scopes not an array", "POST", "authorizations", map[string]any{"note": "n", "scopes": "repo"}, "scopes", "invalid"},
		{"put without secret", "PUT", "authorizations/clients/" + ci.ClientID, createBody{}, "client_secret", "missing_field"},
		{"put wrong secret", "PUT", "authorizations/clients/" + ci.ClientID, createBody{ClientSecret: "wrong"}, "client_secret", "invalid"},
		{"put unknown client", "PUT", "authorizations/clients/Iv1.0000000000000000", createBody{ClientSecret: "x"}, "client_id", "invalid"},
		{"put personal client id", "PUT", "authorizations/clients/" + oauth.PersonalClientID, createBody{ClientSecret: "x"}, "client_id", "invalid"},
		{"put fingerprint unknown scope", "PUT", "authorizations/clients/" + ci.ClientID + "/fp-2", createBody{ClientSecret: ci.ClientSecret, Scopes: []string{"nope"}}, "scopes", "invalid"},
		{"patch two scope keys", "PATCH", "authorizations/" + pid, map[string]any{"scopes": []string{"repo"}, "add_scopes": []string{"user"}}, "scopes", "invalid"},
		{"patch null and another key", "PATCH", "authorizations/" + pid, map[string]any{"scopes": nil, "remove_scopes": []string{"user"}}, "scopes", "invalid"},
		{"patch unknown added scope", "PATCH", "authorizations/" + pid, map[string]any{"add_scopes": []string{"nope"}}, "add_scopes", "invalid"},
		{"patch empty note", "PATCH", "authorizations/" + pid, map[string]any{"note": ""}, "note", "missing_field"},
		{"patch duplicate note", "PATCH", "authorizations/" + pid, map[string]any{"note": "second"}, "note", "already_exists"},
		{"patch duplicate fingerprint", "PATCH", "authorizations/" + fmt.Sprint(printed3.ID), map[string]any{"fingerprint": "fp-1"}, "fingerprint", "already_exists"},
		{"patch own fingerprint", "PATCH", "authorizations/" + fmt.Sprint(printed.ID), map[string]any{"fingerprint": "fp-1"}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := oauthBasic(t, env, "octocat", password, "")
			if tc.field == "" { // setting its own fingerprint again is no conflict
				c.want(http.StatusOK, tc.method, tc.path, tc.body, nil)
				return
			}
			er := c.wantError(http.StatusUnprocessableEntity, tc.method, tc.path, tc.body)
			wantField(t, er, tc.field, tc.code)
		})
	}
	if resp, body := env.DoJSON("POST", "/authorizations", "", `{"note": `, "Authorization", basicHeader("octocat", password)); resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("malformed JSON: %d %s", resp.StatusCode, body)
	}

	// Nothing was stored by the refused requests.
	var list []authorization
	c.want(http.StatusOK, "GET", "authorizations", nil, &list)
	if len(list) != 4 || list[0].Scopes == nil || len(list[0].Scopes) != 0 || *list[0].Note != "taken" {
		t.Fatalf("authorizations after refused requests: %+v", list)
	}
}

func TestPagingAndConditionalRequests(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	user := newUser(t, env, "octocat", apptest.UserOpts{Password: password})
	c := oauthBasic(t, env, "octocat", password, "")
	apps := []string{"A", "B", "C"}
	for i, name := range apps {
		app := newApp(t, env, user, name)
		c.want(http.StatusCreated, "PUT", "authorizations/clients/"+app.ClientID, createBody{ClientSecret: app.ClientSecret}, nil)
		c.want(http.StatusCreated, "POST", "authorizations", createBody{Note: fmt.Sprint("note ", i)}, nil)
	}

	for _, path := range []string{"authorizations", "applications/grants"} {
		var page1, page2 []map[string]any
		resp := c.want(http.StatusOK, "GET", path+"?per_page=2", nil, &page1)
		if resp.NextPage != 2 || resp.LastPage == 0 || len(page1) != 2 {
			t.Fatalf("%s page 1: %d items, Link %q", path, len(page1), resp.Header.Get("Link"))
		}
		c.want(http.StatusOK, "GET", fmt.Sprintf("%s?per_page=2&page=%d", path, resp.LastPage), nil, &page2)
		if len(page2) == 0 || page2[0]["id"] == page1[0]["id"] {
			t.Fatalf("%s last page: %v", path, page2)
		}

		// 304 for an unchanged list; a change gives a new body.
		resp = c.want(http.StatusOK, "GET", path, nil, nil)
		etag := resp.Header.Get("ETag")
		if etag == "" {
			t.Fatalf("%s: no ETag", path)
		}
		c.want(http.StatusNotModified, "GET", path, nil, nil, "If-None-Match", etag)
	}
	resp := c.want(http.StatusOK, "GET", "authorizations", nil, nil)
	etag := resp.Header.Get("ETag")
	var a authorization
	c.want(http.StatusCreated, "POST", "authorizations", createBody{Note: "later"}, &a)
	c.want(http.StatusOK, "GET", "authorizations", nil, nil, "If-None-Match", etag)

	resp = c.want(http.StatusOK, "GET", "authorizations/"+fmt.Sprint(a.ID), nil, nil)
	c.want(http.StatusNotModified, "GET", "authorizations/"+fmt.Sprint(a.ID), nil, nil, "If-None-Match", resp.Header.Get("ETag"))
	c.wantError(http.StatusUnprocessableEntity, "GET", "authorizations?per_page=many", nil)
}

func TestOnlyBasicWithPasswordIsAccepted(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	user := newUser(t, env, "octocat", apptest.UserOpts{Password: password})
	org := env.Org("acme", user)
	c := oauthBasic(t, env, "octocat", password, "")
	var a authorization
	c.want(http.StatusCreated, "POST", "authorizations", createBody{Note: "mine", Scopes: []string{"repo", "user"}}, &a)

	classic := env.Token(user, "repo", "user")
	tokens := map[string]string{
		"classic":      classic,
		"oauth":        a.Token,
		"fine-grained": env.FineGrainedToken(user, user, apptest.AllRepos, "contents:read"),
		"app user":     env.AppUserToken(user, user, apptest.AllRepos, "contents:read"),
		"installation": env.InstallationToken(org, apptest.AllRepos, "contents:read"),
	}
	endpoints := []struct{ method, path string }{
		{"GET", "applications/grants"}, {"GET", "applications/grants/1"}, {"DELETE", "applications/grants/1"},
		{"GET", "authorizations"}, {"POST", "authorizations"}, {"PUT", "authorizations/clients/Iv1.0000000000000000"},
		{"PUT", "authorizations/clients/Iv1.0000000000000000/fp"}, {"GET", "authorizations/" + fmt.Sprint(a.ID)},
		{"PATCH", "authorizations/" + fmt.Sprint(a.ID)}, {"DELETE", "authorizations/" + fmt.Sprint(a.ID)},
	}
	for kind, token := range tokens {
		for _, e := range endpoints {
			er := bearer(t, env, token).wantError(http.StatusUnauthorized, e.method, e.path, map[string]any{})
			if !strings.Contains(er.Message, "Basic") || !strings.Contains(er.Message, "password") {
				t.Fatalf("%s token on %s %s: message %q does not say Basic with a password is required", kind, e.method, e.path, er.Message)
			}
		}
	}
	// Basic with a token as the password is refused the same way.
	er := oauthBasic(t, env, "octocat", classic, "").wantError(http.StatusUnauthorized, "GET", "authorizations", nil)
	if !strings.Contains(er.Message, "Basic") {
		t.Fatalf("Basic with a token: %q", er.Message)
	}
	oauthBasic(t, env, "octocat", "wrong password", "").wantError(http.StatusUnauthorized, "GET", "authorizations", nil)
	bearer(t, env, "").wantError(http.StatusUnauthorized, "GET", "authorizations", nil)

	// None of those calls changed anything.
	wantScopes(t, env, a.Token, "repo", "user")
}

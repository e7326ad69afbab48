package e2e_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"forgeapi/internal/apptest"
	"forgeapi/internal/oauth"
)

// TestAuthorizationFieldLimits: a note, note_url or fingerprint over its
// limit is a 422 naming the field and the limit on every endpoint that
// stores them (the fingerprint of endpoint 7 comes from its path); values
// of exactly the limits are stored.
func TestAuthorizationFieldLimits(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	newUser(t, env, "octocat", apptest.UserOpts{Password: password})
	owner := newUser(t, env, "owner")
	ci := newApp(t, env, owner, "CI")
	auth := basicHeader("octocat", password)
	send := func(method, path string, body any) (*http.Response, []byte) {
		t.Helper()
		b, err := json.Marshal(body)
		apptest.Must(t, "encode", err)
		return env.DoJSON(method, path, "", string(b), "Authorization", auth)
	}

	resp, body := send("POST", "/authorizations", map[string]string{"note": "mine"})
	var personal struct {
		ID int64 `json:"id"`
	}
	if resp.StatusCode != http.StatusCreated || json.Unmarshal(body, &personal) != nil {
		t.Fatalf("create: %d %s", resp.StatusCode, body)
	}
	patch := fmt.Sprintf("/authorizations/%d", personal.ID)
	put := "/authorizations/clients/" + ci.ClientID
	for _, c := range []struct {
		field string
		max   int
	}{{"note", oauth.MaxNoteLength}, {"note_url", oauth.MaxNoteURLLength}, {"fingerprint", oauth.MaxFingerprintLength}} {
		long := strings.Repeat("x", c.max+1)
		for _, r := range []struct {
			method, path string
			body         map[string]string
		}{
			{"POST", "/authorizations", map[string]string{"note": "n", c.field: long}},
			{"PUT", put, map[string]string{"client_secret": ci.ClientSecret, c.field: long}},
			{"PATCH", patch, map[string]string{c.field: long}},
		} {
			resp, body := send(r.method, r.path, r.body)
			apptest.WantTooLong(t, r.method+" "+r.path+" with a long "+c.field, resp, body, "OauthAccess", c.field, c.max)
		}
	}
	resp, body = send("PUT", put+"/"+strings.Repeat("f", oauth.MaxFingerprintLength+1), map[string]string{"client_secret": ci.ClientSecret})
	apptest.WantTooLong(t, "a long fingerprint in the path", resp, body, "OauthAccess", "fingerprint", oauth.MaxFingerprintLength)

	atLimit := map[string]string{
		"note":        strings.Repeat("ü", oauth.MaxNoteLength), // characters, not bytes
		"note_url":    "https://example.com/" + strings.Repeat("u", oauth.MaxNoteURLLength-len("https://example.com/")),
		"fingerprint": strings.Repeat("f", oauth.MaxFingerprintLength),
	}
	resp, body = send("PATCH", patch, atLimit)
	var got map[string]any
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &got) != nil ||
		got["note"] != atLimit["note"] || got["note_url"] != atLimit["note_url"] || got["fingerprint"] != atLimit["fingerprint"] {
		t.Fatalf("update with every field at its limit: %d %.300s", resp.StatusCode, body)
	}
}

package e2e_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apptest"
)

// encode returns v as JSON.
func encode(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	apptest.Must(t, "encode", err)
	return string(b)
}

// chars is a string of n characters (code points), each 2 bytes in
// UTF-8: a limit counted in bytes would refuse it.
func chars(n int) string { return strings.Repeat("é", n) }

// emailOf is an email address of exactly n characters.
func emailOf(n int) string {
	const domain = "@example.com"
	return chars(n-len(domain)) + domain
}

// wantFields checks that a 200 JSON answer holds want's fields as sent.
func wantFields(t *testing.T, what string, resp *http.Response, body []byte, want map[string]string) {
	t.Helper()
	var got map[string]any
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &got) != nil {
		t.Fatalf("%s: %d %.300s, want 200", what, resp.StatusCode, body)
	}
	for field, v := range want {
		if got[field] != v {
			t.Errorf("%s: %s is %.80q, want the %d characters sent", what, field, got[field], len([]rune(v)))
		}
	}
}

// TestProfileFieldLimits: PATCH /user takes each profile field at its
// limit, counted in characters, and answers one character over it with a
// 422 naming the resource User, the field and the limit; a refused PATCH
// changes nothing.
func TestProfileFieldLimits(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo := env.User("octo")
	token := env.Token(octo, "user")

	limits := map[string]int{
		"name": accounts.MaxNameLength, "email": accounts.MaxProfileLength, "blog": accounts.MaxProfileLength,
		"twitter_username": accounts.MaxTwitterLength, "company": accounts.MaxProfileLength,
		"location": accounts.MaxProfileLength, "bio": accounts.MaxBioLength,
	}
	for field, max := range limits {
		over := chars(max + 1)
		if field == "email" {
			over = emailOf(max + 1)
		}
		resp, body := env.DoJSON("PATCH", "/user", token, encode(t, map[string]string{field: over}))
		apptest.WantTooLong(t, "PATCH /user with a long "+field, resp, body, "User", field, max)
	}
	resp, body := env.DoJSON("GET", "/user", token, "")
	if resp.StatusCode != http.StatusOK || strings.Contains(string(body), "éé") {
		t.Fatalf("the user after the refused PATCHes: %d %.300s, want them to change nothing", resp.StatusCode, body)
	}

	// The public email must be one of the user's addresses: add one of
	// exactly the limit first (which also tests POST /user/emails at it).
	atLimit := map[string]string{}
	for field, max := range limits {
		atLimit[field] = chars(max)
	}
	atLimit["email"] = emailOf(accounts.MaxProfileLength)
	resp, body = env.DoJSON("POST", "/user/emails", token, encode(t, map[string][]string{"emails": {atLimit["email"]}}))
	if resp.StatusCode != http.StatusCreated || !strings.Contains(string(body), atLimit["email"]) {
		t.Fatalf("POST /user/emails with an address of %d characters: %d %.300s", accounts.MaxProfileLength, resp.StatusCode, body)
	}
	resp, body = env.DoJSON("PATCH", "/user", token, encode(t, atLimit))
	wantFields(t, "PATCH /user with every field at its limit", resp, body, atLimit)
	resp, body = env.DoJSON("GET", "/user", token, "")
	wantFields(t, "GET /user after it", resp, body, atLimit)
}

// TestOrganizationFieldLimits: PATCH /orgs/{org} takes each field at its
// limit, counted in characters, and answers one character over it with a
// 422 naming the resource Organization, the field and the limit.
func TestOrganizationFieldLimits(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo := env.User("octo")
	env.Org("acme", octo)
	token := env.Token(octo, "admin:org")

	limits := map[string]int{
		"name": accounts.MaxNameLength, "email": accounts.MaxProfileLength, "blog": accounts.MaxProfileLength,
		"twitter_username": accounts.MaxTwitterLength, "company": accounts.MaxProfileLength,
		"location": accounts.MaxProfileLength, "description": accounts.MaxOrgDescriptionLen,
		"billing_email": accounts.MaxProfileLength,
	}
	atLimit := map[string]string{}
	for field, max := range limits {
		over, at := chars(max+1), chars(max)
		if strings.HasSuffix(field, "email") {
			over, at = emailOf(max+1), emailOf(max)
		}
		atLimit[field] = at
		resp, body := env.DoJSON("PATCH", "/orgs/acme", token, encode(t, map[string]string{field: over}))
		apptest.WantTooLong(t, "PATCH /orgs/acme with a long "+field, resp, body, "Organization", field, max)
	}
	resp, body := env.DoJSON("PATCH", "/orgs/acme", token, encode(t, atLimit))
	wantFields(t, "PATCH /orgs/acme with every field at its limit", resp, body, atLimit)
	resp, body = env.DoJSON("GET", "/orgs/acme", token, "")
	wantFields(t, "GET /orgs/acme after it", resp, body, atLimit)
}

// TestEmailLengthLimit: POST /user/emails takes an address of
// accounts.MaxEmailLength characters and answers one character longer
// with a 422 naming the resource UserEmail, the field email and the
// limit, adding none of the addresses sent with it.
func TestEmailLengthLimit(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo := env.User("octo")
	token := env.Token(octo, "user")

	over := emailOf(accounts.MaxEmailLength + 1)
	for _, body := range []string{
		encode(t, map[string][]string{"emails": {"fine@example.com", over}}),
		encode(t, []string{over}),
		encode(t, over),
	} {
		resp, b := env.DoJSON("POST", "/user/emails", token, body)
		apptest.WantTooLong(t, "POST /user/emails with a long address", resp, b, "UserEmail", "email", accounts.MaxEmailLength)
	}
	resp, body := env.DoJSON("GET", "/user/emails", token, "")
	if resp.StatusCode != http.StatusOK || strings.TrimSpace(string(body)) != "[]" {
		t.Fatalf("addresses after the refused POSTs: %d %.300s, want none", resp.StatusCode, body)
	}

	at := emailOf(accounts.MaxEmailLength)
	resp, body = env.DoJSON("POST", "/user/emails", token, encode(t, []string{at}))
	var added []struct {
		Email string `json:"email"`
	}
	if resp.StatusCode != http.StatusCreated || json.Unmarshal(body, &added) != nil || len(added) != 1 || added[0].Email != at {
		t.Fatalf("POST /user/emails with an address of exactly the limit: %d %.300s", resp.StatusCode, body)
	}
}

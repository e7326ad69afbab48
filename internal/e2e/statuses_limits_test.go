package e2e_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"forgeapi/internal/apptest"
	"forgeapi/internal/statuses"
)

// TestStatusFieldLimits: POST .../statuses/{sha} takes a context,
// description and target_url of exactly their limits (counted in
// characters, not bytes) and stores them as sent; one character over a
// limit is a 422 naming the resource Status, the field and the limit,
// and stores nothing.
func TestStatusFieldLimits(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo := env.User("octo")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo")
	work := apptest.WorkTree(t, map[string]string{"a.txt": "1\n"})
	sha := strings.TrimSpace(apptest.Git(t, work, "rev-parse", "HEAD"))
	apptest.Git(t, work, "push", "-q", env.GitURL("octo", "hello", "octo", token), "HEAD:refs/heads/main")
	path := "/repos/octo/hello/statuses/" + sha

	chars := func(n int) string { return strings.Repeat("é", n) } // 2 bytes a character
	urlOf := func(n int) string {                                 // an https URL of n characters
		const prefix = "https://ci.example/"
		return prefix + strings.Repeat("p", n-len(prefix))
	}
	encode := func(v map[string]string) string {
		b, err := json.Marshal(v)
		apptest.Must(t, "encode", err)
		return string(b)
	}
	for _, c := range []struct {
		field, value string
		max          int
	}{
		{"context", chars(statuses.MaxContextLength + 1), statuses.MaxContextLength},
		{"description", chars(statuses.MaxDescriptionLen + 1), statuses.MaxDescriptionLen},
		{"target_url", urlOf(statuses.MaxTargetURLLength + 1), statuses.MaxTargetURLLength},
	} {
		resp, body := env.DoJSON("POST", path, token, encode(map[string]string{"state": "success", c.field: c.value}))
		apptest.WantTooLong(t, "a status with a long "+c.field, resp, body, "Status", c.field, c.max)
	}

	atLimit := map[string]string{
		"context":     chars(statuses.MaxContextLength),
		"description": chars(statuses.MaxDescriptionLen),
		"target_url":  urlOf(statuses.MaxTargetURLLength),
	}
	sent := map[string]string{"state": "success"}
	for k, v := range atLimit {
		sent[k] = v
	}
	resp, body := env.DoJSON("POST", path, token, encode(sent))
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("a status with every field at its limit: %d %.300s", resp.StatusCode, body)
	}
	resp, body = env.DoJSON("GET", "/repos/octo/hello/commits/"+sha+"/statuses", token, "")
	var stored []map[string]any
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &stored) != nil || len(stored) != 1 {
		t.Fatalf("the commit's statuses: %d %.300s, want the one at the limits only", resp.StatusCode, body)
	}
	for field, v := range atLimit {
		if stored[0][field] != v {
			t.Errorf("stored %s is %.80q, want the %d characters sent", field, stored[0][field], len([]rune(v)))
		}
	}
}

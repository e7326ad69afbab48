package repos_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"forgeapi/internal/apptest"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
)

// jsonBody encodes v.
func jsonBody(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	apptest.Must(t, "encode", err)
	return string(b)
}

// TestRepositoryFieldLimits: a name, description or default branch over
// its limit is a 422 naming the field and the limit, on create and on
// update; a value of exactly the limit (counted in characters, not
// bytes) is stored.
func TestRepositoryFieldLimits(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	alice := env.User("alice")
	token := env.Token(alice, "repo")
	env.Repo(alice, "widgets")

	longest := strings.Repeat("é", repos.MaxDescriptionLength) // 2 bytes a character
	for _, c := range []struct {
		field string
		value string
		max   int
	}{
		{"name", strings.Repeat("n", repos.MaxNameLength+1), repos.MaxNameLength},
		{"description", longest + "x", repos.MaxDescriptionLength},
		{"default_branch", strings.Repeat("b", repos.MaxDefaultBranchLength+1), repos.MaxDefaultBranchLength},
	} {
		create := map[string]string{"name": "fresh", c.field: c.value}
		resp, body := env.DoJSON("POST", "/user/repos", token, jsonBody(t, create))
		apptest.WantTooLong(t, "create with a long "+c.field, resp, body, "Repository", c.field, c.max)
		resp, body = env.DoJSON("PATCH", "/repos/alice/widgets", token, jsonBody(t, map[string]string{c.field: c.value}))
		apptest.WantTooLong(t, "update with a long "+c.field, resp, body, "Repository", c.field, c.max)
	}

	maxName := strings.Repeat("n", repos.MaxNameLength)
	// The longest branch name, in components git can store as files.
	maxBranch := strings.Repeat("b", 200) + "/" + strings.Repeat("b", repos.MaxDefaultBranchLength-201)
	resp, body := env.DoJSON("POST", "/user/repos", token, jsonBody(t, map[string]string{
		"name": maxName, "description": longest, "default_branch": maxBranch}))
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create with every field at its limit: %d %.300s", resp.StatusCode, body)
	}
	resp, body = env.DoJSON("PATCH", "/repos/alice/widgets", token, jsonBody(t, map[string]string{"description": longest}))
	var got struct {
		Description string `json:"description"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &got) != nil || got.Description != longest {
		t.Fatalf("update with a description at its limit: %d %.300s", resp.StatusCode, body)
	}
}

// TestRepositoryBodyLimit: a PATCH body over 1 MiB is a JSON 413, with
// or without a Content-Length, and changes nothing.
func TestRepositoryBodyLimit(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	alice := env.User("alice")
	token := env.Token(alice, "repo")
	env.Repo(alice, "widgets", apptest.RepoOpts{Description: "kept"})
	huge := jsonBody(t, map[string]string{"description": strings.Repeat("x", httpapi.DefaultMaxBody)})

	for _, chunked := range []bool{false, true} {
		var r io.Reader = strings.NewReader(huge)
		if chunked {
			r = io.MultiReader(r) // a reader of unknown length: sent chunked
		}
		resp, body := env.Do("PATCH", "/repos/alice/widgets", token, r, "Content-Type", "application/json")
		var e struct {
			Message          string `json:"message"`
			DocumentationURL string `json:"documentation_url"`
		}
		if resp.StatusCode != http.StatusRequestEntityTooLarge || json.Unmarshal(body, &e) != nil ||
			!strings.Contains(e.Message, "1 MiB") || e.DocumentationURL == "" {
			t.Errorf("chunked=%v: %d %.300s, want a JSON 413", chunked, resp.StatusCode, body)
		}
	}
	resp, body := env.Do("GET", "/repos/alice/widgets", token, nil)
	if !strings.Contains(string(body), `"description":"kept"`) {
		t.Errorf("the refused PATCH changed the repository: %d %.300s", resp.StatusCode, body)
	}
}

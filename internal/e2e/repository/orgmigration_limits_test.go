package repository_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"forgeapi/internal/apptest"
	"forgeapi/internal/orgmigration"
)

// TestRepositoriesEntryLimit: an entry of repositories longer than any
// "org/name" can be is a 422 naming its index and the limit; an entry of
// the longest form is resolved as usual.
func TestRepositoriesEntryLimit(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	name := strings.Repeat("r", 100)
	f.env.Repo(f.org, name)
	long := strings.Repeat("x", orgmigration.MaxRepositoryNameLength+1)
	body, err := json.Marshal(map[string]any{"repositories": []string{name, long}})
	apptest.Must(t, "encode", err)
	resp, b := f.env.DoJSON("POST", f.path("/migrations"), f.token, string(body))
	apptest.WantTooLong(t, "a long entry", resp, b, "Migration", "repositories[1]", orgmigration.MaxRepositoryNameLength)

	body, err = json.Marshal(map[string]any{"repositories": []string{f.org.Login + "/" + name}})
	apptest.Must(t, "encode", err)
	if resp, b := f.env.DoJSON("POST", f.path("/migrations"), f.token, string(body)); resp.StatusCode != http.StatusCreated {
		t.Fatalf("org/name with a 100-character name: %d %s", resp.StatusCode, b)
	}
}

package access

import (
	"net/http/httptest"
	"testing"

	"forgeapi/internal/accounts"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
)

// TestMovedLocation: the redirect of a renamed repository's old name is
// the request's path and query with the new full name, on the base URL's
// scheme and host and under its path prefix (/api/v3 or any other).
func TestMovedLocation(t *testing.T) {
	t.Parallel()
	repo := &repos.Repository{Owner: &accounts.Account{Login: "octo"}, Name: "world"}
	for _, c := range []struct{ base, path, want string }{
		{"http://127.0.0.1:8080", "/repos/octo/hello?per_page=5", "http://127.0.0.1:8080/repos/octo/world?per_page=5"},
		{"https://forge.example/api/v3", "/repos/octo/hello/hooks", "https://forge.example/api/v3/repos/octo/world/hooks"},
		{"https://forge.example/forge/api/v3/", "/networks/octo/hello/events", "https://forge.example/forge/api/v3/networks/octo/world/events"},
		{"https://forge.example/prefix", "/repos/octo/hello", "https://forge.example/prefix/repos/octo/world"},
	} {
		r := httptest.NewRequest("GET", c.path, nil)
		r = r.WithContext(httpapi.WithBaseURL(r.Context(), c.base))
		if got := movedLocation(r, "octo", "hello", repo); got != c.want {
			t.Errorf("base %s, %s: Location %s, want %s", c.base, c.path, got, c.want)
		}
	}
}

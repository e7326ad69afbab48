package e2e_test

import (
	"testing"

	"forgeapi/docs"
	"forgeapi/internal/oauth"
)

// TestPersonalAppURL: a personal authorization's app url is the
// documentation page on the web root, also when the API base URL ends in
// /api/v3 (the documentation is not served under it).
func TestPersonalAppURL(t *testing.T) {
	t.Parallel()
	for base, want := range map[string]string{
		"http://127.0.0.1:8080":        "http://127.0.0.1:8080/docs/" + docs.OAuth,
		"https://forge.example/api/v3": "https://forge.example/docs/" + docs.OAuth,
	} {
		if got := oauth.PersonalAppURL(base); got != want {
			t.Errorf("PersonalAppURL(%s) = %s, want %s", base, got, want)
		}
	}
}

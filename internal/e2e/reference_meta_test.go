package e2e_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"forgeapi/internal/apptest"
	"forgeapi/internal/reference"
)

// TestZenAndOctocat reads GET /zen and GET /octocat through go-github: a
// principle of the platform's zen as text, and the octocat saying the
// message (or a principle), as application/octocat-stream; a saying over
// the limit is a 422.
func TestZenAndOctocat(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	c := env.Client("")
	zen, resp, err := c.Meta.Zen(ctx)
	apptest.Must(t, "zen", err)
	if !slices.Contains(reference.Zen, zen) || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("zen %q (%s)", zen, resp.Header.Get("Content-Type"))
	}
	cat, resp, err := c.Meta.Octocat(ctx, "Hello, forge")
	apptest.Must(t, "octocat", err)
	if !strings.Contains(cat, "| Hello, forge |") || resp.Header.Get("Content-Type") != "application/octocat-stream" {
		t.Fatalf("octocat %q (%s)", cat, resp.Header.Get("Content-Type"))
	}
	cat, _, err = c.Meta.Octocat(ctx, "")
	apptest.Must(t, "octocat without a message", err)
	if !slices.ContainsFunc(reference.Zen, func(z string) bool { return strings.Contains(cat, "| "+z+" |") }) {
		t.Fatalf("octocat without a message says %q", cat)
	}
	if resp, b := env.Do("GET", "/octocat?s="+strings.Repeat("x", 1001), "", nil); resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("a long saying: %d %s", resp.StatusCode, b)
	}
}

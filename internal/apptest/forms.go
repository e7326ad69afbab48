package apptest

import (
	"strings"
	"testing"
)

// CSRFToken returns the authenticity_token of the first form of a page
// (the console's and the web pages' forms carry one); a page without one
// fails the test.
func CSRFToken(t testing.TB, page string) string {
	t.Helper()
	const marker = `name="authenticity_token" value="`
	i := strings.Index(page, marker)
	if i < 0 {
		t.Fatalf("no CSRF token in the page:\n%s", page)
	}
	rest := page[i+len(marker):]
	return rest[:strings.IndexByte(rest, '"')]
}

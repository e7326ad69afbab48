package webhooks

import (
	"slices"
	"strings"
	"testing"
)

// An outbox's hook list reads back as written, and a damaged entry is
// skipped rather than failing the sweep.
func TestHookList(t *testing.T) {
	ids := []int64{7, 12, 9_000_000_001}
	if got := parseHookList(hookList(ids)); !slices.Equal(got, ids) {
		t.Errorf("round trip of %v: %v", ids, got)
	}
	if got := parseHookList("3,x,,4"); !slices.Equal(got, []int64{3, 4}) {
		t.Errorf(`parseHookList("3,x,,4") = %v, want [3 4]`, got)
	}
	if got := hookList(nil); got != "" {
		t.Errorf("hookList(nil) = %q", got)
	}
	// Each row of the outcome INSERT has its 18 parameters and two constants.
	q := insertOutcomeQueries[1]
	if !strings.Contains(q, "($1, $2,") || !strings.Contains(q, "$18, 1, 'done'), ($19,") || !strings.HasSuffix(q, "$36, 1, 'done')") {
		t.Errorf("two-row outcome INSERT: %s", q)
	}
}

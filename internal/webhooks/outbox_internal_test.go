package webhooks

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"forgeapi/internal/store"
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

// TestExistingHooksLooksUpEveryHook: the recorder's check of which hooks
// still exist answers for every hook of a batch, more than one lookup
// holds included, and only the existing ones are marked.
func TestExistingHooksLooksUpEveryHook(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, "", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	now := time.Now()
	var existing []int64
	for range hooksPerLookup + 9 {
		var id int64
		if err := db.QueryRowContext(ctx, `INSERT INTO hooks (events, url, created_at, updated_at) VALUES ('[]', 'http://x', $1, $1) RETURNING id`,
			now).Scan(&id); err != nil {
			t.Fatal(err)
		}
		existing = append(existing, id)
	}
	gone := existing[len(existing)-1] + 100
	var outcomes []*outcome
	for _, id := range append(slices.Clone(existing), gone) {
		for range 2 {
			o := &outcome{}
			o.HookID = id
			outcomes = append(outcomes, o)
		}
	}
	var got map[int64]bool
	if err := db.Tx(ctx, func(tx store.Q) error {
		got, err = existingHooks(ctx, tx, outcomes)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for _, id := range existing {
		if !got[id] {
			t.Errorf("hook %d exists, reported gone", id)
		}
	}
	if v, ok := got[gone]; !ok || v || len(got) != len(existing)+1 {
		t.Errorf("existing hooks = %v, want %d hooks and %d reported gone", got, len(existing)+1, gone)
	}
}

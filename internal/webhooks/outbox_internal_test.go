package webhooks

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"forgeapi/internal/store"
	"forgeapi/internal/store/storetest"
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
	// Each row of the outcome INSERT has its 19 parameters and two constants.
	q := insertOutcomeQueries[1]
	if !strings.Contains(q, "($1, $2,") || !strings.Contains(q, "$19, 1, 'done'), ($20,") || !strings.HasSuffix(q, "$38, 1, 'done')") {
		t.Errorf("two-row outcome INSERT: %s", q)
	}
}

// TestExistingHooksLooksUpEveryHook: the recorder's check of which hooks
// still exist answers for every hook of a batch, more than one lookup
// holds included, and only the existing ones are marked.
func TestExistingHooksLooksUpEveryHook(t *testing.T) {
	ctx := context.Background()
	db := openSQLite(t)
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
	if err := db.Tx(ctx, func(tx *store.Tx) error {
		var err error
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

// TestHoldOutboxes: the recorder's hold of the outboxes of the payloads
// it writes deletes those whose last unwritten deliveries it writes and
// keeps the others, and holds none that another dispatcher owns or that
// is gone.
func TestHoldOutboxes(t *testing.T) {
	ctx := context.Background()
	db := openSQLite(t)
	now := time.Now()
	s := NewService(db, nil, Config{}, func() time.Time { return now }, nil)
	const mine, theirs = "dispatcher-a", "dispatcher-b"
	counts := map[int64]int{}
	want := map[int64]bool{}
	var last, partial, foreign []int64
	for i := range 2*hooksPerLookup + 5 {
		owner := mine
		if i%7 == 3 {
			owner = theirs
		}
		id, err := insertPayload(ctx, db, payload{GUID: "g", Event: "push", Body: []byte("{}"), CreatedAt: now,
			Outbox: &outbox{HookIDs: []int64{1, 2}, Owner: owner, Until: now.Add(time.Minute)}})
		if err != nil {
			t.Fatal(err)
		}
		var items []handed
		for range 2 {
			items = append(items, handed{claimed: claimed{PayloadID: id}})
		}
		s.handoff.hold(items)
		counts[id] = 2 // both of its deliveries: the outbox goes
		if i%3 == 0 {
			counts[id] = 1 // one of two: the outbox stays, held
			partial = append(partial, id)
		}
		switch {
		case owner == theirs:
			foreign = append(foreign, id)
		case counts[id] == 2:
			last = append(last, id)
			want[id] = true
		default:
			want[id] = true
		}
	}
	counts[last[len(last)-1]+1000] = 1 // no outbox at all
	var held map[int64]bool
	if err := db.Tx(ctx, func(tx *store.Tx) error {
		var err error
		held, err = s.holdOutboxes(ctx, tx, mine, counts)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for id := range counts {
		if held[id] != want[id] {
			t.Errorf("payload %d: held %v, want %v", id, held[id], want[id])
		}
	}
	left := map[int64]bool{}
	if err := scanIDs(ctx, db, `SELECT payload_id FROM hook_outboxes`, nil, func(id int64) { left[id] = true }); err != nil {
		t.Fatal(err)
	}
	for _, id := range last {
		if left[id] {
			t.Errorf("outbox %d, all of whose deliveries were written, is left", id)
		}
	}
	for _, id := range append(partial, foreign...) {
		if !left[id] {
			t.Errorf("outbox %d (deliveries left unwritten, or another dispatcher's) was deleted", id)
		}
	}
}

// openSQLite opens a new SQLite store in a temporary directory, closed
// when the test ends.
func openSQLite(t *testing.T) *store.DB {
	t.Helper()
	return storetest.OpenSQLite(t)
}

package webhooks

import (
	"context"
	"testing"
	"time"

	"forgeapi/internal/events"
	"forgeapi/internal/store"
)

// TestEventDeliveriesWaitInTheOutbox: an event's transaction writes no
// delivery row. With no dispatcher caught up to hand them to, its outbox
// lists the hooks with a lease that has ended, for a claim behind the
// backlog; with one, the outbox is leased to it and the deliveries handed
// over when the transaction commits.
func TestEventDeliveriesWaitInTheOutbox(t *testing.T) {
	ctx := context.Background()
	db := openSQLite(t)
	t0 := time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC)
	s := NewService(db, nil, Config{}, func() time.Time { return t0 }, nil)
	enqueue := func() int {
		t.Helper()
		var waiting int
		err := db.Tx(ctx, func(tx *store.Tx) error {
			var err error
			waiting, err = s.enqueueHookDeliveries(ctx, tx, &events.Event{HookEvent: "repository", CreatedAt: t0},
				map[string]any{"action": "edited"}, []*Hook{{ID: 7, URL: "http://a"}, {ID: 9, URL: "http://b"}})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return waiting
	}
	outbox := func() (owner, hooks string, until time.Time) {
		t.Helper()
		err := db.QueryRowContext(ctx, `SELECT owner, hooks, lease_until FROM hook_outboxes ORDER BY payload_id DESC LIMIT 1`).
			Scan(&owner, &hooks, &until)
		if err != nil {
			t.Fatal(err)
		}
		return owner, hooks, until
	}

	if n := enqueue(); n != 2 {
		t.Errorf("with no dispatcher %d deliveries wait for a claim, want 2", n)
	}
	if owner, hooks, until := outbox(); owner != "" || hooks != "7,9" || until.After(t0) {
		t.Errorf("with no dispatcher the outbox is %q leased to %q until %v, want 7,9 with its lease ended", hooks, owner, until)
	}

	s.handoff.attach("dispatcher", time.Minute)
	s.handoff.setOpen(true)
	if n := enqueue(); n != 0 {
		t.Errorf("handed over, %d deliveries wait for a claim, want none", n)
	}
	if owner, hooks, until := outbox(); owner != "dispatcher" || hooks != "7,9" || !until.Equal(t0.Add(time.Minute)) {
		t.Errorf("handed over, the outbox is %q leased to %q until %v, want 7,9 leased to the dispatcher for a minute", hooks, owner, until)
	}
	if got := len(s.handoff.take()); got != 2 {
		t.Errorf("%d deliveries handed over, want 2", got)
	}
	var rows int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM hook_deliveries`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 0 {
		t.Errorf("the events' transactions wrote %d delivery rows, want none", rows)
	}
}

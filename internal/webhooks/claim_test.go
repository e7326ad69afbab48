package webhooks_test

import (
	"context"
	"database/sql"
	"slices"
	"sync"
	"testing"
	"time"

	"forgeapi/internal/apptest"
	"forgeapi/internal/store"
	"forgeapi/internal/webhooks"
	"forgeapi/internal/webhooks/hookshot"
)

// testClock is a settable clock for a Service.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *testClock) Set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.now = t }

// TestClaimLoopWakesForEveryLaterDueTime: after each claim the loop
// knows when the next pending delivery comes due, however many due times
// lie ahead, and a lease's end is one of them. The loop once remembered
// only the earliest time it had put back, so deliveries due after it
// waited for the 1 s poll.
func TestClaimLoopWakesForEveryLaterDueTime(t *testing.T) {
	ctx := context.Background()
	db := openTestStore(t)
	t0 := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	clock := &testClock{now: t0}
	svc := webhooks.NewService(db, nil, webhooks.Config{}, clock.Now, nil)
	hookID, payloadID, err := insertDeletedHookAndPayload(ctx, db, t0)
	if err != nil {
		t.Fatal(err)
	}
	due := map[int64]time.Time{}
	for _, at := range []time.Time{ms(100), ms(200), ms(300)} {
		var id int64
		if err := db.QueryRowContext(ctx, `INSERT INTO hook_deliveries (hook_id, payload_id, guid, event, due_at, created_at)
			VALUES ($1, $2, 'g', 'push', $3, $4) RETURNING id`, hookID, payloadID, at, t0).Scan(&id); err != nil {
			t.Fatal(err)
		}
		due[id] = at
	}
	d := webhooks.NewDispatcher(svc)
	lease := hookshot.DefaultTimeout + 10*time.Second
	steps := []struct {
		at       time.Time
		wantSent []time.Time // due times of the deliveries sent
		wantNext time.Time
	}{
		{ms(0), nil, ms(100)},
		{ms(150), []time.Time{ms(100)}, ms(200)},
		{ms(250), []time.Time{ms(200)}, ms(300)},
		{ms(350), []time.Time{ms(300)}, ms(150).Add(lease)}, // unrecorded, the first is due again when its lease ends
	}
	for _, s := range steps {
		clock.Set(s.at)
		sent, next := d.ClaimDue(ctx)
		var sentDue []time.Time
		for _, id := range sent {
			sentDue = append(sentDue, due[id])
		}
		if !slices.EqualFunc(sentDue, s.wantSent, time.Time.Equal) || !next.Equal(s.wantNext) {
			t.Errorf("claim at %v: sent deliveries due %v, next claim at %v; want %v and %v",
				s.at.Sub(t0), sentDue, next.Sub(t0), s.wantSent, s.wantNext.Sub(t0))
		}
	}
}

// TestRecordWritesOnlyTheDeliveriesStillLeased records a batch of 75
// outcomes (UPDATEs of 32, 32 and 11 rows) after another claimer took
// over some of the deliveries: those are left as the other claimer has
// them, every other one is logged done, at the recorder's time.
func TestRecordWritesOnlyTheDeliveriesStillLeased(t *testing.T) {
	ctx := context.Background()
	db := openTestStore(t)
	t0 := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	svc := webhooks.NewService(db, nil, webhooks.Config{}, func() time.Time { return t0.Add(time.Second) }, nil)
	const hooks, perHook, n = 5, 15, 75 // a hook takes up to 32 deliveries per claim
	for range hooks {
		hookID, payloadID, err := insertDeletedHookAndPayload(ctx, db, t0)
		if err != nil {
			t.Fatal(err)
		}
		for range perHook {
			if _, err := db.ExecContext(ctx, `INSERT INTO hook_deliveries (hook_id, payload_id, guid, event, due_at, created_at)
				VALUES ($1, $2, 'g', 'push', $3, $3)`, hookID, payloadID, t0); err != nil {
				t.Fatal(err)
			}
		}
	}
	sent, err := webhooks.NewDispatcher(svc).ClaimDueAndRecord(ctx, func() {
		if _, err := db.ExecContext(ctx, `UPDATE hook_deliveries SET lease_owner = 'another' WHERE id % 7 = 3`); err != nil {
			t.Fatal(err)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(sent) != n {
		t.Fatalf("one claim started %d deliveries, want %d", len(sent), n)
	}
	rows, err := db.QueryContext(ctx, `SELECT id, state, lease_owner, status, delivered_at FROM hook_deliveries`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var state, owner, status string
		var at sql.NullTime
		if err := rows.Scan(&id, &state, &owner, &status, &at); err != nil {
			t.Fatal(err)
		}
		want := [4]string{"done", "", "hook deleted", t0.Add(time.Second).String()}
		if id%7 == 3 {
			want = [4]string{"pending", "another", "", "none"}
		}
		delivered := "none"
		if at.Valid {
			delivered = at.Time.UTC().String()
		}
		if got := [4]string{state, owner, status, delivered}; got != want {
			t.Errorf("delivery %d: state, lease owner, status, delivered at = %q, want %q", id, got, want)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}

// openTestStore opens a store of its own for the test (on PostgreSQL
// when the suite runs there), closed when the test ends.
func openTestStore(t *testing.T) *store.DB {
	t.Helper()
	db := apptest.OpenStore(t)
	return db
}

// insertDeletedHookAndPayload writes a hook deleted at t0 and a push
// payload. A deleted hook's deliveries are recorded as not sent, with no
// request, so a test of the dispatcher needs no receiver.
func insertDeletedHookAndPayload(ctx context.Context, q store.Q, t0 time.Time) (hookID, payloadID int64, err error) {
	if err := q.QueryRowContext(ctx, `INSERT INTO hooks (events, url, deleted_at, created_at, updated_at)
		VALUES ('["push"]', 'http://127.0.0.1:9/', $1, $1, $1) RETURNING id`, t0).Scan(&hookID); err != nil {
		return 0, 0, err
	}
	err = q.QueryRowContext(ctx, `INSERT INTO hook_payloads (guid, event, payload, created_at)
		VALUES ('g', 'push', '{}', $1) RETURNING id`, t0).Scan(&payloadID)
	return hookID, payloadID, err
}

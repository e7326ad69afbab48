package webhooks_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"forgeapi/internal/apptest"
	"forgeapi/internal/store"
	"forgeapi/internal/webhooks"
)

// TestEventDeliveriesAreHandedOver: a caught-up dispatcher gets an
// event's deliveries from the transaction that wrote them, claims none
// of them from the table, and logs each as delivered once.
func TestEventDeliveriesAreHandedOver(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, loopback)
	owner := env.User("octo")
	env.Repo(owner, "widgets")
	token := env.Token(owner, "repo", "admin:repo_hook")
	client := env.Client(token)
	rc := newReceiver(t, "")
	hook := hookOn(t, client, "octo", "widgets", rc.URL(), "json", "", "repository")
	loggedDeliveries(t, client, "octo", "widgets", hook.GetID(), 1) // the ping, claimed
	handed0, claimed0 := env.App.Webhooks.DispatchCounts()
	const events = 20
	for i := range events {
		editDescription(t, env, token, "octo/widgets", fmt.Sprintf("d%d", i))
	}
	rc.waitEvents("repository", events)
	list := loggedDeliveries(t, client, "octo", "widgets", hook.GetID(), events+1)
	handed, claimed := env.App.Webhooks.DispatchCounts()
	if handed-handed0 != events || claimed != claimed0 {
		t.Errorf("the dispatcher started %d deliveries handed over and %d claimed, want %d and 0",
			handed-handed0, claimed-claimed0, events)
	}
	for _, d := range list {
		if d.GetStatusCode() != 200 || d.GetRedelivery() {
			t.Errorf("delivery %d: %d %q redelivery %v", d.GetID(), d.GetStatusCode(), d.GetStatus(), d.GetRedelivery())
		}
	}
	if got := len(rc.events("repository")); got != events {
		t.Errorf("the receiver got %d repository events, want %d", got, events)
	}
}

// TestHandOverToAStoppedDispatcherReleasesTheDeliveries: deliveries
// written leased to a dispatcher that stops before their transaction
// commits are made due now for the next claimer, not left leased.
func TestHandOverToAStoppedDispatcherReleasesTheDeliveries(t *testing.T) {
	ctx := context.Background()
	db := openTestStore(t)
	t0 := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	svc := webhooks.NewService(db, nil, webhooks.Config{}, func() time.Time { return t0 }, nil)
	const owner = "dispatcher-that-stops"
	err := webhooks.HandOverAfterStop(ctx, svc, owner, func(tx store.Q) ([]int64, error) {
		hookID, payloadID, err := insertDeletedHookAndPayload(ctx, tx, t0)
		if err != nil {
			return nil, err
		}
		var id int64
		err = tx.QueryRowContext(ctx, `INSERT INTO hook_deliveries (hook_id, payload_id, guid, event, due_at, created_at, lease_owner, attempts)
			VALUES ($1, $2, 'g', 'push', $3, $4, $5, 1) RETURNING id`, hookID, payloadID, t0.Add(time.Minute), t0, owner).Scan(&id)
		return []int64{id}, err
	})
	if err != nil {
		t.Fatal(err)
	}
	var leaseOwner string
	var due time.Time
	if err := db.QueryRowContext(ctx, `SELECT lease_owner, due_at FROM hook_deliveries`).Scan(&leaseOwner, &due); err != nil {
		t.Fatal(err)
	}
	if leaseOwner != "" || !due.Equal(t0) {
		t.Errorf("the delivery is leased to %q, due %v; want released, due %v", leaseOwner, due, t0)
	}
}

package webhooks_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"forgeapi/internal/apptest"
	"forgeapi/internal/store"
	"forgeapi/internal/testwait"
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
	// Each delivery was written once, with its outcome, and the last of
	// each payload deleted its outbox.
	var outboxes int
	apptest.Must(t, "count outboxes", env.Q().QueryRowContext(apptest.Ctx(),
		`SELECT count(*) FROM hook_outboxes`).Scan(&outboxes))
	if outboxes != 0 {
		t.Errorf("%d payloads keep an outbox after their deliveries were logged", outboxes)
	}
}

// TestClaimOfTheOutboxADeadDispatcherLeft: a payload whose outbox lease
// ended with hooks in it (its dispatcher died after sending some) gets a
// delivery to each of those hooks that has none of it, once: the one
// already logged is not sent again.
func TestClaimOfTheOutboxADeadDispatcherLeft(t *testing.T) {
	t.Parallel()
	env, token, rc := octoWidgets(t)
	first := hookOn(t, env.Client(token), "octo", "widgets", rc.URL()+"/1", "json", "s", "repository")
	second := hookOn(t, env.Client(token), "octo", "widgets", rc.URL()+"/2", "json", "s", "repository")
	rc.waitEvents("ping", 2)
	editDescription(t, env, token, "octo/widgets", "swept")
	rc.waitEvents("repository", 2)
	ctx := apptest.Ctx()
	var payloadID int64
	testwait.For(t, "both deliveries to be logged", func() error {
		var logged int
		err := env.Q().QueryRowContext(ctx, `SELECT count(*), max(payload_id) FROM hook_deliveries WHERE event = 'repository'`).
			Scan(&logged, &payloadID)
		if err != nil || logged != 2 {
			return fmt.Errorf("%d of 2 logged (%v)", logged, err)
		}
		return nil
	})
	// As a dispatcher that died after logging the first hook's delivery
	// left it, its lease over.
	_, err := env.Q().ExecContext(ctx, `DELETE FROM hook_deliveries WHERE payload_id = $1 AND hook_id = $2`, payloadID, second.GetID())
	apptest.Must(t, "forget the second delivery", err)
	_, err = env.Q().ExecContext(ctx, `INSERT INTO hook_outboxes (payload_id, hooks, owner, lease_until) VALUES ($1, $2, 'dead', $3)`,
		payloadID, fmt.Sprintf("%d,%d", first.GetID(), second.GetID()), time.Now().Add(-time.Second))
	apptest.Must(t, "leave the outbox", err)

	rc.waitEvents("repository", 3)
	perHook := map[string]int{}
	for _, r := range rc.events("repository") {
		perHook[r.HookID]++
	}
	if perHook[strconv.FormatInt(first.GetID(), 10)] != 1 || perHook[strconv.FormatInt(second.GetID(), 10)] != 2 {
		t.Errorf("repository deliveries per hook %v, want the second hook's alone sent again", perHook)
	}
	testwait.For(t, "the payload's 2 deliveries logged and its outbox gone", func() error {
		var rows, outboxes int
		apptest.Must(t, "count", env.Q().QueryRowContext(ctx, `SELECT
			(SELECT count(*) FROM hook_deliveries WHERE payload_id = $1 AND state = 'done'),
			(SELECT count(*) FROM hook_outboxes WHERE payload_id = $1)`, payloadID).Scan(&rows, &outboxes))
		if rows != 2 || outboxes != 0 {
			return fmt.Errorf("%d deliveries logged and %d outbox left", rows, outboxes)
		}
		return nil
	})
}

// TestHandOverToAStoppedDispatcherReleasesTheDeliveries: a delivery
// handed over in its payload's outbox to a dispatcher that stops before
// the transaction commits is written due now for the next claimer, and
// the outbox cleared, not left leased.
func TestHandOverToAStoppedDispatcherReleasesTheDeliveries(t *testing.T) {
	ctx := context.Background()
	db := openTestStore(t)
	t0 := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	svc := webhooks.NewService(db, nil, webhooks.Config{}, func() time.Time { return t0 }, nil)
	const owner = "dispatcher-that-stops"
	err := webhooks.HandOverAfterStop(ctx, svc, owner, func(tx store.Q) (int64, int64, error) {
		hookID, payloadID, err := insertDeletedHookAndPayload(ctx, tx, t0)
		if err != nil {
			return 0, 0, err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO hook_outboxes (payload_id, hooks, owner, lease_until) VALUES ($1, $2, $3, $4)`,
			payloadID, strconv.FormatInt(hookID, 10), owner, t0.Add(time.Minute))
		return hookID, payloadID, err
	})
	if err != nil {
		t.Fatal(err)
	}
	var leaseOwner, state string
	var due time.Time
	if err := db.QueryRowContext(ctx, `SELECT lease_owner, state, due_at FROM hook_deliveries`).Scan(&leaseOwner, &state, &due); err != nil {
		t.Fatal(err)
	}
	if leaseOwner != "" || state != "pending" || !due.Equal(t0) {
		t.Errorf("the delivery is %s, leased to %q, due %v; want pending, released, due %v", state, leaseOwner, due, t0)
	}
	var outboxes int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM hook_outboxes`).Scan(&outboxes); err != nil {
		t.Fatal(err)
	}
	if outboxes != 0 {
		t.Errorf("%d outboxes left, want the payload's deleted", outboxes)
	}
}

// TestBacklogIsDeliveredOnce: events written while the dispatcher is
// behind (its one hook's receiver holds every request), their outboxes
// claimed and their deliveries put back while the hook is busy, reach the
// receiver once each when it answers, are logged once, and leave no
// outbox.
func TestBacklogIsDeliveredOnce(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, loopback)
	owner := env.User("octo")
	env.Repo(owner, "widgets")
	token := env.Token(owner, "repo", "admin:repo_hook")
	release := make(chan struct{})
	var mu sync.Mutex
	got := map[string]int{} // deliveries received, by GUID
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-GitHub-Event") == "ping" {
			return
		}
		<-release
		mu.Lock()
		got[r.Header.Get("X-GitHub-Delivery")]++
		mu.Unlock()
	}))
	t.Cleanup(rcv.Close)
	released := false
	t.Cleanup(func() {
		if !released {
			close(release)
		}
	})
	hookOn(t, env.Client(token), "octo", "widgets", rcv.URL, "json", "", "repository")
	const events = 120 // more than the hook's 16 sends and 16 waiting
	for i := range events {
		editDescription(t, env, token, "octo/widgets", fmt.Sprintf("d%d", i))
	}
	ctx := apptest.Ctx()
	released = true
	close(release)
	testwait.For(t, fmt.Sprintf("%d deliveries logged done, none not, no outbox left", events), func() error {
		var done, pending, outboxes int
		apptest.Must(t, "count", env.Q().QueryRowContext(ctx, `SELECT
			(SELECT count(*) FROM hook_deliveries WHERE event = 'repository' AND state = 'done'),
			(SELECT count(*) FROM hook_deliveries WHERE state <> 'done'),
			(SELECT count(*) FROM hook_outboxes)`).Scan(&done, &pending, &outboxes))
		if done != events || pending != 0 || outboxes != 0 {
			return fmt.Errorf("%d done, %d not, %d outboxes left", done, pending, outboxes)
		}
		return nil
	})
	mu.Lock()
	defer mu.Unlock()
	if len(got) != events {
		t.Errorf("the receiver got %d events, want %d", len(got), events)
	}
	for guid, n := range got {
		if n != 1 {
			t.Errorf("delivery %s received %d times", guid, n)
		}
	}
}

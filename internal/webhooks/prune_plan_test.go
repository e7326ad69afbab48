package webhooks_test

import (
	"strings"
	"testing"

	"forgeapi/internal/apptest"
	"forgeapi/internal/webhooks"
)

// TestPrunerPlans checks SQLite's plan of the delivery pruner's search
// (prune.go's pruneDeliveries): it walks the creation time index, so a
// sweep that finds nothing old reads nothing, instead of searching by
// state, which read every done delivery (10M an hour at 3,000/s).
func TestPrunerPlans(t *testing.T) {
	t.Parallel()
	if apptest.Postgres() {
		t.Skip("SQLite's plan")
	}
	env := apptest.Start(t)
	plan := env.QueryPlan(t, webhooks.PruneDeliveriesQuery, "2026-01-01", 500)
	if joined := strings.Join(plan, "; "); !strings.Contains(joined, "USING INDEX hook_deliveries_created (created_at<?)") ||
		strings.Contains(joined, "hook_deliveries_pending") || strings.Contains(joined, "TEMP B-TREE") {
		t.Errorf("plan of the pruner's search = %q, want a range of hook_deliveries_created", plan)
	}
}

// TestClaimPlans checks SQLite's plans of the claim's searches: both read
// the partial index of the pending deliveries in its order, never the
// delivery log nor a sort, so a claim costs the same with a million
// deliveries logged as with none.
func TestClaimPlans(t *testing.T) {
	t.Parallel()
	if apptest.Postgres() {
		t.Skip("SQLite's plan")
	}
	env := apptest.Start(t)
	const pending, outboxes = "INDEX hook_deliveries_pending (due_at", "INDEX hook_outboxes_lease (lease_until"
	for _, c := range []struct {
		name, query string
		args        []any
		index       string // the range the plan reads
	}{
		{"due deliveries", "SELECT * FROM hook_deliveries WHERE id IN (" + webhooks.DueDeliveriesQuery + ")", []any{nil, nil, "2026-01-01", 64}, pending},
		{"next due time", webhooks.NextDueQuery, []any{"2026-01-01"}, pending},
		{"release of a dead process's leases at start", webhooks.ReleaseLeasesQuery, []any{"2026-01-01"}, pending},
		{"release of a dead process's outboxes at start", webhooks.ReleaseOutboxesQuery, []any{"2026-01-01"}, outboxes},
		{"claim of the outboxes whose lease ended", "SELECT * FROM hook_outboxes WHERE payload_id IN (" + webhooks.ExpiredOutboxesQuery + ")", []any{nil, nil, "2026-01-01", 64}, outboxes},
		{"look for an outbox to sweep", webhooks.AnyExpiredOutboxQuery, []any{"2026-01-01"}, outboxes},
	} {
		plan := env.QueryPlan(t, c.query, c.args...)
		if joined := strings.Join(plan, "; "); !strings.Contains(joined, c.index) || strings.Contains(joined, "TEMP B-TREE") {
			t.Errorf("plan of the claim's %s = %q, want a range of %s) in order", c.name, plan, c.index)
		}
	}
	// The record of claimed deliveries finds each by its id, whatever the
	// size of the log.
	args := []any{"owner"}
	for id := range 3 {
		args = append(args, id+1, "2026-01-01", 0.1, "OK", 200, "http://x", "{}", "{}", "")
	}
	plan := env.QueryPlan(t, webhooks.RecordClaimedQuery, args...)
	if joined := strings.Join(plan, "; "); !strings.Contains(joined, "SEARCH hook_deliveries USING INTEGER PRIMARY KEY") {
		t.Errorf("plan of the record of claimed deliveries = %q, want a search by id", plan)
	}
}

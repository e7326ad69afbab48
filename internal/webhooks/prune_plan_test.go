package webhooks_test

import (
	"strings"
	"testing"

	"forgeapi/internal/apptest"
	"forgeapi/internal/webhooks"
)

// TestPrunerPlans checks SQLite's plans of the delivery pruner's searches
// (prune.go): both walk the log in id order from its start, so a sweep
// that finds nothing old reads one row, and neither reads an index (none
// of the creation times exists: each was a B-tree written with every
// delivery) nor sorts.
func TestPrunerPlans(t *testing.T) {
	t.Parallel()
	if apptest.Postgres() {
		t.Skip("SQLite's plan")
	}
	env := apptest.Start(t)
	for _, c := range []struct {
		name, query string
		args        []any
		want        string
	}{
		{"first delivery to keep", webhooks.DeliveriesFloorQuery, []any{"2026-01-01"}, "SCAN hook_deliveries"},
		{"delete", webhooks.PruneDeliveriesQuery, []any{1000, 500}, "SEARCH hook_deliveries USING INTEGER PRIMARY KEY (rowid<?)"},
	} {
		plan := env.QueryPlan(t, c.query, c.args...)
		if joined := strings.Join(plan, "; "); !strings.Contains(joined, c.want) || strings.Contains(joined, "INDEX hook_deliveries_") ||
			strings.Contains(joined, "TEMP B-TREE") {
			t.Errorf("plan of the pruner's %s = %q, want %s in id order", c.name, plan, c.want)
		}
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
		args = append(args, id+1, "2026-01-01", 0.1, "OK", 200, "http://x", "{}", 3, "{}", "")
	}
	plan := env.QueryPlan(t, webhooks.RecordClaimedQuery, args...)
	if joined := strings.Join(plan, "; "); !strings.Contains(joined, "SEARCH hook_deliveries USING INTEGER PRIMARY KEY") {
		t.Errorf("plan of the record of claimed deliveries = %q, want a search by id", plan)
	}
}

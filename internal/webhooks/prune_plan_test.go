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
		strings.Contains(joined, "hook_deliveries_work") || strings.Contains(joined, "TEMP B-TREE") {
		t.Errorf("plan of the pruner's search = %q, want a range of hook_deliveries_created", plan)
	}
}

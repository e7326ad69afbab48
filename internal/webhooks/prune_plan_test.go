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
	rows, err := env.Q().QueryContext(env.Context(), "EXPLAIN QUERY PLAN "+webhooks.PruneDeliveriesQuery, "2026-01-01", 500)
	apptest.Must(t, "query plan", err)
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int64
		var detail string
		apptest.Must(t, "plan row", rows.Scan(&id, &parent, &unused, &detail))
		plan = append(plan, detail)
	}
	apptest.Must(t, "plan rows", rows.Err())
	if joined := strings.Join(plan, "; "); !strings.Contains(joined, "USING INDEX hook_deliveries_created (created_at<?)") ||
		strings.Contains(joined, "hook_deliveries_work") || strings.Contains(joined, "TEMP B-TREE") {
		t.Errorf("plan of the pruner's search = %q, want a range of hook_deliveries_created", plan)
	}
}

package webhooks

import (
	"context"
	"time"
)

// PruneDeliveriesQuery is the pruner's delete, for tests of its plan.
const PruneDeliveriesQuery = pruneDeliveries

// ClaimDue runs one pass of the claim loop at the service's clock and
// waits for the sends it started: sent are the deliveries they sent (or
// recorded as not sent), unrecorded; next is when the loop would claim
// again without a wake.
func (d *Dispatcher) ClaimDue(ctx context.Context) (sent []int64, next time.Time) {
	results := make(chan outcome, maxInFlight)
	d.results = results
	next = d.claimDue(ctx, results)
	d.sends.Wait()
	close(results)
	for o := range results {
		sent = append(sent, o.ID)
	}
	return sent, next
}

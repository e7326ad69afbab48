package webhooks

import (
	"context"
	"time"

	"forgeapi/internal/store"
)

// PruneDeliveriesQuery and DeliveriesFloorQuery are the pruner's delete
// and its search of the first delivery to keep, for tests of their plans.
const (
	PruneDeliveriesQuery = pruneDeliveries
	DeliveriesFloorQuery = deliveriesFloor
)

// DueDeliveriesQuery and NextDueQuery are the claim's searches, and
// ReleaseLeasesQuery the release of a dead process's leases at start, for
// tests of their plans.
const (
	DueDeliveriesQuery = dueDeliveries
	NextDueQuery       = nextDue
	ReleaseLeasesQuery = releaseLeases
	// ReleaseOutboxesQuery and ExpiredOutboxesQuery read the outbox index.
	ReleaseOutboxesQuery  = releaseOutboxes
	ExpiredOutboxesQuery  = expiredOutboxes
	AnyExpiredOutboxQuery = anyExpiredOutbox
)

// RecordClaimedQuery is the record of three claimed deliveries on SQLite,
// for a test of its plan.
var RecordClaimedQuery = doneQueries[store.SQLite][2]

// ClaimDue runs one pass of the claim loop at the service's clock and
// waits for the sends it started: sent are the deliveries they sent (or
// recorded as not sent), unrecorded; next is when the loop would claim
// again without a wake.
func (d *Dispatcher) ClaimDue(ctx context.Context) (sent []int64, next time.Time) {
	results := make(chan outcome, maxInFlight)
	d.results = results
	next = d.claimDue(ctx)
	d.sends.Wait()
	close(results)
	for o := range results {
		sent = append(sent, o.ID)
	}
	return sent, next
}

// ClaimDueAndRecord runs one pass of the claim loop like ClaimDue, then
// between, then records what the sends left in one batch, as the
// recorder does.
func (d *Dispatcher) ClaimDueAndRecord(ctx context.Context, between func()) (sent []int64, err error) {
	results := make(chan outcome, maxInFlight)
	d.results = results
	d.claimDue(ctx)
	d.sends.Wait()
	close(results)
	var batch []outcome
	for o := range results {
		batch = append(batch, o)
		sent = append(sent, o.ID)
	}
	between()
	return sent, d.record(batch)
}

// HandOverAfterStop runs the handoff of a delivery to the hook of
// write's payload, listed by write in its outbox leased to owner (in the
// same transaction), with a dispatcher that attaches and then stops
// before the transaction commits.
func HandOverAfterStop(ctx context.Context, s *Service, owner string, write func(tx store.Q) (hookID, payloadID int64, err error)) error {
	s.handoff.attach(owner, time.Minute)
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		hookID, payloadID, err := write(tx)
		if err != nil {
			return err
		}
		item := handed{claimed: claimed{HookID: hookID, PayloadID: payloadID, GUID: "g", Event: "push", CreatedAt: s.now()},
			hook: &Hook{ID: hookID, URL: "http://127.0.0.1:9/"}}
		s.handOver(tx, owner, []handed{item})
		s.handoff.detach()
		return nil
	})
}

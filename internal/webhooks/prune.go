package webhooks

import (
	"context"
	"time"

	"forgeapi/internal/store"
)

// pruneBatch is how many rows one prune statement deletes, so that a
// large backlog never holds the write lock for long.
const pruneBatch = 1000

// Pruner deletes the delivery log past Config.Retention: finished
// deliveries, then payloads no delivery refers to (and none is handed
// over unwritten: see handoff), then deleted hooks left without
// deliveries.
type Pruner struct {
	svc *Service
}

// NewPruner returns the service's Pruner.
func NewPruner(s *Service) *Pruner { return &Pruner{svc: s} }

// Run prunes at start and then every hour (or every tenth of the
// retention when that is shorter) until ctx is done.
func (p *Pruner) Run(ctx context.Context) {
	interval := min(time.Hour, p.retention()/10)
	for {
		if _, err := p.Prune(ctx); err != nil && ctx.Err() == nil {
			p.svc.logger().Error("prune webhook deliveries", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
	}
}

func (p *Pruner) retention() time.Duration {
	if p.svc.Config.Retention > 0 {
		return p.svc.Config.Retention
	}
	return DefaultRetention
}

// pruneDeliveries deletes a batch of the done deliveries created before
// the cutoff, oldest first, walking the creation time index from its
// start: a sweep that finds nothing to delete reads nothing. The state is
// compared as an expression (concatenated with the empty string), which
// no index serves, so that the planner does not pick the work index's
// state = 'done' instead: that search read every done delivery
// (TestPrunerPlans).
const pruneDeliveries = `DELETE FROM hook_deliveries WHERE id IN (
	SELECT id FROM hook_deliveries WHERE created_at < $1 AND (state || '') = 'done' ORDER BY created_at LIMIT $2)`

// Prune deletes what is past retention now and returns how many
// deliveries it deleted.
func (p *Pruner) Prune(ctx context.Context) (int64, error) {
	cutoff := p.svc.now().Add(-p.retention())
	deliveries, err := p.deleteAll(ctx, pruneDeliveries, cutoff)
	if err != nil {
		return deliveries, err
	}
	if _, err := p.deleteAll(ctx, `DELETE FROM hook_payloads WHERE id IN (
		SELECT p.id FROM hook_payloads p WHERE p.created_at < $1
		AND NOT EXISTS (SELECT 1 FROM hook_deliveries d WHERE d.payload_id = p.id)
		AND NOT EXISTS (SELECT 1 FROM hook_outboxes o WHERE o.payload_id = p.id) LIMIT $2)`, cutoff); err != nil {
		return deliveries, err
	}
	_, err = p.deleteAll(ctx, `DELETE FROM hooks WHERE id IN (
		SELECT h.id FROM hooks h WHERE h.deleted_at IS NOT NULL AND h.deleted_at < $1
		AND NOT EXISTS (SELECT 1 FROM hook_deliveries d WHERE d.hook_id = h.id) LIMIT $2)`, cutoff)
	return deliveries, err
}

// deleteAll runs a batched delete (parameters: cutoff, batch size) until
// it deletes less than a batch.
func (p *Pruner) deleteAll(ctx context.Context, query string, cutoff time.Time) (int64, error) {
	var total int64
	for {
		var n int64
		err := p.svc.DB.Tx(ctx, func(tx store.Q) error {
			res, err := tx.ExecContext(ctx, query, cutoff, pruneBatch)
			if err != nil {
				return store.Normalize(err)
			}
			n, err = res.RowsAffected()
			return err
		})
		total += n
		if err != nil || n < pruneBatch {
			return total, err
		}
	}
}

package webhooks

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"time"

	"forgeapi/internal/store"
	"forgeapi/internal/worker"
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
// retention when that is shorter) until ctx is done, on the loop every
// background worker shares (internal/worker).
func (p *Pruner) Run(ctx context.Context) {
	worker.Loop{Pass: p.pass, Interval: min(time.Hour, p.retention()/10)}.Run(ctx)
}

// pass prunes once; a failure is logged, and the next pass tries again.
func (p *Pruner) pass(ctx context.Context) {
	if _, err := p.Prune(ctx); err != nil && ctx.Err() == nil {
		p.svc.logger().Error("prune webhook deliveries", "err", err)
	}
}

func (p *Pruner) retention() time.Duration {
	if p.svc.Config.Retention > 0 {
		return p.svc.Config.Retention
	}
	return DefaultRetention
}

// The delivery log is pruned in the order it was written, by id, with no
// index of creation times (a B-tree more written with every delivery):
// deliveriesFloor finds the first delivery, by id, created at or after
// the cutoff, and pruneDeliveries deletes a batch of the done deliveries
// before it, oldest first. Both walk the log from its start, so a sweep
// reads the rows it deletes and the few pending ones among them, and one
// that finds nothing old reads one row. A delivery written after a newer
// one but created before it (an event's delivery that waited in a
// backlog, a retry) is deleted once the floor passes it, at the latest a
// retention after the newer one.
const (
	deliveriesFloor = `SELECT id FROM hook_deliveries WHERE created_at >= $1 ORDER BY id LIMIT 1`
	pruneDeliveries = `DELETE FROM hook_deliveries WHERE id IN (
	SELECT id FROM hook_deliveries WHERE id < $1 AND state = 'done' ORDER BY id LIMIT $2)`
)

// Prune deletes what is past retention now and returns how many
// deliveries it deleted.
func (p *Pruner) Prune(ctx context.Context) (int64, error) {
	cutoff := p.svc.now().Add(-p.retention())
	floor, err := p.deliveriesFloor(ctx, cutoff)
	if err != nil {
		return 0, err
	}
	deliveries, err := p.deleteAll(ctx, pruneDeliveries, floor)
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

// deliveriesFloor returns the id of the first delivery created at or
// after cutoff, or math.MaxInt64 when every delivery is older.
func (p *Pruner) deliveriesFloor(ctx context.Context, cutoff time.Time) (int64, error) {
	var floor int64
	err := p.svc.DB.QueryRowContext(ctx, deliveriesFloor, cutoff).Scan(&floor)
	if errors.Is(err, sql.ErrNoRows) {
		return math.MaxInt64, nil
	}
	return floor, store.Normalize(err)
}

// deleteAll runs a batched delete (parameters: bound, batch size) until
// it deletes less than a batch.
func (p *Pruner) deleteAll(ctx context.Context, query string, bound any) (int64, error) {
	var total int64
	for {
		var n int64
		err := p.svc.DB.Tx(ctx, func(tx *store.Tx) error {
			res, err := tx.ExecContext(ctx, query, bound, pruneBatch)
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

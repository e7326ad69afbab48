package webhooks

import (
	"cmp"
	"context"
	"slices"
	"time"

	"forgeapi/internal/store"
)

// Putting back: deliveries claimed but not sent now (a busy hook, over
// the rate limit, not ready, a shutdown) released until a later due
// time. The hand-off's contract is Dispatcher's.

// putBackItem is a claimed delivery returned unsent with a later due time.
type putBackItem struct {
	ID        int64
	Due       time.Time
	Throttled bool // over the hook's rate limit (sets throttled_at)
	// unwritten is the row to write for a delivery handed over unwritten
	// (ID 0).
	unwritten *newDelivery
}

// earliest is the earliest due time of the items, zero for none.
func earliest(items []putBackItem) time.Time {
	var t time.Time
	for _, it := range items {
		t = earlier(t, it.Due)
	}
	return t
}

// putBackOf is the put-back of c, a delivery to h, until due.
func putBackOf(c claimed, h *Hook, due time.Time) putBackItem {
	pb := putBackItem{ID: c.ID, Due: due}
	if c.ID == 0 {
		url := ""
		if h != nil {
			url = h.URL
		}
		row := c.unwrittenRow(url, due)
		pb.unwritten = &row
	}
	return pb
}

// release puts items back (see putBack), even when ctx ends: a shutdown
// must not leave them leased. A failure is logged; the deliveries then
// stay leased until their lease ends.
func (d *Dispatcher) release(ctx context.Context, items []putBackItem) {
	if len(items) == 0 {
		return
	}
	if err := d.putBack(context.WithoutCancel(ctx), items); err != nil {
		d.svc.logger().Error("put back webhook deliveries", "err", err)
	}
}

// putBack releases unsent deliveries until their due time. The rows
// written for throttled unwritten deliveries keep the send slot their
// throttling reserved.
func (d *Dispatcher) putBack(ctx context.Context, items []putBackItem) error {
	reserved, err := d.svc.putBack(ctx, d.owner, items)
	if len(reserved) > 0 {
		d.mu.Lock()
		for _, id := range reserved {
			d.reserve(id)
		}
		d.mu.Unlock()
	}
	return err
}

// putBack releases deliveries leased to owner until their due time:
// updates the rows, and writes those of unwritten deliveries (pending,
// under no lease). It returns the ids of the rows it wrote for throttled
// ones.
func (s *Service) putBack(ctx context.Context, owner string, items []putBackItem) (throttled []int64, err error) {
	now := s.now()
	// In id order, as record writes, and run again when PostgreSQL aborts
	// it for a deadlock: a failed put-back leaves the deliveries leased
	// until their lease ends.
	items = slices.Clone(items)
	slices.SortFunc(items, func(a, b putBackItem) int { return cmp.Compare(a.ID, b.ID) })
	counts := map[int64]int{}
	for _, it := range items {
		if it.unwritten != nil {
			counts[it.unwritten.PayloadID]++
		}
	}
	err = s.DB.RetryTx(ctx, func(tx *store.Tx) error {
		throttled = throttled[:0]
		held, err := s.holdOutboxes(ctx, tx, owner, counts)
		if err != nil {
			return err
		}
		for _, it := range items {
			if it.unwritten != nil {
				if !held[it.unwritten.PayloadID] {
					continue
				}
				var at *time.Time
				if it.Throttled {
					at = &now
				}
				id, err := insertPutBack(ctx, tx, *it.unwritten, at)
				if err != nil {
					return err
				}
				if it.Throttled && id != 0 {
					throttled = append(throttled, id)
				}
				continue
			}
			query := `UPDATE hook_deliveries SET due_at = $1, lease_owner = '' WHERE id = $2 AND lease_owner = $3`
			args := []any{it.Due, it.ID, owner}
			if it.Throttled {
				query = `UPDATE hook_deliveries SET due_at = $1, lease_owner = '', throttled_at = COALESCE(throttled_at, $4)
					WHERE id = $2 AND lease_owner = $3`
				args = append(args, now)
			}
			if _, err := tx.ExecContext(ctx, query, args...); err != nil {
				return store.Normalize(err)
			}
		}
		return nil
	})
	if err == nil {
		s.handoff.written(counts)
	}
	return throttled, err
}

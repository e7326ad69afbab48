package webhooks

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"forgeapi/internal/store"
)

// Claiming: the claim loop leases due deliveries (and expired outboxes,
// and takes those handed over) and starts them, as many as there is
// room for. The hand-off's contract is Dispatcher's.

// claimLoop starts the deliveries handed over as they come, and claims
// and starts due deliveries whenever the service is woken, a send frees
// room, the next pending delivery comes due, or the poll interval
// passes.
func (d *Dispatcher) claimLoop(ctx context.Context) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	var deadline time.Time // when the timer fires
	later := func(next time.Time) {
		if !next.IsZero() && next.Before(deadline) {
			deadline = next
			timer.Reset(max(time.Until(deadline), time.Millisecond))
		}
	}
	claim := true
	for {
		if claim {
			deadline = time.Now().Add(pollInterval)
			timer.Reset(pollInterval)
			later(d.claimDue(ctx))
		}
		claim = true
		select {
		case <-ctx.Done():
			return
		case <-d.svc.handoff.signal:
			later(d.startHanded(ctx))
			claim = false
		case <-d.svc.wake:
		case <-d.freed:
		case <-timer.C:
		}
	}
}

// claimDue claims and starts deliveries until none is due or the process
// sends maxInFlight at once: first those of the outboxes whose lease
// ended (see claimOutboxes), then the due rows. It returns when the claim
// loop must claim again without a wake: the earliest due time of a
// pending delivery not due yet (one put back, throttled, waiting for a
// retry, or leased), or zero for none (or when the loop waits for room
// instead). It opens the handoff when it leaves nothing due behind, and
// closes it otherwise.
func (d *Dispatcher) claimDue(ctx context.Context) time.Time {
	caughtUp := false
	defer func() { d.svc.handoff.setOpen(caughtUp) }()
	left, next, outboxPutBack := d.startOutboxes(ctx)
	if left {
		return next
	}
	for ctx.Err() == nil {
		room := d.claimRoom()
		if room == 0 {
			return time.Time{}
		}
		limit := min(room, claimBatch)
		batch, pending, err := d.claim(ctx, limit)
		if err != nil {
			if ctx.Err() == nil {
				d.svc.logger().Error("claim webhook deliveries", "err", err)
			}
			return time.Now().Add(pollInterval)
		}
		d.svc.handoff.count(0, len(batch))
		putBackDue, putBack := d.start(ctx, batch, map[int64]*Hook{})
		next = earlier(next, putBackDue)
		if len(batch) < limit {
			caughtUp = !putBack && !outboxPutBack && room > len(batch)
			return earlier(next, pending)
		}
	}
	return next
}

// outboxesPerClaim is how many outboxes a claim takes for room
// deliveries: an event has ten hooks or fewer, mostly.
func outboxesPerClaim(room int) int {
	return min(max(room/10, 1), maxOutboxClaim)
}

// startOutboxes claims the outboxes whose lease ended and starts their
// deliveries while there is room and none goes back to the table, when a
// look at the outbox index finds any. left reports that some may be left
// (no room, busy hooks, or the database failed); putBack that some
// deliveries went back to the table, next the earliest due time among
// them.
func (d *Dispatcher) startOutboxes(ctx context.Context) (left bool, next time.Time, putBack bool) {
	var id int64
	err := d.svc.DB.QueryRowContext(ctx, anyExpiredOutbox, d.svc.now()).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return false, next, false
	}
	for err == nil && ctx.Err() == nil {
		room := d.claimRoom()
		if room == 0 {
			return true, next, putBack
		}
		var items []handed
		var more bool
		if items, more, err = d.svc.claimOutboxes(ctx, d.owner, d.lease, outboxesPerClaim(room)); err != nil {
			break
		}
		d.svc.handoff.hold(items)
		at, back := d.startUnwritten(ctx, items, false)
		next, putBack = earlier(next, at), putBack || back
		if !more {
			return false, next, putBack
		}
		if back {
			// Their hooks are busy: the rest of the backlog waits in its
			// outboxes rather than go back to the table row by row.
			return true, next, putBack
		}
	}
	if err != nil && ctx.Err() == nil {
		d.svc.logger().Error("claim webhook outboxes", "err", err)
	}
	return true, earlier(next, time.Now().Add(pollInterval)), putBack
}

// startHanded starts the deliveries handed over (see startUnwritten); the
// handoff closes, until a claim catches up, when some go back to the
// table. It returns the earliest due time of those (zero for none).
func (d *Dispatcher) startHanded(ctx context.Context) time.Time {
	next, putBack := d.startUnwritten(ctx, d.svc.handoff.take(), true)
	if putBack {
		d.svc.handoff.setOpen(false)
	}
	return next
}

// startUnwritten starts unwritten deliveries (handed over, or of claimed
// outboxes), as many as there is room for; the rest go back to the table
// due now, for a claim when room frees. putBack reports any put back,
// next the earliest due time among them.
func (d *Dispatcher) startUnwritten(ctx context.Context, items []handed, handedOver bool) (next time.Time, putBack bool) {
	room := d.room()
	var over []putBackItem
	if len(items) > room {
		over = dueNow(items[room:], d.svc.now())
		items = items[:room]
	}
	if handedOver {
		d.svc.handoff.count(len(items), 0)
	} else {
		d.svc.handoff.count(0, len(items))
	}
	batch := make([]claimed, len(items))
	hooks := map[int64]*Hook{}
	for i, it := range items {
		batch[i] = it.claimed
		hooks[it.HookID] = it.hook
		d.cachePayload(it.PayloadID, it.body)
	}
	next, putBack = d.start(ctx, batch, hooks)
	d.release(ctx, over)
	return earlier(next, earliest(over)), putBack || len(over) > 0
}

// start prepares and starts a batch of deliveries leased to d, hooks
// holding those of their hooks known already. The deliveries of hooks at
// their limit beyond those waiting in memory, over their rate limit, or
// that could not be prepared go back to the table: putBack reports any,
// and next is the earliest due time among them.
func (d *Dispatcher) start(ctx context.Context, batch []claimed, hooks map[int64]*Hook) (next time.Time, putBack bool) {
	jobs, unready := d.prepareBatch(ctx, batch, hooks)
	admitted, back := d.admit(jobs, d.svc.now())
	back = append(back, unready...)
	d.release(ctx, back)
	for _, j := range admitted {
		d.startSend(j)
	}
	return earliest(back), len(back) > 0
}

// earlier is the earlier of two times, zero standing for none.
func earlier(a, b time.Time) time.Time {
	if a.IsZero() || !b.IsZero() && b.Before(a) {
		return b
	}
	return a
}

// room is how many more deliveries the process may hold now.
func (d *Dispatcher) room() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return max(maxInFlight-d.total, 0)
}

// claimRoom is how many deliveries a claim may take now: none while
// fewer than claimRefill would fit, and the claim loop then waits until
// the sends under way free that many (finish). Claiming whatever room a
// send had freed, a full dispatcher claimed a few deliveries a
// transaction, each one send.
func (d *Dispatcher) claimRoom() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	free := max(maxInFlight-d.total, 0)
	if d.starved = free < claimRefill; d.starved {
		return 0
	}
	return free
}

// dueDeliveries finds the deliveries a claim leases: the oldest due
// ($3: now; $4: how many), read in order from hook_deliveries_pending,
// the index of the pending deliveries only (TestClaimPlans).
const dueDeliveries = `SELECT id FROM hook_deliveries WHERE state = 'pending' AND due_at <= $3 ORDER BY due_at, id LIMIT $4`

// nextDue finds the earliest due time after $1 of the pending deliveries,
// the first entry of hook_deliveries_pending past it.
const nextDue = `SELECT due_at FROM hook_deliveries WHERE state = 'pending' AND due_at > $1 ORDER BY due_at LIMIT 1`

// claim leases up to limit due deliveries, oldest due first. When it
// leases fewer than limit, pending is the earliest due time of the
// deliveries left pending (zero for none): the claim loop sleeps until
// then. Read from the table, it covers every delivery that comes due
// later (put back by this process's earlier claims or its sends, retries,
// ended leases), where a due time kept in memory forgot all but the
// earliest (the webhooks bench saw whole batches put back for 100 ms
// sent 1 s late, at the next poll).
func (d *Dispatcher) claim(ctx context.Context, limit int) (out []claimed, pending time.Time, err error) {
	db := d.svc.DB
	err = db.Tx(ctx, func(tx *store.Tx) error {
		// Read once the transaction has its turn: a time read before the
		// wait for SQLite's write lock missed what came due meanwhile.
		now := d.svc.now()
		rows, err := tx.QueryContext(ctx, `
			UPDATE hook_deliveries SET due_at = $1, lease_owner = $2, attempts = attempts + 1
			WHERE id IN (`+dueDeliveries+db.SkipLocked()+`)
			RETURNING id, hook_id, payload_id, guid, event, action, repository_id, installation_id, retries_left`,
			now.Add(d.lease), d.owner, now, limit)
		if err != nil {
			return store.Normalize(err)
		}
		defer rows.Close()
		for rows.Next() {
			var c claimed
			var repoID, installationID sql.NullInt64
			if err := rows.Scan(&c.ID, &c.HookID, &c.PayloadID, &c.GUID, &c.Event, &c.Action, &repoID, &installationID,
				&c.RetriesLeft); err != nil {
				return err
			}
			c.RepositoryID, c.InstallationID = nullInt(repoID), nullInt(installationID)
			out = append(out, c)
		}
		if err := rows.Err(); err != nil || len(out) == limit {
			return err
		}
		rows.Close()
		// Due after now only: on PostgreSQL, rows due now that SKIP LOCKED
		// passed over are another claimer's.
		err = tx.QueryRowContext(ctx, nextDue, now).Scan(&pending)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		return store.Normalize(err)
	})
	return out, pending, err
}

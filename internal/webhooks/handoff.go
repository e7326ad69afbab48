package webhooks

import (
	"context"
	"sync"
	"time"

	"forgeapi/internal/store"
)

// handoff passes an event's deliveries to this process's Dispatcher
// without a claim, and without writing them twice. The API's transaction
// writes no delivery row: it lists the hooks in the payload's outbox (a
// hook_outboxes row), leased to the dispatcher (owner, lease_until at the
// lease's end), and, once it commits, hands the deliveries over in memory with
// their hook and payload body. The dispatcher starts them at once and
// writes each one's row once, with its outcome (see outbox.go), where a
// claim would UPDATE every row and read the hook and the payload back,
// and the row inserted by the API would be updated with the outcome.
// Only while the dispatcher runs and is caught up (its last claim left
// nothing due in the table) are deliveries handed over, so that they
// never overtake a backlog; otherwise the outbox's lease ends at once,
// and the dispatcher claims it behind the backlog (claimOutboxes). What
// a crash or a shutdown does to them is the Dispatcher's contract.
type handoff struct {
	mu     sync.Mutex
	owner  string // the running dispatcher's lease owner; "" when none runs
	lease  time.Duration
	open   bool // the dispatcher is caught up
	queue  []handed
	signal chan struct{} // holds a token while queue is not empty
	// handed and claimed count the deliveries the dispatcher started,
	// by how it got them (see Service.DispatchCounts).
	handed, claimed int64
	// unwritten counts, by payload, the deliveries handed over whose rows
	// are not written yet: the write of a payload's last one deletes its
	// outbox.
	unwritten map[int64]int
}

// handed is a delivery handed to the dispatcher, with what sending it
// needs.
type handed struct {
	claimed
	hook *Hook
	body []byte
}

func newHandoff() *handoff {
	return &handoff{signal: make(chan struct{}, 1), unwritten: map[int64]int{}}
}

// leaseFor returns the lease that deliveries written at now take to be
// handed over: the dispatcher's owner and the lease's end; ok is false
// when their outbox must wait for a claim instead.
func (h *handoff) leaseFor(now time.Time) (owner string, until time.Time, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.owner == "" || !h.open {
		return "", time.Time{}, false
	}
	return h.owner, now.Add(h.lease), true
}

// hand queues deliveries written under owner's lease for the dispatcher.
// It reports false when that dispatcher no longer runs: the caller
// releases them.
func (h *handoff) hand(owner string, items []handed) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.owner != owner {
		return false
	}
	h.holdLocked(items)
	h.queue = append(h.queue, items...)
	select {
	case h.signal <- struct{}{}:
	default:
	}
	return true
}

// hold counts unwritten deliveries the dispatcher took itself (those of
// the outboxes it claimed) as it counts those handed over: the write of
// a payload's last one deletes its outbox.
func (h *handoff) hold(items []handed) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.holdLocked(items)
}

// holdLocked is hold with h.mu held.
func (h *handoff) holdLocked(items []handed) {
	for _, it := range items {
		h.unwritten[it.PayloadID]++
	}
}

// attach starts handing deliveries to a dispatcher leasing them as owner
// for lease (closed until setOpen).
func (h *handoff) attach(owner string, lease time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.owner, h.lease, h.open = owner, lease, false
}

// detach stops handing deliveries over and returns those not taken.
func (h *handoff) detach() []handed {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.owner, h.open = "", false
	items := h.queue
	h.queue = nil
	return items
}

// setOpen says whether the dispatcher is caught up.
func (h *handoff) setOpen(open bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.open = open
}

// take returns the queued deliveries.
func (h *handoff) take() []handed {
	h.mu.Lock()
	defer h.mu.Unlock()
	items := h.queue
	h.queue = nil
	return items
}

// remaining is how many deliveries of the payload handed over are not
// written yet.
func (h *handoff) remaining(payloadID int64) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.unwritten[payloadID]
}

// written takes the deliveries whose rows a transaction wrote (counts, by
// payload) off the unwritten ones.
func (h *handoff) written(counts map[int64]int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for id, n := range counts {
		if h.unwritten[id] -= n; h.unwritten[id] <= 0 {
			delete(h.unwritten, id)
		}
	}
}

// forget drops the unwritten deliveries of the payloads, whose outboxes
// a claim took anew.
func (h *handoff) forget(payloadIDs []int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, id := range payloadIDs {
		delete(h.unwritten, id)
	}
}

// count adds to the started deliveries' counts.
func (h *handoff) count(handed, claimed int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.handed += int64(handed)
	h.claimed += int64(claimed)
}

// DispatchCounts reports how many deliveries this process's dispatcher
// started since the service was made: handed over by the transaction that
// wrote them, or claimed from the table.
func (s *Service) DispatchCounts() (handed, claimed int64) {
	s.handoff.mu.Lock()
	defer s.handoff.mu.Unlock()
	return s.handoff.handed, s.handoff.claimed
}

// handOver queues an event's deliveries, in its payload's outbox leased
// to owner, for the dispatcher once tx commits. Should the dispatcher
// have stopped meanwhile, they are written due now, to be claimed by the
// next one.
func (s *Service) handOver(tx *store.Tx, owner string, items []handed) {
	tx.AfterCommit(func() {
		if s.handoff.hand(owner, items) {
			return
		}
		if _, err := s.putBack(context.Background(), owner, dueNow(items, s.now())); err != nil {
			s.logger().Error("release webhook deliveries; they are sent when their lease ends", "err", err)
		}
		s.Wake()
	})
}

// dueNow returns the put-backs that make items due at now.
func dueNow(items []handed, now time.Time) []putBackItem {
	out := make([]putBackItem, len(items))
	for i, it := range items {
		out[i] = putBackOf(it.claimed, it.hook, now)
	}
	return out
}

// releaseLeases makes the leased deliveries due after $1 (a lease's end)
// due at $1. It reads a range of hook_deliveries_pending, never the
// whole log (TestClaimPlans): a lease that ended is due already.
const releaseLeases = `UPDATE hook_deliveries SET due_at = $1, lease_owner = ''
	WHERE id IN (SELECT id FROM hook_deliveries WHERE state = 'pending' AND due_at > $1 AND lease_owner <> '')`

// releaseOutboxes ends at $1 the outbox leases that end after it, for the
// next claim; a range of hook_outboxes_lease.
const releaseOutboxes = `UPDATE hook_outboxes SET lease_until = $1
	WHERE payload_id IN (SELECT payload_id FROM hook_outboxes WHERE lease_until > $1)`

// ReleaseLeases makes every leased pending delivery due now, and every
// outbox lease end now (its deliveries without a row are claimed by the
// dispatcher's first claim), and reports how many deliveries and
// outboxes it released. Only a server that knows it is the database's
// only one calls it, at start, before its dispatcher runs (see
// store.DB.ClaimServer): a lease it finds is a dead process's, whose
// deliveries would otherwise wait for the lease's end (the delivery
// timeout plus 10 seconds) after a kill -9. A delivery its receiver got
// just before the kill is sent again, as after the lease's end.
func (s *Service) ReleaseLeases(ctx context.Context) (int64, error) {
	var n int64
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		n = 0
		for _, query := range []string{releaseLeases, releaseOutboxes} {
			res, err := tx.ExecContext(ctx, query, s.now())
			if err != nil {
				return store.Normalize(err)
			}
			released, err := res.RowsAffected()
			if err != nil {
				return err
			}
			n += released
		}
		return nil
	})
	return n, err
}

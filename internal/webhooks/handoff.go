package webhooks

import (
	"context"
	"sync"
	"time"

	"forgeapi/internal/store"
)

// handoff passes an event's deliveries to this process's Dispatcher
// without a claim. The API's transaction writes them already leased to
// the dispatcher (lease_owner set, due_at at the lease's end, attempts 1)
// and, once it commits, hands them over in memory with their hook and
// payload body: the dispatcher starts them at once, where a claim would
// UPDATE every row and read the hook and the payload back. Only while
// the dispatcher runs and is caught up (its last claim left nothing due
// in the table) are deliveries handed over, so that they never overtake
// a backlog; otherwise they are written due now and claimed. A crash
// loses nothing: a handed delivery is a leased row, claimed again when
// its lease ends.
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
}

// handed is a delivery handed to the dispatcher, with what sending it
// needs.
type handed struct {
	claimed
	hook *Hook
	body []byte
}

func newHandoff() *handoff { return &handoff{signal: make(chan struct{}, 1)} }

// leaseFor returns the lease that deliveries written at now take to be
// handed over: the dispatcher's owner and the lease's end; ok is false
// when they must be written due now, to be claimed.
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
	h.queue = append(h.queue, items...)
	select {
	case h.signal <- struct{}{}:
	default:
	}
	return true
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

// handOver queues an event's deliveries, written leased to owner, for
// the dispatcher once tx commits. Should the dispatcher have stopped
// meanwhile, they are released due now, to be claimed by the next one.
func (s *Service) handOver(tx store.Q, owner string, items []handed) {
	store.AfterCommit(tx, func() {
		if s.handoff.hand(owner, items) {
			return
		}
		if err := s.putBack(context.Background(), owner, dueNow(items, s.now())); err != nil {
			s.logger().Error("release webhook deliveries; they are sent when their lease ends", "err", err)
		}
		s.Wake()
	})
}

// dueNow returns the put-backs that make items due at now.
func dueNow(items []handed, now time.Time) []putBackItem {
	out := make([]putBackItem, len(items))
	for i, it := range items {
		out[i] = putBackItem{ID: it.ID, Due: now}
	}
	return out
}

// releaseLeases makes the leased deliveries due after $1 (a lease's end)
// due at $1. It reads a range of hook_deliveries_pending, never the
// whole log (TestClaimPlans): a lease that ended is due already.
const releaseLeases = `UPDATE hook_deliveries SET due_at = $1, lease_owner = ''
	WHERE id IN (SELECT id FROM hook_deliveries WHERE state = 'pending' AND due_at > $1 AND lease_owner <> '')`

// ReleaseLeases makes every leased pending delivery due now and reports
// how many it released. Only a server that knows it is the database's
// only one calls it, at start, before its dispatcher runs (see
// store.DB.ClaimServer): a lease it finds is a dead process's, whose
// deliveries would otherwise wait for the lease's end (the delivery
// timeout plus 10 seconds) after a kill -9. A delivery its receiver got
// just before the kill is sent again, as after the lease's end.
func (s *Service) ReleaseLeases(ctx context.Context) (int64, error) {
	var n int64
	err := s.DB.Tx(ctx, func(tx store.Q) error {
		res, err := tx.ExecContext(ctx, releaseLeases, s.now())
		if err != nil {
			return store.Normalize(err)
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}

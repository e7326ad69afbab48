package webhooks

import (
	"cmp"
	"context"
	"crypto/x509"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"forgeapi/internal/store"
	"forgeapi/internal/webhooks/hookshot"
	"forgeapi/internal/wire"
)

// Defaults and limits of the Dispatcher.
const (
	// DefaultRateLimit is the most deliveries per second sent to one hook
	// when Config.RateLimit is 0.
	DefaultRateLimit = 1000
	// DefaultRetryBackoff is the first automatic retry's delay; each
	// further retry doubles it (up to maxRetryBackoff), with jitter.
	DefaultRetryBackoff = 10 * time.Second
	maxRetryBackoff     = time.Hour

	claimBatch  = 256  // deliveries claimed by one statement
	recordBatch = 256  // outcomes recorded by one transaction
	maxInFlight = 2048 // deliveries being sent at once by one process
	// claimRefill is the room a dispatcher holding maxInFlight waits for
	// before it claims again (see claimRoom).
	claimRefill = 64
	// perHookInFlight bounds the concurrent sends to one hook, so that a
	// slow or dead receiver holds at most this many sends while the
	// others go on.
	perHookInFlight = 16
	// perHookWaiting is how many claimed deliveries to a hook at
	// perHookInFlight at least wait in memory for one of its sends to
	// finish; each starts as soon as one does, without a round trip to
	// the database. A hook that sends faster keeps as many as it sends in
	// waitSpan (see waitLimit), up to maxPerHookWaiting.
	perHookWaiting    = perHookInFlight
	maxPerHookWaiting = 1024
	// waitSpan is how long the deliveries waiting in memory for a busy
	// hook last at its pace. Those beyond are put back for busyHookDelay
	// and claimed again, most of them to be put back again while the hook
	// stays busy: at a tenth of a second the webhooks bench, overloaded
	// (-workers 32), claimed each delivery 2.4 times; at a second, 0.85
	// times, the total in memory (maxInFlight) stopping the claims first.
	waitSpan = time.Second
	// busyHookDelay is how long a delivery to a hook at perHookInFlight,
	// beyond those waiting in memory, waits before it is claimed again.
	busyHookDelay = 100 * time.Millisecond
	// waitMargin is how much of a lease a delivery waiting in memory must
	// have left, beyond the delivery timeout, to be started from there;
	// one that waited longer is put back to be claimed again.
	waitMargin   = 5 * time.Second
	pollInterval = time.Second // how often due deliveries are looked for without a wake
	// recordPatience is how long a batch of outcomes is tried again
	// when the database fails to record it.
	recordPatience = time.Minute
)

// Dispatcher sends due deliveries. It claims them from hook_deliveries
// with a lease (due_at moves to the lease's end and lease_owner names the
// claimer), sends each from a send goroutine of its own (see startSend)
// with at most perHookInFlight per hook, and records the outcomes in
// batches. A delivery whose lease ends without an outcome (crash, kill
// -9) becomes due again; on PostgreSQL several processes claim with SKIP
// LOCKED and never hold the same delivery at once. Throttled deliveries
// are put back with a later due_at and throttled_at set.
type Dispatcher struct {
	svc    *Service
	sender *hookshot.Sender
	allow  *hookshot.AllowList
	owner  string
	lease  time.Duration
	rate   float64 // per hook per second; 0: unlimited

	mu       sync.Mutex
	inFlight map[int64]int // per hook
	// refusedHooks are the hooks whose refusal by the allow list this
	// process logged (once per hook, at warning level).
	refusedHooks map[int64]bool
	total        int
	starved      bool // the claim loop waits for sends to free claimRefill places
	buckets      map[int64]*bucket
	paces        map[int64]*pace // per hook, while it sends
	reserved     map[int64]bool  // deliveries put back with a reserved send slot
	freed        chan struct{}
	// waiting holds, per hook at perHookInFlight, claimed deliveries
	// (at most waitLimit) that start when one of its sends finishes;
	// they count in total. closing stops starting them (shutdown).
	waiting map[int64][]waitingJob
	closing bool
	// maxWait is how long a delivery may wait in memory after its claim:
	// the lease less the delivery timeout and waitMargin.
	maxWait time.Duration
	results chan<- outcome // where sends report, to the recorder

	payloads map[int64][]byte // payload bodies by id (immutable rows); claim loop only
	sends    sync.WaitGroup
	// idleSenders hands a job to one of the idle send goroutines (see
	// startSend); Run closes it when the last send is done.
	idleSenders chan job
	idle        atomic.Int32
}

// NewDispatcher returns a Dispatcher for the service. An invalid
// Config.AllowedHosts falls back to the default allow list (external
// addresses only) and is logged; the CLI validates it before.
func NewDispatcher(s *Service) *Dispatcher {
	allow, err := hookshot.ParseAllowList(s.Config.AllowedHosts)
	if err != nil {
		s.logger().Error("webhook allow list; using the default", "err", err)
		allow = hookshot.DefaultAllowList()
	}
	roots, err := ReceiverRoots(s.Config.CAFile)
	if err != nil {
		s.logger().Error("webhook CA file; verifying receivers with the system's roots only", "err", err)
	}
	sender := hookshot.NewSender(hookshot.Config{Timeout: s.Config.Timeout, Allow: allow, Resolver: s.Config.Resolver,
		HeaderNames: s.Config.HeaderNames, RootCAs: roots, MaxPayloadBytes: int64(s.maxPayloadBytes())})
	timeout := s.Config.Timeout
	if timeout <= 0 {
		timeout = hookshot.DefaultTimeout
	}
	rate := s.Config.RateLimit
	switch {
	case rate == 0:
		rate = DefaultRateLimit
	case rate < 0:
		rate = 0
	}
	lease := timeout + 10*time.Second
	return &Dispatcher{svc: s, sender: sender, allow: allow, owner: wire.NewGUID(), lease: lease, rate: rate,
		inFlight: map[int64]int{}, refusedHooks: map[int64]bool{}, buckets: map[int64]*bucket{}, paces: map[int64]*pace{}, reserved: map[int64]bool{},
		freed: make(chan struct{}, 1), payloads: map[int64][]byte{}, waiting: map[int64][]waitingJob{},
		maxWait: max(lease-timeout-waitMargin, 0), idleSenders: make(chan job)}
}

// claimed is a delivery under this dispatcher's lease: a row claimed, or
// a delivery handed over unwritten (ID 0; see handoff).
type claimed struct {
	ID, HookID, PayloadID int64
	GUID, Event, Action   string
	RepositoryID          *int64
	InstallationID        *int64
	RetriesLeft           int
	CreatedAt             time.Time // of an unwritten delivery, for its row
}

// job is a claimed delivery ready to send, or to record as not sent.
type job struct {
	claimed
	hook    *Hook
	request hookshot.Request
	skip    string // when set, the delivery is not sent and this is its status
}

// waitingJob is a claimed delivery waiting in memory for a send slot of
// its hook.
type waitingJob struct {
	job
	claimedAt time.Time
}

// outcome is a job's result, for the recorder.
type outcome struct {
	job
	result hookshot.Result
	at     time.Time
	// The delivery log's columns, encoded by the send's goroutine rather
	// than in the recorder's transaction, which holds SQLite's write lock.
	requestHeaders, responseHeaders, responseBody string
	impliedHeaders                                hookshot.IdentitySets // left out of requestHeaders
}

// Run sends deliveries until ctx is done, then lets the sends under way
// finish (each is bounded by the delivery timeout) and records them.
func (d *Dispatcher) Run(ctx context.Context) {
	defer d.sender.Close()
	results := make(chan outcome, maxInFlight)
	d.results = results
	recorded := make(chan struct{})
	go func() { defer close(recorded); d.recordLoop(results) }()
	d.svc.handoff.attach(d.owner, d.lease)
	d.claimLoop(ctx)
	left := append(dueNow(d.svc.handoff.detach(), d.svc.now()), d.close()...)
	if len(left) > 0 {
		if err := d.putBack(context.Background(), left); err != nil {
			d.svc.logger().Error("put back webhook deliveries", "err", err)
		}
	}
	d.sends.Wait()
	close(d.idleSenders)
	close(results)
	<-recorded
}

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
	if len(over) > 0 {
		// Released even when ctx ends: a shutdown must not leave them leased.
		if err := d.putBack(context.WithoutCancel(ctx), over); err != nil {
			d.svc.logger().Error("put back webhook deliveries", "err", err)
		}
	}
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
	if back = append(back, unready...); len(back) > 0 {
		// Released even when ctx ends: a shutdown must not leave them leased.
		if err := d.putBack(context.WithoutCancel(ctx), back); err != nil {
			d.svc.logger().Error("put back webhook deliveries", "err", err)
		}
	}
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

// claim leases up to limit due deliveries, oldest due first. When it
// leases fewer than limit, pending is the earliest due time of the
// deliveries left pending (zero for none): the claim loop sleeps until
// then. Read from the table, it covers every delivery that comes due
// later (put back by this process's earlier claims or its sends, retries,
// ended leases), where a due time kept in memory forgot all but the
// earliest (the webhooks bench saw whole batches put back for 100 ms
// sent 1 s late, at the next poll).
// dueDeliveries finds the deliveries a claim leases: the oldest due
// ($3: now; $4: how many), read in order from hook_deliveries_pending,
// the index of the pending deliveries only (TestClaimPlans).
const dueDeliveries = `SELECT id FROM hook_deliveries WHERE state = 'pending' AND due_at <= $3 ORDER BY due_at, id LIMIT $4`

// nextDue finds the earliest due time after $1 of the pending deliveries,
// the first entry of hook_deliveries_pending past it.
const nextDue = `SELECT due_at FROM hook_deliveries WHERE state = 'pending' AND due_at > $1 ORDER BY due_at LIMIT 1`

func (d *Dispatcher) claim(ctx context.Context, limit int) (out []claimed, pending time.Time, err error) {
	db := d.svc.DB
	err = db.Tx(ctx, func(tx store.Q) error {
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

// admit splits a claimed batch into the deliveries to send now and the
// ones to put back: those over their hook's rate limit (which reserve a
// later send slot), and those of hooks already at perHookInFlight beyond
// the perHookWaiting that wait in memory for a send slot of their hook.
func (d *Dispatcher) admit(batch []job, now time.Time) (admitted []job, putBack []putBackItem) {
	admitted = make([]job, 0, len(batch))
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, c := range batch {
		if d.inFlight[c.HookID] >= perHookInFlight {
			if len(d.waiting[c.HookID]) < d.waitLimit(c.HookID) {
				d.waiting[c.HookID] = append(d.waiting[c.HookID], waitingJob{job: c, claimedAt: now})
				d.total++
				continue
			}
			putBack = append(putBack, putBackOf(c.claimed, c.hook, now.Add(busyHookDelay)))
			continue
		}
		if pb, ok := d.throttle(c, now); !ok {
			putBack = append(putBack, pb)
			continue
		}
		d.inFlight[c.HookID]++
		d.total++
		admitted = append(admitted, c)
	}
	return admitted, putBack
}

// throttle takes a send slot of c's hook's rate limit at now; when there
// is none, ok is false and pb puts c back until its reserved slot. d.mu
// is held.
func (d *Dispatcher) throttle(c job, now time.Time) (pb putBackItem, ok bool) {
	if d.reserved[c.ID] {
		delete(d.reserved, c.ID)
		return pb, true
	}
	if c.skip != "" {
		return pb, true
	}
	at := d.bucket(c.HookID, now).reserve(now)
	if !at.After(now) {
		return pb, true
	}
	if c.ID != 0 { // an unwritten one's reservation is its row's, once written (Dispatcher.putBack)
		d.reserve(c.ID)
	}
	pb = putBackOf(c.claimed, c.hook, at)
	pb.Throttled = true
	return pb, false
}

// reserve marks the delivery id as holding a reserved send slot; d.mu is
// held.
func (d *Dispatcher) reserve(id int64) {
	if len(d.reserved) >= 1<<16 { // rows claimed elsewhere since: forget them
		clear(d.reserved)
	}
	d.reserved[id] = true
}

// close stops starting waiting deliveries and returns them, to be put
// back due now.
func (d *Dispatcher) close() []putBackItem {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closing = true
	var items []putBackItem
	now := d.svc.now()
	for hookID, list := range d.waiting {
		for _, w := range list {
			items = append(items, putBackOf(w.claimed, w.hook, now))
			d.total--
		}
		delete(d.waiting, hookID)
	}
	return items
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
	err = s.DB.RetryTx(ctx, func(tx store.Q) error {
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

// prepareBatch prepares claimed deliveries for sending, reading the
// hooks not in hooks (and adding them). Those whose hook or payload could
// not be read (a database error, a shutdown) go back to the queue, due
// after pollInterval.
func (d *Dispatcher) prepareBatch(ctx context.Context, batch []claimed, hooks map[int64]*Hook) (jobs []job, unready []putBackItem) {
	jobs = make([]job, 0, len(batch)) // 320 bytes a job: grown by append, the most allocated of a claim
	for _, c := range batch {
		j, err := d.prepare(ctx, c, hooks)
		if err != nil {
			if ctx.Err() == nil {
				d.svc.logger().Error("prepare webhook delivery", "delivery_id", c.ID, "err", err)
			}
			unready = append(unready, putBackOf(c, hooks[c.HookID], d.svc.now().Add(pollInterval)))
			continue
		}
		jobs = append(jobs, j)
	}
	return jobs, unready
}

// prepare loads what a delivery needs (its hook, once per batch, and its
// payload) and decides whether it is sent at all (skip says why not).
func (d *Dispatcher) prepare(ctx context.Context, c claimed, hooks map[int64]*Hook) (job, error) {
	j := job{claimed: c}
	h, ok := hooks[c.HookID]
	if !ok {
		var err error
		if h, err = d.svc.hookToSend(ctx, c.HookID); err != nil && !errors.Is(err, store.ErrNotFound) {
			return j, err
		}
		hooks[c.HookID] = h
	}
	j.hook = h
	var err error
	switch {
	case h == nil || (h.DeletedAt != nil && c.Event != "meta"):
		j.skip = "hook deleted"
	case !h.Active && c.Event != "ping" && c.Event != "meta":
		j.skip = "hook inactive"
	default:
		j.request, j.skip, err = d.request(ctx, c, h)
	}
	return j, err
}

// request builds the HTTP delivery of c to h; skip says why it cannot.
func (d *Dispatcher) request(ctx context.Context, c claimed, h *Hook) (req hookshot.Request, skip string, err error) {
	body, err := d.payload(ctx, c.PayloadID)
	if errors.Is(err, store.ErrNotFound) {
		return req, "payload pruned", nil
	}
	if err != nil {
		return req, "", err
	}
	secret, err := d.svc.Secret(h)
	if err != nil {
		d.svc.logger().Error("open webhook secret (was the server key changed?)", "hook_id", h.ID, "err", err)
		return req, "failed to open the hook secret", nil
	}
	password, err := d.svc.Password(h)
	if err != nil {
		d.svc.logger().Error("open webhook password (was the server key changed?)", "hook_id", h.ID, "err", err)
		return req, "failed to open the hook password", nil
	}
	return hookshot.Request{URL: h.URL, ContentType: hookshot.ContentType(h.ContentType), Secret: secret,
		Username: h.Username, Password: password, InsecureSSL: h.InsecureSSL == "1", Event: c.Event, DeliveryGUID: c.GUID, HookID: h.ID,
		TargetID: h.TargetID(), TargetType: h.TargetType(), Payload: body}, "", nil
}

// payload returns a payload body, cached: payload rows never change.
func (d *Dispatcher) payload(ctx context.Context, id int64) ([]byte, error) {
	if body, ok := d.payloads[id]; ok {
		return body, nil
	}
	body, err := payloadBody(ctx, d.svc.DB, id)
	if err != nil {
		return nil, err
	}
	d.cachePayload(id, body)
	return body, nil
}

// cachePayload keeps a payload body for payload; claim loop only.
func (d *Dispatcher) cachePayload(id int64, body []byte) {
	if len(d.payloads) >= 1024 {
		clear(d.payloads)
	}
	d.payloads[id] = body
}

// maxIdleSenders is how many send goroutines wait for work at most.
const maxIdleSenders = 256

// startSend sends j in a goroutine of its own, counted in d.sends: a send
// goroutine waiting for work if there is one, else a new one. Started
// anew for every delivery, a send's goroutine grew its stack again through
// net/http's client each time (runtime.newstack, 1.8% of the CPU in the
// webhooks bench).
func (d *Dispatcher) startSend(j job) {
	d.sends.Add(1)
	select {
	case d.idleSenders <- j:
	default:
		go d.sendLoop(j)
	}
}

// sendLoop sends j, then each job startSend hands it, until Run closes
// idleSenders; it ends at once when maxIdleSenders wait already.
func (d *Dispatcher) sendLoop(j job) {
	for ok := true; ok; {
		d.send(j)
		if d.idle.Add(1) > maxIdleSenders {
			d.idle.Add(-1)
			return
		}
		j, ok = <-d.idleSenders
		d.idle.Add(-1)
	}
}

// send delivers one job and hands the outcome to the recorder.
func (d *Dispatcher) send(j job) {
	defer d.sends.Done()
	o := outcome{job: j}
	if j.skip == "" {
		o.result = d.sender.Send(context.Background(), j.request)
		d.explainRefusal(j.hook, &o.result)
	} else {
		o.result = hookshot.Result{Status: j.skip}
	}
	o.at = d.svc.now()
	o.requestHeaders, o.impliedHeaders = storedRequestHeaders(j, o.result.RequestHeaders)
	o.responseHeaders = responseHeadersJSON(o.result.ResponseHeaders)
	o.responseBody = strings.ToValidUTF8(string(o.result.ResponseBody), "\uFFFD")
	d.results <- o
	d.finish(j.HookID)
}

// storedRequestHeaders are the request.headers object the delivery log
// stores for a job sent with headers, and the identity header sets left
// out of it: those the job's row (GUID, event, hook) and hook (target)
// say the same of, which Delivery.SentHeaders adds back.
func storedRequestHeaders(j job, headers hookshot.Headers) (string, hookshot.IdentitySets) {
	id := hookshot.Identity{DeliveryGUID: j.GUID, Event: j.Event, HookID: j.HookID}
	if j.hook != nil {
		id.TargetID, id.TargetType = j.hook.TargetID(), j.hook.TargetType()
	}
	b, implied := headers.AppendStoredJSON(make([]byte, 0, 512), id)
	return string(b), implied
}

// AllowedHostsFlag is the command-line flag that sets Config.AllowedHosts;
// a refused delivery's status names it.
const AllowedHostsFlag = "--webhook-allowed-hosts"

// explainRefusal adds to the status of a delivery the allow list refused
// the flag value that would allow it, and logs the first refusal of each
// hook (per process) at warning level, so that an operator sees why a
// hook gets nothing.
func (d *Dispatcher) explainRefusal(h *Hook, res *hookshot.Result) {
	var refused *hookshot.RefusedError
	if !errors.As(res.Err, &refused) {
		return
	}
	fix := AllowedHostsFlag + " " + d.allow.With(refused.AllowEntry())
	res.Status += "; allow it with " + fix
	d.mu.Lock()
	first := !d.refusedHooks[h.ID]
	d.refusedHooks[h.ID] = true
	d.mu.Unlock()
	if first {
		d.svc.logger().Warn("webhook delivery refused by the allow list", "hook_id", h.ID,
			"address", refused.Addr.String(), "class", string(refused.Class), "fix", fix)
	}
}

// finish frees a send slot: it starts the next delivery waiting for the
// hook (puts back those that waited too long or are over the rate
// limit), and wakes a claim loop that waits for a slot.
func (d *Dispatcher) finish(hookID int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.inFlight[hookID]--; d.inFlight[hookID] <= 0 {
		delete(d.inFlight, hookID)
	}
	d.pace(hookID).finished(time.Now())
	d.total--
	d.startWaiting(hookID)
	if d.starved && maxInFlight-d.total >= claimRefill {
		d.starved = false
		select {
		case d.freed <- struct{}{}:
		default:
		}
	}
}

// startWaiting starts the first delivery waiting for hookID that may be
// sent now; d.mu is held. Deliveries that waited longer than maxWait, or
// are over the hook's rate limit, are put back (in a goroutine counted
// in d.sends, so that Run waits for it).
func (d *Dispatcher) startWaiting(hookID int64) {
	if d.closing || d.inFlight[hookID] >= perHookInFlight {
		return
	}
	now := d.svc.now()
	var putBack []putBackItem
	for len(d.waiting[hookID]) > 0 {
		w := d.waiting[hookID][0]
		if d.waiting[hookID] = d.waiting[hookID][1:]; len(d.waiting[hookID]) == 0 {
			delete(d.waiting, hookID)
		}
		if now.Sub(w.claimedAt) > d.maxWait {
			putBack = append(putBack, putBackOf(w.claimed, w.hook, now))
			d.total--
			continue
		}
		pb, ok := d.throttle(w.job, now)
		if !ok {
			putBack = append(putBack, pb)
			d.total--
			continue
		}
		d.inFlight[hookID]++
		d.startSend(w.job)
		break
	}
	if len(putBack) > 0 {
		d.sends.Add(1)
		go func() {
			defer d.sends.Done()
			if err := d.putBack(context.Background(), putBack); err != nil {
				d.svc.logger().Error("put back webhook deliveries", "err", err)
			}
			d.svc.Wake()
		}()
	}
}

// recordLoop records outcomes in batches until results is closed. The
// batch's array is reused: made anew for every batch (256 outcomes of a
// few hundred bytes, most batches holding a handful), it was a tenth of
// the process's allocated bytes in the webhooks bench.
func (d *Dispatcher) recordLoop(results <-chan outcome) {
	batch := make([]outcome, 0, recordBatch)
	for first := range results {
		clear(batch) // drop the last batch's hooks and payloads
		batch = append(batch[:0], first)
	fill:
		for len(batch) < recordBatch {
			select {
			case o, ok := <-results:
				if !ok {
					break fill
				}
				batch = append(batch, o)
			default:
				break fill
			}
		}
		d.recordPatiently(batch)
	}
}

// recordPatiently records a batch of outcomes, trying again for up to
// recordPatience when the database fails, and keeps this dispatcher's
// leases from ending meanwhile: a delivery whose lease ends is claimed
// and sent again, so an outcome received must not be dropped by a passing
// database error. Only when the database fails for longer do the
// deliveries stay leased, to be sent again when the lease ends.
func (d *Dispatcher) recordPatiently(batch []outcome) {
	deadline := time.Now().Add(recordPatience)
	wait := 50 * time.Millisecond
	for {
		err := d.record(batch)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			// Those handed over unwritten keep their payloads' outboxes,
			// claimed again once the lease ends.
			d.svc.logger().Error("record webhook deliveries; they are sent again when their lease ends",
				"count", len(batch), "err", err)
			return
		}
		d.svc.logger().Warn("record webhook deliveries; trying again", "count", len(batch), "err", err)
		if err := d.extendLeases(); err != nil {
			d.svc.logger().Warn("extend webhook delivery leases", "err", err)
		}
		time.Sleep(wait)
		wait = min(2*wait, 2*time.Second)
	}
}

// extendLeases moves the end of every lease this dispatcher holds to a
// full lease from now.
func (d *Dispatcher) extendLeases() error {
	ctx := context.Background()
	return d.svc.DB.RetryTx(ctx, func(tx store.Q) error {
		until := d.svc.now().Add(d.lease)
		_, err := tx.ExecContext(ctx, `UPDATE hook_deliveries SET due_at = $1 WHERE lease_owner = $2 AND state = 'pending'`,
			until, d.owner)
		if err != nil {
			return store.Normalize(err)
		}
		_, err = tx.ExecContext(ctx, `UPDATE hook_outboxes SET lease_until = $1 WHERE owner = $2`, until, d.owner)
		return store.Normalize(err)
	})
}

// record writes a batch of outcomes in one transaction: the deliveries
// (only while this dispatcher still holds their lease), their hooks'
// last_response, and the automatic retries of failures. Rows are written
// in id order (deliveries, then hooks), so that the recorders of several
// servers on one PostgreSQL database lock shared hook rows in the same
// order; a transaction PostgreSQL still aborts (deadlock, serialization
// failure) runs again. Recording is idempotent: a delivery already done,
// or leased by another claimer, is left alone and gets no retry.
func (d *Dispatcher) record(batch []outcome) error {
	ctx := context.Background()
	// In id order, through pointers: a clone of the outcomes (each a few
	// hundred bytes) to sort was a tenth of recording's CPU.
	order := make([]*outcome, len(batch))
	for i := range batch {
		order[i] = &batch[i]
	}
	slices.SortFunc(order, func(a, b *outcome) int { return cmp.Compare(a.ID, b.ID) })
	counts := unwrittenCounts(batch)
	err := d.svc.DB.RetryTx(ctx, func(tx store.Q) error {
		kept, err := d.writeOutcomes(ctx, tx, order, counts)
		if err != nil {
			return err
		}
		latest := map[int64]outcome{}
		retried := false
		for i, p := range order {
			o := *p
			if !kept[i] || o.skip != "" {
				continue
			}
			if prev, ok := latest[o.HookID]; !ok || !o.at.Before(prev.at) {
				latest[o.HookID] = o
			}
			if !o.result.OK() && o.RetriesLeft > 0 {
				if err := d.retry(ctx, tx, o); err != nil {
					return err
				}
				retried = true
			}
		}
		for _, hookID := range slices.Sorted(maps.Keys(latest)) {
			if err := recordLastResponse(ctx, tx, hookID, latest[hookID]); err != nil {
				return err
			}
		}
		if retried {
			store.AfterCommit(tx, d.svc.Wake)
		}
		return nil
	})
	if err == nil {
		d.svc.handoff.written(counts)
	}
	return err
}

// writeOutcomes writes the outcomes of a batch (in id order) in tx: a
// claimed delivery's row is marked done with it, an unwritten one's row
// is inserted done with it (those of a batch in a few statements) while
// its payload's outbox is held and its hook exists. kept[i] reports
// whether order[i] was written: false when the lease was lost (another
// claimer owns the row or the outbox now) or the hook is gone.
func (d *Dispatcher) writeOutcomes(ctx context.Context, tx store.Q, order []*outcome, counts map[int64]int) (kept []bool, err error) {
	kept = make([]bool, len(order))
	var unwritten, claimed []*outcome
	for _, o := range order {
		if o.ID == 0 {
			unwritten = append(unwritten, o)
		} else {
			claimed = append(claimed, o)
		}
	}
	if len(claimed) > 0 {
		written, err := d.recordClaimed(ctx, tx, claimed)
		if err != nil {
			return nil, err
		}
		for i, o := range order {
			kept[i] = o.ID != 0 && written[o.ID]
		}
	}
	if len(unwritten) == 0 {
		return kept, nil
	}
	held, err := d.svc.holdOutboxes(ctx, tx, d.owner, counts)
	if err != nil {
		return nil, err
	}
	hooks, err := existingHooks(ctx, tx, unwritten)
	if err != nil {
		return nil, err
	}
	var rows []*outcome
	for i, o := range order {
		if o.ID == 0 && held[o.PayloadID] && hooks[o.HookID] {
			kept[i] = true
			rows = append(rows, o)
		}
	}
	return kept, insertOutcomes(ctx, tx, rows)
}

// doneColumns is the number of parameters of one row of doneQueries.
const doneColumns = 10

// doneQueries are, per dialect, the UPDATE texts that mark claimed
// deliveries done with their outcomes, by row count (index n-1): the
// outcomes are a VALUES list ($1 is the lease owner), whose first row
// carries the columns' types on PostgreSQL, which would read untyped
// parameters as text.
var doneQueries = map[store.Dialect][outcomesPerStatement]string{
	store.SQLite:   buildDoneQueries(nil),
	store.Postgres: buildDoneQueries([]string{"bigint", "timestamptz", "double precision", "text", "integer", "text", "text", "smallint", "text", "text"}),
}

func buildDoneQueries(types []string) (q [outcomesPerStatement]string) {
	const head = `UPDATE hook_deliveries SET state = 'done', lease_owner = '', delivered_at = v.column2, duration = v.column3,
		status = v.column4, status_code = v.column5, url = v.column6, request_headers = v.column7,
		implied_headers = v.column8, response_headers = v.column9, response_body = v.column10
		FROM (VALUES `
	const tail = `) AS v
		WHERE hook_deliveries.id = v.column1 AND hook_deliveries.lease_owner = $1 AND hook_deliveries.state = 'pending'
		RETURNING hook_deliveries.id`
	for n := 1; n <= outcomesPerStatement; n++ {
		q[n-1] = head + valueRows(n, doneColumns, 2, types, "") + tail
	}
	return q
}

// recordClaimed marks claimed deliveries done with their outcomes, up to
// outcomesPerStatement in one statement, and reports those it wrote: a
// delivery whose lease was lost (another claimer owns the row now) is
// left alone. One UPDATE a delivery was 4.6% of the webhooks bench's CPU
// overloaded (-workers 32), where most deliveries are claimed.
func (d *Dispatcher) recordClaimed(ctx context.Context, tx store.Q, outcomes []*outcome) (map[int64]bool, error) {
	queries := doneQueries[d.svc.DB.Dialect]
	written := make(map[int64]bool, len(outcomes))
	for start := 0; start < len(outcomes); start += outcomesPerStatement {
		chunk := outcomes[start:min(len(outcomes), start+outcomesPerStatement)]
		args := make([]any, 0, 1+len(chunk)*doneColumns)
		args = append(args, d.owner)
		for _, o := range chunk {
			url := ""
			if o.hook != nil {
				url = o.hook.URL
			}
			args = append(args, o.ID, o.at, o.result.Duration.Seconds(), o.result.Status, o.result.StatusCode, url,
				o.requestHeaders, int64(o.impliedHeaders), o.responseHeaders, o.responseBody)
		}
		rows, err := tx.QueryContext(ctx, queries[len(chunk)-1], args...)
		if err != nil {
			return nil, store.Normalize(err)
		}
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, err
			}
			written[id] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, store.Normalize(err)
		}
	}
	return written, nil
}

// retry writes the automatic retry of a failed delivery: a new delivery
// with redelivery true, due after an exponential backoff with jitter.
func (d *Dispatcher) retry(ctx context.Context, tx store.Q, o outcome) error {
	attempt := max(d.svc.Config.Retries-o.RetriesLeft, 0)
	return insertDelivery(ctx, tx, newDelivery{HookID: o.HookID, PayloadID: o.PayloadID, GUID: o.GUID,
		Event: o.Event, Action: o.Action, Redelivery: true, RepositoryID: o.RepositoryID,
		InstallationID: o.InstallationID, URL: o.hook.URL, RetriesLeft: o.RetriesLeft - 1, DueAt: o.at.Add(d.backoff(attempt)), CreatedAt: o.at})
}

// backoff is the delay before automatic retry number attempt (from 0):
// the base doubled per attempt, at most an hour, times a jitter in [0.5, 1.5).
func (d *Dispatcher) backoff(attempt int) time.Duration {
	base := d.svc.Config.RetryBackoff
	if base <= 0 {
		base = DefaultRetryBackoff
	}
	delay := base
	for i := 0; i < attempt && delay < maxRetryBackoff; i++ {
		delay *= 2
	}
	delay = min(delay, maxRetryBackoff)
	return time.Duration(float64(delay) * (0.5 + rand.Float64()))
}

// recordLastResponse sets the hook's last_response from its newest
// outcome, unless a newer one was recorded already (another process).
func recordLastResponse(ctx context.Context, tx store.Q, hookID int64, o outcome) error {
	var code *int
	if o.result.StatusCode != 0 {
		code = &o.result.StatusCode
	}
	status := "active"
	if !o.result.OK() {
		status = "failed"
	}
	_, err := tx.ExecContext(ctx, `
		INSERT INTO hook_last_responses (hook_id, code, status, message, responded_at) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (hook_id) DO UPDATE SET code = excluded.code, status = excluded.status, message = excluded.message,
			responded_at = excluded.responded_at
		WHERE hook_last_responses.responded_at <= excluded.responded_at`,
		hookID, code, status, o.result.Status, o.at)
	return store.Normalize(err)
}

// responseHeadersJSON is the delivery log's response.headers object (nil
// is {}): names lower-cased and sorted as json.Marshal orders a map's
// keys, the values of a repeated header (or of two spellings of one
// name) joined with ", ". Written without a map or reflection; with them
// it was a third of the cost of recording a delivery.
func responseHeadersJSON(h http.Header) string {
	type field struct {
		name   string
		values []string
	}
	var fieldsArray [32]field
	fields := fieldsArray[:0]
	n := 2
	for k, v := range h {
		fields = append(fields, field{strings.ToLower(k), v})
		n += len(k) + 6
		for _, s := range v {
			n += len(s) + 2
		}
	}
	slices.SortStableFunc(fields, func(a, b field) int { return strings.Compare(a.name, b.name) })
	b := make([]byte, 0, n)
	b = append(b, '{')
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		for i+1 < len(fields) && fields[i+1].name == f.name {
			i++
			f.values = append(slices.Clip(f.values), fields[i].values...)
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = wire.AppendString(b, f.name)
		b = append(b, ':')
		if len(f.values) == 1 {
			b = wire.AppendString(b, f.values[0])
		} else {
			b = wire.AppendString(b, strings.Join(f.values, ", "))
		}
	}
	return string(append(b, '}'))
}

// pace is how fast a hook's sends finish: a moving average of the sends
// finished per second, taken over windows of paceWindow.
type pace struct {
	start time.Time // of the current window
	sends int       // sends finished in it
	rate  float64   // per second; 0 until a window ends
}

const paceWindow = 100 * time.Millisecond

// finished counts a send that finished at now.
func (p *pace) finished(now time.Time) {
	p.sends++
	if el := now.Sub(p.start); el >= paceWindow {
		r := float64(p.sends) / el.Seconds()
		if p.rate > 0 {
			r = (p.rate + r) / 2
		}
		p.rate, p.start, p.sends = r, now, 0
	}
}

// pace returns the pace of a hook; d.mu is held.
func (d *Dispatcher) pace(hookID int64) *pace {
	p, ok := d.paces[hookID]
	if !ok {
		if len(d.paces) >= 65536 {
			clear(d.paces)
		}
		p = &pace{start: time.Now()}
		d.paces[hookID] = p
	}
	return p
}

// waitLimit is how many claimed deliveries to a hook at perHookInFlight
// may wait in memory: as many as the hook sends in waitSpan, between
// perHookWaiting and maxPerHookWaiting. A hook that stopped answering keeps its last pace
// until a send finishes; its waiting deliveries go back to the table
// after maxWait. d.mu is held.
func (d *Dispatcher) waitLimit(hookID int64) int {
	n := int(d.pace(hookID).rate * waitSpan.Seconds())
	return min(max(n, perHookWaiting), maxPerHookWaiting)
}

// bucket is a hook's token bucket: rate tokens per second, at most one
// second's worth saved. Tokens may go negative: each reservation past the
// saved ones takes the next free slot.
type bucket struct {
	rate   float64
	tokens float64
	last   time.Time
}

func (d *Dispatcher) bucket(hookID int64, now time.Time) *bucket {
	b, ok := d.buckets[hookID]
	if !ok {
		if len(d.buckets) >= 65536 {
			clear(d.buckets)
		}
		b = &bucket{rate: d.rate, tokens: max(d.rate, 1), last: now}
		d.buckets[hookID] = b
	}
	return b
}

// reserve takes a token and returns when it may be used: now when one
// was saved, later otherwise. A zero rate never throttles.
func (b *bucket) reserve(now time.Time) time.Time {
	if b.rate <= 0 {
		return now
	}
	b.tokens = min(b.tokens+now.Sub(b.last).Seconds()*b.rate, max(b.rate, 1))
	b.last = now
	b.tokens--
	if b.tokens >= 0 {
		return now
	}
	return now.Add(time.Duration(-b.tokens / b.rate * float64(time.Second)))
}

// ReceiverRoots returns the roots that verify HTTPS receivers: nil (the
// system's) without a CA file, else the system's plus the file's
// certificates.
func ReceiverRoots(caFile string) (*x509.CertPool, error) {
	if caFile == "" {
		return nil, nil
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s holds no PEM certificate", caFile)
	}
	return pool, nil
}

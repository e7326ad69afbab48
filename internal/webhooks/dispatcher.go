package webhooks

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

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

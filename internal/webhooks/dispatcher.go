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

// Dispatcher sends due deliveries. Its work is in four parts: claiming
// (claim.go), admission and throttling (admit.go), sending (send.go),
// and recording (record.go), with the release of deliveries not sent now
// (putback.go).
//
// The hand-off's contract, which those parts keep: a pending delivery
// belongs to the one claimer its lease names, from its claim until its
// outcome or its release is written.
//
//   - Claim. A claim leases due rows of hook_deliveries: due_at moves to
//     the lease's end (lease: the delivery timeout and 10 s) and
//     lease_owner names this dispatcher. A delivery handed over unwritten
//     (ID 0) is under the lease of its payload's outbox instead (see
//     handoff and outbox.go). On PostgreSQL several processes claim with
//     SKIP LOCKED and never hold the same delivery at once.
//   - In memory, a claimed delivery is in one place at a time: in the
//     claim loop while it is prepared and admitted, waiting for a send
//     slot of its hook (waiting, for at most maxWait, so that a send
//     started from there ends within the lease), in a send goroutine, or
//     in the recorder's batch. Those waiting or sending count in total,
//     at most maxInFlight.
//   - Outcome. The recorder marks a delivery sent or skipped done with
//     its outcome, unless another claimer took its lease since: that one
//     owns it then, and the outcome is dropped. A failed send with
//     retries left writes, in the same transaction, its automatic retry:
//     a new delivery (redelivery) due after a backoff.
//   - Release. A delivery not sent now (its hook at perHookInFlight beyond
//     those waiting in memory, over the hook's rate limit, waiting longer
//     than maxWait, its hook or payload unreadable) is put back: its lease cleared and due_at set
//     to when it may be claimed again (throttled_at too when over the
//     rate limit).
//   - Failure of the database. A batch of outcomes is tried again for
//     recordPatience, the leases extended meanwhile; after that, or when
//     a put-back fails, the deliveries stay leased until their lease
//     ends.
//   - Shutdown (Run's ctx done). Claims stop; the deliveries handed over
//     but not started and those waiting in memory are put back due now;
//     the sends under way finish (each bounded by the delivery timeout)
//     and are recorded before Run returns.
//   - Crash. What was in memory is lost, not the deliveries: a row whose
//     lease ends comes due again, and an outbox whose lease ends is
//     claimed again for its hooks that have no delivery row. A delivery
//     sent but not recorded is sent again: deliveries are at least once.
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
	d.release(context.Background(), append(dueNow(d.svc.handoff.detach(), d.svc.now()), d.close()...))
	d.sends.Wait()
	close(d.idleSenders)
	close(results)
	<-recorded
}

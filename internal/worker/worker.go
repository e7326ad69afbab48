// Package worker is the loop every background worker of the server
// shares: organization deletion (orgs.Deleter), the pull request
// mergeability checker (pulls.Checker), git maintenance and push recovery
// (githost.Maintainer, githost.Recoverer), the migration exporter
// (orgmigration.Exporter) and the pruners of events (feeds.Pruner) and
// of webhook deliveries (webhooks.Pruner). The webhook Dispatcher keeps
// its own loop: it claims deliveries in batches and admits them per hook,
// not one item at a time.
//
// The loop, as each of them ran it on its own before:
//
//   - Schedule (Loop): a pass at start (or, for a worker whose caller
//     runs the first pass itself, none), then a pass whenever the worker
//     is woken in process (a Signal: a request committed on this server)
//     or its poll interval ticks (work made due by other servers, by
//     time, or by a lease that expired), until the context is done.
//   - Pass (Drain): claim one due item from the worker's work table with
//     a lease (an UPDATE that sets lease_owner to the process's id and
//     lease_until to now plus the lease, over a row picked with
//     store.DB.SkipLocked, so that several servers share the table and
//     never take the same row), run it, and finish it (record its outcome
//     and end the lease, in the transaction of the outcome where it can);
//     then the next, until none is due, a claim fails or the context is
//     done. The SQL of claiming and finishing is the worker's (a Queue):
//     each table says differently what is due.
//   - Renewal (Leased): a worker whose item may outlast its lease renews
//     the lease while it runs, and stops the item when the lease is no
//     longer its own (another server claimed it after it expired).
//   - Errors: a failed claim ends the pass; the next tick tries again. A
//     failed item stays leased and is claimed again, here or elsewhere,
//     once its lease expired: the lease is the back-off. Errors that come
//     while the context is done are the shutdown's and are not reported.
//
// The contract every worker keeps through this package:
//
//   - Crash: a process killed mid-item leaves the row leased; the lease
//     expires and another pass (this server's next run, or another
//     server's) claims it again, so no work is lost; items must be safe to
//     run again. A server that knows itself its database's only one ends
//     the dead process's leases at start (the workers' ReleaseLeases).
//   - Shutdown: once the context is done no new item is claimed; the item
//     running sees the same context, and either finishes or stops and
//     leaves its row leased for a later claim, then Run returns.
//
// The package imports the standard library alone; the queues live with
// their tables.
package worker

import (
	"context"
	"errors"
	"time"
)

// Worker is a background worker the server starts with the others and
// stops by cancelling ctx: Run returns once ctx is done and the work
// under way has finished or been left to its lease.
type Worker interface {
	Run(ctx context.Context)
}

// Queue is a work table claimed with leases, as one worker sees it.
type Queue[T any] interface {
	// Claim leases one due item to this process and returns it; ok is
	// false when none is due. An item whose lease expired is due again.
	Claim(ctx context.Context) (item T, ok bool, err error)
	// Run does the claimed item's work and finishes it: records its
	// outcome and ends its lease. An error leaves the item leased, to be
	// claimed again once the lease expired. ErrSkipped leaves it as it is
	// without counting as done or as a failure.
	Run(ctx context.Context, item T) error
}

// ErrSkipped is what Queue.Run returns for an item it leaves alone (a
// repository locked for a migration, a push still under way here): it is
// neither done nor a failure.
var ErrSkipped = errors.New("worker: item skipped")

// Drain claims and runs q's items one after the other until none is due,
// a claim fails or ctx is done, and returns how many ran to the end (Run
// returned nil) with the error of the claim that ended it, nil when none
// did or ctx was done. failed, when not nil, is called with each item
// whose Run failed while ctx was not done.
func Drain[T any](ctx context.Context, q Queue[T], failed func(item T, err error)) (int, error) {
	done := 0
	for ctx.Err() == nil {
		item, ok, err := q.Claim(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return done, nil
			}
			return done, err
		}
		if !ok {
			return done, nil
		}
		switch err := q.Run(ctx, item); {
		case err == nil:
			done++
		case errors.Is(err, ErrSkipped):
		case failed != nil && ctx.Err() == nil:
			failed(item, err)
		}
	}
	return done, nil
}

// Loop is a worker's schedule: it runs Pass whenever work may be due.
type Loop struct {
	// Pass does the work due now (usually a Drain) and returns.
	Pass func(ctx context.Context)
	// Interval is how often Pass runs without a wake. It must be positive.
	Interval time.Duration
	// Wake, when not nil, runs Pass at once (see Signal).
	Wake <-chan struct{}
	// NoPassAtStart leaves the first pass to the caller (one that must
	// finish before the server takes requests, say): the first pass is
	// then the first tick's or wake's.
	NoPassAtStart bool
}

// Run runs Pass at start (unless NoPassAtStart), then whenever woken or
// every Interval, until ctx is done. The interval is counted from Run's
// start, as a ticker's: a pass longer than the interval is followed by
// the next at once. A pass under way when ctx is done finishes (Pass sees
// the same ctx) before Run returns.
func (l Loop) Run(ctx context.Context) {
	ticker := time.NewTicker(l.Interval)
	defer ticker.Stop()
	if !l.NoPassAtStart && ctx.Err() == nil {
		l.Pass(ctx)
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.Wake:
		case <-ticker.C:
		}
		l.Pass(ctx)
	}
}

// Signal wakes a Loop from the code that made work due. Wakes never
// block, and wakes that come while the loop is busy merge into one pass.
// The zero Signal is not usable: make one with NewSignal.
type Signal struct {
	c chan struct{}
}

// NewSignal returns a Signal no one has woken.
func NewSignal() *Signal { return &Signal{c: make(chan struct{}, 1)} }

// Wake makes the loop listening on C run a pass soon; it never blocks.
func (s *Signal) Wake() {
	select {
	case s.c <- struct{}{}:
	default:
	}
}

// C is the channel a Loop's Wake listens on.
func (s *Signal) C() <-chan struct{} { return s.c }

// ErrLeaseLost is the cause of the context Leased returns once the item's
// lease is no longer this process's.
var ErrLeaseLost = errors.New("worker: lease lost")

// Leased returns the context to run one claimed item in: until stop is
// called it renews the item's lease every interval with renew, which
// reports whether the lease is still this process's (its UPDATE matched
// the row with this process's lease owner). When it is not, the context
// is cancelled with cause ErrLeaseLost (context.Cause) and renewal ends;
// the item must then stop and leave the row to its new holder. A renewal
// error goes to failed (when not nil and ctx is not done) and renewal
// goes on at the next interval. Call stop once the item is finished.
func Leased(ctx context.Context, interval time.Duration, renew func(context.Context) (bool, error),
	failed func(error)) (leased context.Context, stop context.CancelFunc) {
	leased, cancel := context.WithCancelCause(ctx)
	go func() {
		ticker := time.NewTicker(interval)
		defer ticker.Stop()
		for {
			select {
			case <-leased.Done():
				return
			case <-ticker.C:
			}
			held, err := renew(leased)
			if err != nil {
				if failed != nil && leased.Err() == nil {
					failed(err)
				}
				continue
			}
			if !held {
				cancel(ErrLeaseLost)
				return
			}
		}
	}()
	return leased, func() { cancel(nil) }
}

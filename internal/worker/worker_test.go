package worker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// table is a work table in memory with the leases of the real ones:
// a row is due while it is not done and unleased or its lease expired.
type table struct {
	mu    sync.Mutex
	lease time.Duration
	rows  map[int]*row
	// run is what running a row does (nil: nothing).
	run func(ctx context.Context, id int) error
	// claimErr, when set, fails the claims.
	claimErr error
	// skew is added to the clock: advance moves time on.
	skew time.Duration
}

type row struct {
	owner string
	until time.Time
	done  bool
	runs  int
}

func newTable(lease time.Duration, n int) *table {
	t := &table{lease: lease, rows: map[int]*row{}}
	for id := 1; id <= n; id++ {
		t.rows[id] = &row{}
	}
	return t
}

// queue is one process's view of the table, with its lease owner.
type queue struct {
	t     *table
	owner string
}

func (q queue) Claim(ctx context.Context) (int, bool, error) {
	q.t.mu.Lock()
	defer q.t.mu.Unlock()
	if q.t.claimErr != nil {
		return 0, false, q.t.claimErr
	}
	now := time.Now().Add(q.t.skew)
	for id := 1; id <= len(q.t.rows); id++ {
		r := q.t.rows[id]
		if !r.done && (r.owner == "" || r.until.Before(now)) {
			r.owner, r.until = q.owner, now.Add(q.t.lease)
			r.runs++
			return id, true, nil
		}
	}
	return 0, false, nil
}

func (q queue) Run(ctx context.Context, id int) error {
	if q.t.run != nil {
		if err := q.t.run(ctx, id); err != nil {
			return err
		}
	}
	q.t.mu.Lock()
	defer q.t.mu.Unlock()
	if r := q.t.rows[id]; r.owner == q.owner {
		r.done, r.owner = true, ""
	}
	return nil
}

// advance moves the table's clock on by d.
func (t *table) advance(d time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.skew += d
}

func (t *table) row(id int) row {
	t.mu.Lock()
	defer t.mu.Unlock()
	return *t.rows[id]
}

func TestDrainRunsEveryDueItem(t *testing.T) {
	t.Parallel()
	tab := newTable(time.Minute, 3)
	n, err := Drain[int](context.Background(), queue{tab, "a"}, nil)
	if n != 3 || err != nil {
		t.Fatalf("Drain = %d, %v; want 3, nil", n, err)
	}
	for id := 1; id <= 3; id++ {
		if r := tab.row(id); !r.done || r.runs != 1 {
			t.Errorf("row %d = %+v, want done after one run", id, r)
		}
	}
	if n, err := Drain[int](context.Background(), queue{tab, "a"}, nil); n != 0 || err != nil {
		t.Fatalf("second Drain = %d, %v; want 0, nil", n, err)
	}
}

func TestDrainFailedAndSkippedItemsStayLeased(t *testing.T) {
	t.Parallel()
	tab := newTable(time.Minute, 3)
	boom := errors.New("boom")
	tab.run = func(_ context.Context, id int) error {
		switch id {
		case 1:
			return boom
		case 2:
			return fmt.Errorf("locked: %w", ErrSkipped)
		}
		return nil
	}
	var failed []int
	n, err := Drain[int](context.Background(), queue{tab, "a"}, func(id int, err error) {
		if !errors.Is(err, boom) {
			t.Errorf("failed(%d, %v), want boom", id, err)
		}
		failed = append(failed, id)
	})
	if n != 1 || err != nil {
		t.Fatalf("Drain = %d, %v; want 1, nil", n, err)
	}
	if len(failed) != 1 || failed[0] != 1 {
		t.Errorf("failed items = %v, want [1]", failed)
	}
	for _, id := range []int{1, 2} {
		if r := tab.row(id); r.done || r.owner != "a" {
			t.Errorf("row %d = %+v, want left leased to a", id, r)
		}
	}
}

func TestDrainReturnsClaimError(t *testing.T) {
	t.Parallel()
	tab := newTable(time.Minute, 1)
	tab.claimErr = errors.New("database is down")
	if n, err := Drain[int](context.Background(), queue{tab, "a"}, nil); n != 0 || err != tab.claimErr {
		t.Fatalf("Drain = %d, %v; want 0 and the claim's error", n, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if n, err := Drain[int](ctx, queue{tab, "a"}, nil); n != 0 || err != nil {
		t.Fatalf("Drain after cancel = %d, %v; want 0, nil", n, err)
	}
}

// TestCrashedItemIsClaimedAgainOnceItsLeaseExpired is the crash
// contract: a process stopped mid-item leaves it leased, and another
// process claims it once the lease expired, not before.
func TestCrashedItemIsClaimedAgainOnceItsLeaseExpired(t *testing.T) {
	t.Parallel()
	tab := newTable(time.Hour, 1)
	started := make(chan struct{})
	tab.run = func(ctx context.Context, id int) error {
		if tab.row(id).owner == "a" {
			close(started)
			<-ctx.Done() // process a dies here
			return ctx.Err()
		}
		return nil
	}
	ctxA, killA := context.WithCancel(context.Background())
	doneA := make(chan int)
	go func() {
		n, _ := Drain[int](ctxA, queue{tab, "a"}, func(int, error) { t.Error("a failure reported after the stop") })
		doneA <- n
	}()
	<-started
	if n, _ := Drain[int](context.Background(), queue{tab, "b"}, nil); n != 0 {
		t.Fatalf("b ran %d items under a's live lease", n)
	}
	killA()
	if n := <-doneA; n != 0 {
		t.Fatalf("a ran %d items", n)
	}
	if r := tab.row(1); r.done || r.owner != "a" {
		t.Fatalf("row after a's stop = %+v, want leased to a", r)
	}
	if n, _ := Drain[int](context.Background(), queue{tab, "b"}, nil); n != 0 {
		t.Fatalf("b ran %d items under a's unexpired lease", n)
	}
	tab.advance(time.Hour + time.Second)
	if n, _ := Drain[int](context.Background(), queue{tab, "b"}, nil); n != 1 {
		t.Fatalf("b ran %d items once a's lease expired, want 1", n)
	}
	if r := tab.row(1); !r.done || r.runs != 2 {
		t.Fatalf("row = %+v, want done after two runs", r)
	}
}

// TestShutdownClaimsNothingNew: once the context is done, the item under
// way finishes and no other is claimed.
func TestShutdownClaimsNothingNew(t *testing.T) {
	t.Parallel()
	tab := newTable(time.Minute, 2)
	ctx, cancel := context.WithCancel(context.Background())
	tab.run = func(_ context.Context, id int) error {
		cancel() // the shutdown comes during the first item, which finishes
		return nil
	}
	if n, err := Drain[int](ctx, queue{tab, "a"}, nil); n != 1 || err != nil {
		t.Fatalf("Drain = %d, %v; want 1, nil", n, err)
	}
	if r := tab.row(2); r.runs != 0 {
		t.Fatalf("row 2 = %+v, want never claimed", r)
	}
}

func TestLoopPassesAtStartOnWakeAndOnTick(t *testing.T) {
	t.Parallel()
	passes := make(chan struct{}, 10)
	wake := NewSignal()
	ctx, cancel := context.WithCancel(context.Background())
	returned := make(chan struct{})
	go func() {
		Loop{Pass: func(context.Context) { passes <- struct{}{} }, Interval: time.Hour, Wake: wake.C()}.Run(ctx)
		close(returned)
	}()
	<-passes // at start
	wake.Wake()
	<-passes // on wake
	cancel()
	<-returned

	ticks := make(chan struct{}, 10)
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	go Loop{Pass: func(context.Context) { ticks <- struct{}{} }, Interval: 10 * time.Millisecond}.Run(ctx)
	for range 3 {
		<-ticks // at start, then on the ticks
	}
}

func TestLoopNoPassAtStart(t *testing.T) {
	t.Parallel()
	var passes atomic.Int32
	wake := NewSignal()
	ctx, cancel := context.WithCancel(context.Background())
	returned := make(chan struct{})
	passed := make(chan struct{}, 1)
	go func() {
		Loop{Pass: func(context.Context) { passes.Add(1); passed <- struct{}{} }, Interval: time.Hour,
			Wake: wake.C(), NoPassAtStart: true}.Run(ctx)
		close(returned)
	}()
	wake.Wake()
	<-passed
	cancel()
	<-returned
	if n := passes.Load(); n != 1 {
		t.Fatalf("passes = %d, want 1 (the wake's alone)", n)
	}
}

func TestLoopFinishesThePassUnderWayOnShutdown(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	inPass := make(chan struct{})
	var finished atomic.Bool
	returned := make(chan struct{})
	go func() {
		Loop{Pass: func(ctx context.Context) {
			close(inPass)
			<-ctx.Done()
			finished.Store(true)
		}, Interval: time.Hour}.Run(ctx)
		close(returned)
	}()
	<-inPass
	cancel()
	<-returned
	if !finished.Load() {
		t.Fatal("Run returned before its pass")
	}
}

func TestSignalMergesWakes(t *testing.T) {
	t.Parallel()
	s := NewSignal()
	for range 3 {
		s.Wake() // never blocks
	}
	<-s.C()
	select {
	case <-s.C():
		t.Fatal("three wakes made two passes")
	default:
	}
}

func TestLeasedRenewsUntilStopped(t *testing.T) {
	t.Parallel()
	var renewals atomic.Int32
	renewed := make(chan struct{}, 3)
	ctx, stop := Leased(context.Background(), 5*time.Millisecond, func(context.Context) (bool, error) {
		renewals.Add(1)
		select {
		case renewed <- struct{}{}:
		default: // the test has seen enough
		}
		return true, nil
	}, nil)
	for range 3 {
		select {
		case <-renewed:
		case <-time.After(5 * time.Second):
			t.Fatalf("%d renewals, want 3", renewals.Load())
		}
	}
	stop()
	if ctx.Err() == nil || context.Cause(ctx) != context.Canceled {
		t.Fatalf("after stop: err %v, cause %v; want cancelled", ctx.Err(), context.Cause(ctx))
	}
}

func TestLeasedCancelsWhenTheLeaseIsLost(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	var failures atomic.Int32
	renewErr := errors.New("renew failed")
	ctx, stop := Leased(context.Background(), 5*time.Millisecond, func(context.Context) (bool, error) {
		switch calls.Add(1) {
		case 1:
			return false, renewErr // an error: renewal goes on
		case 2:
			return true, nil
		}
		return false, nil // another process holds the row now
	}, func(err error) {
		if err != renewErr {
			t.Errorf("failed(%v), want the renewal's error", err)
		}
		failures.Add(1)
	})
	defer stop()
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the context outlived its lease")
	}
	if cause := context.Cause(ctx); cause != ErrLeaseLost {
		t.Fatalf("cause = %v, want ErrLeaseLost", cause)
	}
	if n := failures.Load(); n != 1 {
		t.Fatalf("failures = %d, want 1", n)
	}
}

package store

import (
	"context"
	"database/sql"
	"errors"
	"runtime"
	"sync"
	"time"
)

// Group commit (SQLite).
//
// SQLite has one writer at a time, and committing costs about as much as
// the statements of a typical API write: every page the transaction
// changed is written to the WAL, one system call each. The transactions
// of this process therefore queue for the write lock in arrival order (a
// writeQueue, instead of polling SQLite's busy handler, which under load
// starves unlucky writers past busy_timeout), and the one that gets the
// lock leads a group: it runs its own fn in a new SQLite transaction,
// then lets the transactions that queued meanwhile run theirs in the same
// SQLite transaction, one after the other, each inside a savepoint, and
// commits once for all of them. A page that several members change (the
// last page of a table they append to, an index page) is written once.
//
// Each member keeps what Tx promises: its writes are durable when Tx
// returns nil (members return only after the group's commit), and none
// of them are when it returns an error (a member whose fn fails or
// panics rolls back to its savepoint; a failed commit fails every
// member). A member sees the writes of the members before it, as it
// would have seen them committed had they run one after the other: the
// group is that serial order. A transaction that finds no one waiting
// commits at once, with no savepoint.
//
// Before a group ends for want of waiting transactions, its leader yields
// the processor once (nextMemberAfterYield): goroutines that are runnable
// then (API handlers about to write, a recorder with a batch) reach the
// queue and join, where they would have led a group of their own right
// after. With nothing else runnable the yield returns at once; under load
// it keeps the write lock for the turns of a few goroutines. Larger
// groups mean fewer commits, hence fewer WAL writes for the pages their
// members share.

// Bounds of a group: how many transactions share one commit, and how
// long after its BEGIN a group still takes a waiting transaction in
// (each member's result waits for the commit).
const (
	maxGroupMembers = 64
	maxGroupSpan    = 5 * time.Millisecond
)

// writeQueue orders the transactions of one SQLite database for its write
// lock.
type writeQueue struct {
	span time.Duration // maxGroupSpan; tests set another
	// conn is the connection every group's transaction runs on. SQLite
	// drops a connection's whole page cache when another connection has
	// written since its last transaction: with groups on any connection
	// of the pool, each found its cache dropped by the one before and
	// read the index pages it writes back from the WAL and the file.
	conn    *sql.Conn
	mu      sync.Mutex
	busy    bool      // a group holds the write lock
	waiting []*waiter // in arrival order
}

// waiter is a transaction waiting for its turn.
type waiter struct {
	turn chan *group // buffered 1: nil to lead a new group, or the group to join
	// alone: the turn is wanted without a group (the checkpointer's); it
	// is never handed a group to join, and a gathering group ends at it.
	alone bool
}

// group is one SQLite transaction shared by the transactions of a group.
type group struct {
	tx  *sql.Tx
	ran chan struct{} // a member has run its fn (unbuffered: the leader waits for each)
	// broken is set by a member whose savepoint could not be released or
	// rolled back: the group's transaction is rolled back, not committed.
	broken bool
	done   chan struct{} // closed once the transaction has ended
	err    error         // why it did not commit; read after done
}

// errGroupBroken fails the members of a group whose transaction had to be
// rolled back because one member's writes could not be undone alone.
var errGroupBroken = errors.New("store: transaction rolled back: a savepoint of its group failed")

// enter waits for the caller's turn to write: it returns nil to lead a
// new group, or the group to join. It fails when ctx ends or the wait
// passes writeWaitTimeout (a transaction started inside another one
// would otherwise wait forever); a caller that fails never runs.
func (q *writeQueue) enter(ctx context.Context) (*group, error) {
	return q.wait(ctx, &waiter{turn: make(chan *group, 1)})
}

// enterAlone waits for a turn of the caller's own, never a group's: when
// it returns nil no transaction of this process holds the write lock or
// takes it until the caller calls handOff.
func (q *writeQueue) enterAlone(ctx context.Context) error {
	_, err := q.wait(ctx, &waiter{turn: make(chan *group, 1), alone: true})
	return err
}

// wait queues w and waits for its turn (see enter).
func (q *writeQueue) wait(ctx context.Context, w *waiter) (*group, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	q.mu.Lock()
	if !q.busy {
		q.busy = true
		q.mu.Unlock()
		return nil, nil
	}
	q.waiting = append(q.waiting, w)
	q.mu.Unlock()

	timer := time.NewTimer(writeWaitTimeout)
	defer timer.Stop()
	var err error
	select {
	case g := <-w.turn:
		return g, nil
	case <-ctx.Done():
		err = ctx.Err()
	case <-timer.C:
		err = ErrBusy
	}
	if q.remove(w) {
		return nil, err
	}
	// Its turn came as it gave up: it passes it on without running.
	if g := <-w.turn; g != nil {
		g.ran <- struct{}{}
	} else {
		q.handOff()
	}
	return nil, err
}

// remove takes w out of the queue, reporting whether it was still there.
func (q *writeQueue) remove(w *waiter) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	for i, x := range q.waiting {
		if x == w {
			q.waiting = append(q.waiting[:i], q.waiting[i+1:]...)
			return true
		}
	}
	return false
}

// nextMember takes the first waiting transaction out of the queue to join
// a group, or returns nil when none waits or the first wants a turn alone.
func (q *writeQueue) nextMember() *waiter {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.waiting) > 0 && q.waiting[0].alone {
		return nil
	}
	return q.popLocked()
}

// nextMemberAfterYield is nextMember, asked again after the caller
// yields the processor when none waits: a transaction another goroutine
// was about to start joins the group instead of leading the next one.
func (q *writeQueue) nextMemberAfterYield() *waiter {
	if w := q.nextMember(); w != nil {
		return w
	}
	runtime.Gosched()
	return q.nextMember()
}

// popLocked takes the first waiting transaction out of the queue (nil
// when none waits); q.mu is held.
func (q *writeQueue) popLocked() *waiter {
	if len(q.waiting) == 0 {
		return nil
	}
	w := q.waiting[0]
	q.waiting[0] = nil
	q.waiting = q.waiting[1:]
	return w
}

// handOff passes the write lock to the first waiting transaction, which
// leads the next group, or frees it when none waits.
func (q *writeQueue) handOff() {
	q.mu.Lock()
	w := q.popLocked()
	q.busy = w != nil
	q.mu.Unlock()
	if w != nil {
		w.turn <- nil
	}
}

// groupTx is Tx on SQLite: it waits for its turn and leads or joins a
// group.
func (db *DB) groupTx(ctx context.Context, fn func(tx *Tx) error, uncached *[]string) error {
	g, err := db.writes.enter(ctx)
	if err != nil {
		return err
	}
	if g != nil {
		return db.join(g, fn, uncached)
	}
	return db.lead(ctx, fn, uncached)
}

// lead begins a transaction, runs fn in it, lets the waiting
// transactions join (gather) and commits.
func (db *DB) lead(ctx context.Context, fn func(tx *Tx) error, uncached *[]string) error {
	handedOff := false
	defer func() {
		if !handedOff { // an error or a panic before the commit
			db.writes.handOff()
		}
	}()
	// The transaction outlives the leader's context: the other members'
	// writes are in it.
	sqlTx, err := db.writes.conn.BeginTx(context.WithoutCancel(ctx), nil)
	if err != nil {
		return Normalize(err)
	}
	tx := &Tx{Tx: sqlTx, db: db, now: Now()}
	defer func() { *uncached = tx.uncached }()
	if err := runOrRollback(sqlTx, tx, fn); err != nil {
		return err
	}
	g := &group{tx: sqlTx, ran: make(chan struct{}), done: make(chan struct{})}
	db.gather(g, time.Now().Add(db.writes.span))
	if g.broken {
		_ = sqlTx.Rollback()
		g.err = errGroupBroken
	} else if err := sqlTx.Commit(); err != nil {
		g.err = Normalize(err)
	}
	close(g.done)
	db.writes.handOff()
	handedOff = true
	if g.err != nil {
		return g.err
	}
	db.committed(tx)
	return nil
}

// runOrRollback runs fn, rolling sqlTx back when it fails or panics.
func runOrRollback(sqlTx *sql.Tx, tx *Tx, fn func(tx *Tx) error) (err error) {
	ok := false
	defer func() {
		if !ok {
			_ = sqlTx.Rollback()
		}
	}()
	if err := fn(tx); err != nil {
		return err
	}
	ok = true
	return nil
}

// gather lets the waiting transactions run in g, one after the other,
// until none waits even after a yield, maxGroupMembers share it, the
// group passes its end or a member broke it.
func (db *DB) gather(g *group, end time.Time) {
	for n := 1; n < maxGroupMembers && !g.broken && time.Now().Before(end); n++ {
		w := db.writes.nextMemberAfterYield()
		if w == nil {
			return
		}
		w.turn <- g
		<-g.ran
	}
}

// join runs fn as a member of g and waits for g's commit.
func (db *DB) join(g *group, fn func(tx *Tx) error, uncached *[]string) error {
	tx := &Tx{Tx: g.tx, db: db, now: Now()}
	err := runInSavepoint(g, tx, fn)
	*uncached = tx.uncached
	if err != nil {
		return err
	}
	<-g.done
	if g.err != nil {
		return g.err
	}
	db.committed(tx)
	return nil
}

// runInSavepoint runs fn inside a savepoint of g's transaction, rolling
// back to it when fn fails or panics, and tells the leader when it is
// done (also on a panic, which goes on up the member's stack).
func runInSavepoint(g *group, tx *Tx, fn func(tx *Tx) error) (err error) {
	defer func() { g.ran <- struct{}{} }()
	if _, err := g.tx.Exec("SAVEPOINT member"); err != nil {
		g.broken = true
		return Normalize(err)
	}
	ok := false
	defer func() {
		if !ok {
			_, rollbackErr := g.tx.Exec("ROLLBACK TO member")
			g.broken = g.broken || rollbackErr != nil
		}
		if _, releaseErr := g.tx.Exec("RELEASE member"); releaseErr != nil {
			g.broken = true
		}
	}()
	if err := fn(tx); err != nil {
		return err
	}
	ok = true
	return nil
}

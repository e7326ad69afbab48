package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"forgeapi/internal/testwait"
)

// openSQLiteForTest opens a SQLite database in a temporary directory with
// one table, items(name TEXT PRIMARY KEY).
//
// Its checkpointer is stopped: the group tests count the transactions
// waiting in the write queue, where the checkpointer also takes turns.
func openSQLiteForTest(t *testing.T) *DB {
	t.Helper()
	db, _ := openSQLiteFile(t)
	db.checkpoints.close()
	db.checkpoints = nil
	return db
}

// openSQLiteFile is openSQLiteForTest, also returning the database file.
func openSQLiteFile(t *testing.T) (*DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "test.db")
	db, err := openSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.ExecContext(context.Background(), "CREATE TABLE items (name TEXT PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	return db, path
}

func insertItem(ctx context.Context, q Q, name string) error {
	_, err := q.ExecContext(ctx, "INSERT INTO items (name) VALUES ($1)", name)
	return err
}

// committedItems reads the items as another connection sees them.
func committedItems(t *testing.T, db *DB) map[string]bool {
	t.Helper()
	rows, err := db.DB.Query("SELECT name FROM items")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	seen := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		seen[name] = true
	}
	return seen
}

// holdWriteLock starts a transaction that writes "leader" and waits for
// release before it returns; it returns when the transaction is running,
// and the channel that receives its result.
func holdWriteLock(t *testing.T, db *DB, release <-chan struct{}) <-chan error {
	t.Helper()
	running := make(chan struct{})
	result := make(chan error, 1)
	go func() {
		result <- db.Tx(context.Background(), func(tx *Tx) error {
			if err := insertItem(context.Background(), tx, "leader"); err != nil {
				return err
			}
			close(running)
			<-release
			return nil
		})
	}()
	<-running
	return result
}

// awaitWaiting waits until n transactions queue for the write lock.
func awaitWaiting(t *testing.T, db *DB, n int) {
	t.Helper()
	testwait.For(t, fmt.Sprintf("%d transactions to queue for the write lock", n), func() error {
		db.writes.mu.Lock()
		waiting := len(db.writes.waiting)
		db.writes.mu.Unlock()
		if waiting != n {
			return fmt.Errorf("%d waiting", waiting)
		}
		return nil
	})
}

// TestGroupCommitKeepsEachMembersOutcome queues transactions behind one
// that holds the write lock, so that they run as one group in its SQLite
// transaction: members that succeed commit, a member that fails or panics
// leaves none of its writes, and each hears of its own outcome only.
func TestGroupCommitKeepsEachMembersOutcome(t *testing.T) {
	db := openSQLiteForTest(t)
	db.writes.span = time.Hour // one group, however slow the machine
	release := make(chan struct{})
	leader := holdWriteLock(t, db, release)

	type result struct {
		err       error
		panicked  any
		committed bool // its AfterCommit ran
		sawLeader bool // another connection saw the leader's row while it ran
	}
	kinds := []string{"ok", "fail", "ok", "panic", "ok", "conflict", "ok"}
	results := make([]result, len(kinds))
	var wg sync.WaitGroup
	for i, kind := range kinds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { results[i].panicked = recover() }()
			name := fmt.Sprintf("%d-%s", i, kind)
			results[i].err = db.Tx(context.Background(), func(tx *Tx) error {
				results[i].sawLeader = committedItems(t, db)["leader"]
				tx.AfterCommit(func() { results[i].committed = true })
				if err := insertItem(context.Background(), tx, name); err != nil {
					return err
				}
				switch kind {
				case "fail":
					return errors.New("refused")
				case "panic":
					panic("member panics")
				case "conflict": // a failing statement after a write of its own
					return insertItem(context.Background(), tx, "leader")
				}
				return nil
			})
		}()
		awaitWaiting(t, db, i+1) // in this order
	}
	close(release)
	wg.Wait()
	if err := <-leader; err != nil {
		t.Fatalf("leader: %v", err)
	}

	items := committedItems(t, db)
	if !items["leader"] {
		t.Error("the leader's row was not committed")
	}
	for i, kind := range kinds {
		name := fmt.Sprintf("%d-%s", i, kind)
		r := results[i]
		if r.sawLeader {
			t.Errorf("%s saw the leader's row committed: it did not run in the leader's transaction", name)
		}
		wantOK := kind == "ok"
		if items[name] != wantOK || r.committed != wantOK {
			t.Errorf("%s: row committed %v, AfterCommit ran %v; want %v", name, items[name], r.committed, wantOK)
		}
		switch kind {
		case "ok":
			if r.err != nil || r.panicked != nil {
				t.Errorf("%s: err %v, panic %v", name, r.err, r.panicked)
			}
		case "fail":
			if r.err == nil || r.err.Error() != "refused" {
				t.Errorf("%s: err %v, want its own error", name, r.err)
			}
		case "panic":
			if r.panicked != "member panics" {
				t.Errorf("%s: panic %v, want its own", name, r.panicked)
			}
		case "conflict":
			if !errors.Is(Normalize(r.err), ErrConflict) {
				t.Errorf("%s: err %v, want a conflict", name, r.err)
			}
		}
	}
	// The lock is free again.
	if err := db.Tx(context.Background(), func(tx *Tx) error { return insertItem(context.Background(), tx, "after") }); err != nil {
		t.Fatal(err)
	}
}

// TestLeaderPanicFreesTheWriteLock: a transaction whose fn panics rolls
// back and passes the write lock on (it was held for good before, and
// every later write timed out).
func TestLeaderPanicFreesTheWriteLock(t *testing.T) {
	db := openSQLiteForTest(t)
	func() {
		defer func() {
			if p := recover(); p != "boom" {
				t.Fatalf("recovered %v", p)
			}
		}()
		_ = db.Tx(context.Background(), func(tx *Tx) error {
			if err := insertItem(context.Background(), tx, "panicked"); err != nil {
				return err
			}
			panic("boom")
		})
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := db.Tx(ctx, func(tx *Tx) error { return insertItem(ctx, tx, "next") }); err != nil {
		t.Fatal(err)
	}
	if items := committedItems(t, db); items["panicked"] || !items["next"] {
		t.Errorf("items %v, want next only", items)
	}
}

// TestCanceledWaiterNeverRuns: a transaction whose context ends while it
// waits for the write lock returns the context's error without running,
// and the queue goes on without it.
func TestCanceledWaiterNeverRuns(t *testing.T) {
	db := openSQLiteForTest(t)
	release := make(chan struct{})
	leader := holdWriteLock(t, db, release)
	ctx, cancel := context.WithCancel(context.Background())
	ran := false
	canceled := make(chan error, 1)
	go func() {
		canceled <- db.Tx(ctx, func(tx *Tx) error { ran = true; return nil })
	}()
	awaitWaiting(t, db, 1)
	after := make(chan error, 1)
	go func() {
		after <- db.Tx(context.Background(), func(tx *Tx) error { return insertItem(context.Background(), tx, "after") })
	}()
	awaitWaiting(t, db, 2)
	cancel()
	if err := <-canceled; !errors.Is(err, context.Canceled) {
		t.Errorf("canceled waiter: %v", err)
	}
	close(release)
	if err := <-leader; err != nil {
		t.Fatal(err)
	}
	if err := <-after; err != nil {
		t.Fatal(err)
	}
	if ran {
		t.Error("the canceled transaction ran")
	}
}

// TestCheckpointerCopiesTheWAL: commits never checkpoint (connections
// have wal_autocheckpoint 0), the checkpointer does, so that committed
// pages reach the database file while the process runs; without it they
// would stay in the WAL until the last connection closes.
func TestCheckpointerCopiesTheWAL(t *testing.T) {
	db, path := openSQLiteFile(t)
	var auto int
	if err := db.DB.QueryRow("PRAGMA wal_autocheckpoint").Scan(&auto); err != nil || auto != 0 {
		t.Fatalf("wal_autocheckpoint %d (%v), want 0", auto, err)
	}
	before := fileSize(t, path)
	const rows, size = 200, 8 << 10 // 1.6 MB, under SQLite's own 1,000-page threshold
	if err := db.Tx(context.Background(), func(tx *Tx) error {
		for i := range rows {
			if err := insertItem(context.Background(), tx, fmt.Sprintf("%0*d", size, i)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "the committed rows to be checkpointed into the database file", func() error {
		if got := fileSize(t, path); got < before+rows*size {
			return fmt.Errorf("database file %d bytes (%d before)", got, before)
		}
		return nil
	})
}

// TestATurnAloneEndsAGroup: a turn taken alone (the checkpointer's) is
// never a group's. Queued behind a member of the running group, it ends
// that group: it gets its turn after the group's commit, with no
// transaction open, and the transaction queued behind it leads a group
// of its own after it.
func TestATurnAloneEndsAGroup(t *testing.T) {
	db := openSQLiteForTest(t)
	db.writes.span = time.Hour // one group, however slow the machine
	release := make(chan struct{})
	leader := holdWriteLock(t, db, release)
	var mu sync.Mutex
	var order []string
	note := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
	var wg sync.WaitGroup
	insert := func(name string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := db.Tx(context.Background(), func(tx *Tx) error { note(name); return insertItem(context.Background(), tx, name) }); err != nil {
				t.Error(err)
			}
		}()
	}
	insert("before")
	awaitWaiting(t, db, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := db.writes.enterAlone(context.Background()); err != nil {
			t.Error(err)
			return
		}
		defer db.writes.handOff()
		seen := committedItems(t, db)
		note(fmt.Sprintf("alone (leader %v, before %v, after %v)", seen["leader"], seen["before"], seen["after"]))
	}()
	awaitWaiting(t, db, 2)
	insert("after")
	awaitWaiting(t, db, 3)
	close(release)
	wg.Wait()
	if err := <-leader; err != nil {
		t.Fatal(err)
	}
	want := []string{"before", "alone (leader true, before true, after false)", "after"}
	if !slices.Equal(order, want) {
		t.Errorf("order %q, want %q", order, want)
	}
}

// TestAGroupWaitsForARunnableWriter: a transaction started by a goroutine
// that became runnable while the leader ran joins the leader's group,
// though it had not reached the write queue when the leader's fn
// returned. With one processor the goroutine runs only when the leader
// yields: without the yield before the group ends, it found the leader's
// row committed and led a group of its own.
func TestAGroupWaitsForARunnableWriter(t *testing.T) {
	db := openSQLiteForTest(t)
	db.writes.span = time.Hour // one group, however slow the machine
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	ctx := context.Background()
	leaderCommitted := make(chan bool, 1)
	followerDone := make(chan error, 1)
	err := db.Tx(ctx, func(tx *Tx) error {
		if err := insertItem(ctx, tx, "leader"); err != nil {
			return err
		}
		go func() {
			followerDone <- db.Tx(ctx, func(tx *Tx) error {
				var n int
				// Another connection sees only what was committed.
				if err := db.DB.QueryRowContext(ctx, "SELECT count(*) FROM items WHERE name = 'leader'").Scan(&n); err != nil {
					return err
				}
				leaderCommitted <- n == 1
				return insertItem(ctx, tx, "follower")
			})
		}()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-followerDone; err != nil {
		t.Fatal(err)
	}
	if <-leaderCommitted {
		t.Error("the follower ran after the leader's commit, in a group of its own; want it in the leader's group")
	}
	if seen := committedItems(t, db); !seen["leader"] || !seen["follower"] {
		t.Errorf("committed %v, want leader and follower", seen)
	}
}

// TestWALStartsOverUnderSteadyWrites: with writers busy all along, the
// checkpointer still brings the WAL back to its start, so the file stays
// the size of a few intervals' commits. With checkpoints beside the
// writers only, it grew by every commit for as long as the writes went
// on. The writers go on for 1.5 s (many checkpoint intervals), until
// 8 MiB of rows are written, and until they have written more than the
// WAL holds: on a loaded machine (the race detector, CI's packages in
// parallel, other builds) 1.5 s may write little, and one stretch of the
// checkpointer waiting for the CPU grows the WAL past what was written
// so far. A WAL that never starts over grows by every row written and
// stays larger until the 30 s limit.
func TestWALStartsOverUnderSteadyWrites(t *testing.T) {
	db, path := openSQLiteFile(t)
	db.checkpoints.close()
	db.checkpoints = startCheckpointer(db.DB, db.writes, 20*time.Millisecond, 256)
	ctx, stop := context.WithTimeout(context.Background(), 30*time.Second)
	defer stop()
	const enough = 8 << 20
	until := time.Now().Add(1500 * time.Millisecond)
	row := strings.Repeat("x", 4<<10)
	var written atomic.Int64
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil && (time.Now().Before(until) || written.Load() < enough || written.Load() <= walSize(path)); i++ {
				err := db.Tx(context.Background(), func(tx *Tx) error {
					return insertItem(context.Background(), tx, fmt.Sprintf("%d-%d-%s", w, i, row))
				})
				if err != nil {
					t.Error(err)
					return
				}
				written.Add(int64(len(row)))
			}
		}()
	}
	wg.Wait()
	wal := fileSize(t, path+"-wal")
	if written.Load() < 1<<20 {
		t.Skipf("only %d bytes written: too few to tell", written.Load())
	}
	// Every row reaches the WAL at least once, in a page of its own: a
	// WAL that never started over is larger than the rows written.
	if wal >= written.Load() {
		t.Errorf("WAL of %d bytes after %d bytes of rows were written: it did not start over", wal, written.Load())
	}
	t.Logf("%d bytes written, WAL %d bytes", written.Load(), wal)
}

// walSize is the size of the database's WAL file, 0 when it is missing.
func walSize(path string) int64 {
	fi, err := os.Stat(path + "-wal")
	if err != nil {
		return 0
	}
	return fi.Size()
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

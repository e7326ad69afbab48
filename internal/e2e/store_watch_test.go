package e2e_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"forgeapi/internal/apptest"
	"forgeapi/internal/store"
	"forgeapi/internal/testwait"
)

// open opens a database for the test: SQLite in a temporary directory, or
// a fresh PostgreSQL schema when the suite runs on PostgreSQL. url is
// what a second handle on the same database opens.
func open(t *testing.T) (db *store.DB, url string) {
	t.Helper()
	url = apptest.DatabaseURL(t)
	if url == "" {
		url = "sqlite://" + filepath.Join(t.TempDir(), "forgeapi.db")
	}
	return openURL(t, url), url
}

func openURL(t *testing.T, url string) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), url, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// counter counts the calls of a watcher.
type counter struct{ n atomic.Int64 }

func (c *counter) inc()         { c.n.Add(1) }
func (c *counter) count() int64 { return c.n.Load() }

func mustExec(t *testing.T, q store.Q, query string, args ...any) {
	t.Helper()
	if _, err := q.ExecContext(context.Background(), query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// TestWatchSeesCommittedWritesOnly counts watcher calls on SQLite: on
// PostgreSQL the listener also calls every watcher whenever it
// (re)connects, so counts are not exact there.
func TestWatchSeesCommittedWritesOnly(t *testing.T) {
	t.Parallel()
	db := openURL(t, "sqlite://"+filepath.Join(t.TempDir(), "forgeapi.db"))
	ctx := context.Background()
	var accounts, follows counter
	db.Watch(accounts.inc, "accounts")
	db.Watch(follows.inc, "follows", "accounts") // one call per write even when both match

	// Reads and writes to other tables are not changes.
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM accounts`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, `SELECT 1`)
	if accounts.count() != 0 || follows.count() != 0 {
		t.Fatalf("reads counted as writes: %d %d", accounts.count(), follows.count())
	}

	// A statement outside a transaction.
	mustExec(t, db, `INSERT INTO accounts (type, login, created_at, updated_at) VALUES ('User', 'a', $1, $1)`, store.Now())
	if accounts.count() != 1 || follows.count() != 1 {
		t.Fatalf("after insert: %d %d", accounts.count(), follows.count())
	}

	// A rolled-back transaction is no change; a committed one is one.
	rollback := errors.New("roll back")
	err := db.Tx(ctx, func(tx *store.Tx) error {
		mustExec(t, tx, `UPDATE accounts SET name = 'x' WHERE login = 'a'`)
		return rollback
	})
	if !errors.Is(err, rollback) || accounts.count() != 1 {
		t.Fatalf("rollback: err %v, count %d", err, accounts.count())
	}
	err = db.Tx(ctx, func(tx *store.Tx) error {
		mustExec(t, tx, `UPDATE accounts SET name = 'y' WHERE login = 'a'`)
		if accounts.count() != 1 {
			t.Errorf("watcher ran before commit")
		}
		mustExec(t, tx, `
			WITH gone AS (SELECT id FROM accounts WHERE login = 'nobody')
			DELETE FROM accounts WHERE id IN (SELECT id FROM gone)`)
		return nil
	})
	if err != nil || accounts.count() != 2 || follows.count() != 2 {
		t.Fatalf("commit: err %v, counts %d %d", err, accounts.count(), follows.count())
	}
}

// TestWatchRowsOfSeesInsertsAndDeletesOnly: a watcher of RowsOf(table)
// runs for the statements that add or remove rows, whatever their
// spelling, and not for UPDATEs; a watcher of the table runs for all.
func TestWatchRowsOfSeesInsertsAndDeletesOnly(t *testing.T) {
	t.Parallel()
	db := openURL(t, "sqlite://"+filepath.Join(t.TempDir(), "forgeapi.db"))
	var rows, all counter
	db.Watch(rows.inc, store.RowsOf("accounts"))
	db.Watch(all.inc, "accounts")
	steps := []struct {
		query    string
		wantRows int64
	}{
		{`INSERT INTO accounts (type, login, created_at, updated_at) VALUES ('User', 'a', $1, $1)`, 1},
		{`UPDATE accounts SET name = 'x' WHERE login = 'a'`, 1},
		{`update "accounts" SET name = 'y' WHERE login = 'a'`, 1},
		{`INSERT OR IGNORE INTO accounts (type, login, created_at, updated_at) VALUES ('User', 'a', $1, $1)`, 2},
		{`WITH gone AS (SELECT id FROM accounts WHERE login = 'a') DELETE FROM accounts WHERE id IN (SELECT id FROM gone)`, 3},
	}
	for i, s := range steps {
		if strings.Contains(s.query, "$1") {
			mustExec(t, db, s.query, store.Now())
		} else {
			mustExec(t, db, s.query)
		}
		if rows.count() != s.wantRows || all.count() != int64(i+1) {
			t.Errorf("after %q: RowsOf watcher ran %d times, table watcher %d; want %d and %d",
				s.query, rows.count(), all.count(), s.wantRows, i+1)
		}
	}
}

// TestWatchAcrossProcesses: on PostgreSQL a write committed through one
// handle reaches the watchers of another handle on the same database (as
// two servers sharing it).
func TestWatchAcrossProcesses(t *testing.T) {
	t.Parallel()
	apptest.SkipUnlessPostgres(t, "notifications between processes are PostgreSQL's")
	writer, url := open(t)
	reader := openURL(t, url)
	// A process tells the others of writes to the tables it watches
	// itself; servers all register the same watches.
	writer.Watch(func() {}, "accounts")
	seen := make(chan struct{}, 16)
	reader.Watch(signalTo(seen), "accounts")
	writeUntilSeen(t, writer, seen)
	// Now listening: the next write reaches the reader by notification.
	drain(seen)
	insertAccount(t, writer)
	waitSeen(t, seen, "notification of the other handle's write")
}

// TestWatchSkipsItsOwnNotifications: a process's own notifications come
// back to its listener, which leaves them: its watchers ran at the
// commit. One write of each process, then: the writer's watcher runs
// twice (its commit, the other's notification), not three times.
// Notifications arrive in commit order, so a marker written after them
// (to a table of its own, watched apart) tells when every earlier one
// has arrived: no waiting for a time in which a stray call might come.
func TestWatchSkipsItsOwnNotifications(t *testing.T) {
	t.Parallel()
	apptest.SkipUnlessPostgres(t, "notifications between processes are PostgreSQL's")
	writer, url := open(t)
	other := openURL(t, url)
	mustExec(t, writer, `CREATE TABLE watch_markers (id BIGSERIAL PRIMARY KEY)`)
	var calls counter
	writerSaw, otherSaw := make(chan struct{}, 16), make(chan struct{}, 16)
	signal := signalTo(writerSaw)
	writer.Watch(func() { calls.inc(); signal() }, "accounts")
	other.Watch(signalTo(otherSaw), "accounts")
	// Only the other writes markers (it watches them too: a process
	// notifies the writes to the tables it watches), so none of the
	// writer's own notifications can pass for one.
	marks := make(chan struct{}, 16)
	writer.Watch(signalTo(marks), "watch_markers")
	other.Watch(func() {}, "watch_markers")
	// Both listeners up: each process writes until the other saw it.
	writeUntilSeen(t, writer, otherSaw)
	writeUntilSeen(t, other, writerSaw)
	// Every notification of those writes has reached the writer once it
	// saw a marker written after them.
	mark(t, other, marks)
	drain(writerSaw)
	drain(otherSaw)
	before := calls.count()
	insertAccount(t, writer)
	waitSeen(t, otherSaw, "notification of the writer's write")
	insertAccount(t, other)
	mark(t, other, marks)
	if got := calls.count() - before; got != 2 {
		t.Errorf("the writer's watcher ran %d times for its write and the other's; want 2 (its own notification skipped)", got)
	}
}

// mark writes a marker through from and waits until the watcher of the
// markers on another handle signals marks: every notification committed
// before the marker has reached that handle then.
func mark(t *testing.T, from *store.DB, marks chan struct{}) {
	t.Helper()
	drain(marks)
	err := from.Tx(context.Background(), func(tx *store.Tx) error {
		mustExec(t, tx, `INSERT INTO watch_markers DEFAULT VALUES`)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	waitSeen(t, marks, "the marker")
}

// signalTo returns a watcher that signals c, never blocking.
func signalTo(c chan struct{}) func() {
	return func() {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

// accountsInserted numbers the accounts insertAccount writes.
var accountsInserted atomic.Int64

// insertAccount inserts an account through db in a transaction.
func insertAccount(t *testing.T, db *store.DB) {
	t.Helper()
	login := fmt.Sprintf("watched-%d", accountsInserted.Add(1))
	err := db.Tx(context.Background(), func(tx *store.Tx) error {
		mustExec(t, tx, `INSERT INTO accounts (type, login, created_at, updated_at) VALUES ('User', $1, $2, $2)`, login, store.Now())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// writeUntilSeen inserts accounts through from until seen receives: until
// the watching process's listener is up, writes may go unnoticed (seen by
// their notification, or by the listener calling every watcher when it
// connects).
func writeUntilSeen(t *testing.T, from *store.DB, seen chan struct{}) {
	t.Helper()
	testwait.Until(t, "the listener to see the other process's write", func() bool {
		select {
		case <-seen:
			return true
		default:
			insertAccount(t, from)
			return false
		}
	})
}

func waitSeen(t *testing.T, seen chan struct{}, what string) {
	t.Helper()
	select {
	case <-seen:
	case <-time.After(10 * time.Second):
		t.Fatalf("no watcher call: %s", what)
	}
}

func drain(c chan struct{}) {
	for {
		select {
		case <-c:
		default:
			return
		}
	}
}

// TestReadCache counts loads on SQLite, for the reason given at
// TestWatchSeesCommittedWritesOnly.
func TestReadCache(t *testing.T) {
	t.Parallel()
	db := openURL(t, "sqlite://"+filepath.Join(t.TempDir(), "forgeapi.db"))
	ctx := context.Background()
	mustExec(t, db, `INSERT INTO accounts (type, login, name, created_at, updated_at) VALUES ('User', 'c', 'first', $1, $1)`, store.Now())
	cache := store.NewReadCache[string, string](db, time.Hour, "accounts")
	loads := 0
	name := func() (string, error) {
		loads++
		var s string
		err := db.QueryRowContext(ctx, `SELECT name FROM accounts WHERE login = 'c'`).Scan(&s)
		return s, store.Normalize(err)
	}
	get := func(want string, wantLoads int) {
		t.Helper()
		got, err := cache.Get("c", name)
		if err != nil || got != want || loads != wantLoads {
			t.Fatalf("Get: %q %v after %d loads, want %q after %d", got, err, loads, want, wantLoads)
		}
	}
	get("first", 1)
	get("first", 1) // cached

	mustExec(t, db, `UPDATE accounts SET name = 'second' WHERE login = 'c'`)
	get("second", 2) // the write dropped it

	// A value read while a write commits is not kept: it may predate it.
	cache.Invalidate()
	got, err := cache.Get("c", func() (string, error) {
		v, err := name()
		mustExec(t, db, `UPDATE accounts SET name = 'third' WHERE login = 'c'`)
		return v, err
	})
	if err != nil || got != "second" {
		t.Fatalf("racing Get: %q %v", got, err)
	}
	get("third", 4)

	// Failed lookups are not kept.
	missing := 0
	for range 2 {
		_, err := cache.Get("nobody", func() (string, error) { missing++; return "", store.ErrNotFound })
		if !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("missing: %v", err)
		}
	}
	if missing != 2 {
		t.Fatalf("a failed lookup was cached (%d loads)", missing)
	}

	// Values live at most the TTL.
	short := store.NewReadCache[string, string](db, time.Nanosecond, "accounts")
	for range 2 {
		if _, err := short.Get("c", name); err != nil {
			t.Fatal(err)
		}
	}
	if loads != 6 {
		t.Fatalf("expired value served: %d loads, want 6", loads)
	}
}

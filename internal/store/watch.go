package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// Table watches let in-memory caches of database rows drop what they hold
// when those rows change. A write is recognised by the text of the
// statement that makes it (INSERT INTO t, UPDATE t, DELETE FROM t, also
// inside a WITH), so every write through a DB or Tx is seen without its
// author doing anything: statements in a transaction notify once it
// commits (never when it rolls back), statements outside one once they
// return.
//
// What a statement text does not show is not seen: a delete that cascades
// into a watched table (watch its parent tables too) and a write made by a
// trigger. Writes with RETURNING that run outside a transaction are seen
// when the call returns, which can be before SQLite commits them; run
// writes to watched tables that return rows in a transaction.
//
// Across processes: on PostgreSQL a committed write to a watched table
// also sends a notification, just after the commit (see notifier), that
// every other server sharing the database receives with LISTEN and
// passes to its watchers (the sender's own listener receives it too, and
// skips it by the sender's tag: its watchers ran at the commit). A
// process notifies only of the tables it watches itself, which is enough
// because every server registers the same watches. Writes of other
// processes on SQLite (admin commands) are not seen; caches bound that
// with a short lifetime (see ReadCache).

// changesChannel is the PostgreSQL notification channel of watched writes;
// the payload is the written tables, comma-separated, then the sending
// process's tag (see changeNote).
const changesChannel = "forgeapi_table_changes"

// senderMark starts the last element of a notification's payload: the tag
// of the process that sent it. A process that predates the tag reads it
// as the name of a table nothing watches.
const senderMark = "@"

// newSenderTag returns a tag naming this process among those sharing the
// database: random, so that no two servers share one.
func newSenderTag() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return hex.EncodeToString(b)
}

// changeNote is the payload of a notification of writes to tables by the
// process tagged sender.
func changeNote(tables []string, sender string) string {
	return strings.Join(tables, ",") + "," + senderMark + sender
}

// readChangeNote returns the tables a notification's payload names and
// whether the process tagged self sent it (its watchers ran at the
// commit already). A payload without a tag names tables only.
func readChangeNote(payload, self string) (tables []string, own bool) {
	tables = strings.Split(payload, ",")
	if last := tables[len(tables)-1]; strings.HasPrefix(last, senderMark) {
		return tables[:len(tables)-1], last[len(senderMark):] == self
	}
	return tables, false
}

// watchers holds the watch registrations of a DB and what it learned about
// statement texts.
type watchers struct {
	mu      sync.RWMutex
	byTable map[string][]*watcher
	// written caches, per statement text, the watched tables it writes
	// (nil: none). Statement texts are constants of the code, so it stays
	// small; Dynamic texts are never cached.
	written sync.Map
}

// Watch registers fn to run after every committed write to one of the
// tables by this process, and on PostgreSQL also by other processes
// sharing the database (after their notification arrives), and whenever
// notifications may have been missed. A table given as RowsOf(t) is
// watched for INSERTs and DELETEs of t only. fn must be fast and must not
// block: it runs on the writer's goroutine.
func (db *DB) Watch(fn func(), tables ...string) {
	w := &db.watch
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.byTable == nil {
		w.byTable = map[string][]*watcher{}
	}
	one := &watcher{fn: fn}
	for _, t := range tables {
		t = strings.ToLower(t)
		w.byTable[t] = append(w.byTable[t], one)
	}
	w.written.Clear() // what is watched has changed
}

// RowsOf names, for Watch and NewReadCache, the statements that add or
// remove rows of table (INSERT, DELETE) but not its UPDATEs: a value
// that only counts rows, or only depends on which rows exist, is not
// dropped by every change of a column it never reads.
func RowsOf(table string) string { return table + rowsSuffix }

const rowsSuffix = "/rows"

// writePattern finds the tables a statement writes, and how.
var writePattern = regexp.MustCompile(`(?i)\b(insert\s+(?:or\s+\w+\s+)?into|update|delete\s+from)\s+"?([a-z_][a-z0-9_]*)`)

// watchedWrites returns the watched tables the statement writes, or nil.
func (db *DB) watchedWrites(query string) []string {
	w := &db.watch
	if v, ok := w.written.Load(query); ok {
		return v.([]string)
	}
	var tables []string
	w.mu.RLock()
	for _, m := range writePattern.FindAllStringSubmatch(query, -1) {
		t := strings.ToLower(m[2])
		written := []string{t}
		if !strings.EqualFold(m[1], "update") {
			written = append(written, t+rowsSuffix)
		}
		for _, t := range written {
			if _, ok := w.byTable[t]; ok && !slices.Contains(tables, t) {
				tables = append(tables, t)
			}
		}
	}
	w.mu.RUnlock()
	if !strings.HasPrefix(query, Dynamic) {
		w.written.Store(query, tables)
	}
	return tables
}

// watcher is one Watch registration.
type watcher struct{ fn func() }

// changed runs the watchers of the tables, each once.
func (db *DB) changed(tables []string) {
	w := &db.watch
	w.mu.RLock()
	var due []*watcher
	for _, t := range tables {
		for _, one := range w.byTable[t] {
			if !slices.Contains(due, one) {
				due = append(due, one)
			}
		}
	}
	w.mu.RUnlock()
	for _, one := range due {
		one.fn()
	}
}

// changedAll runs every watcher: notifications may have been missed.
func (db *DB) changedAll() {
	w := &db.watch
	w.mu.RLock()
	tables := make([]string, 0, len(w.byTable))
	for t := range w.byTable {
		tables = append(tables, t)
	}
	w.mu.RUnlock()
	db.changed(tables)
}

// noteWrites records in the transaction the watched tables the statement
// writes.
func (t *Tx) noteWrites(query string) {
	for _, table := range t.db.watchedWrites(query) {
		if !slices.Contains(t.written, table) {
			t.written = append(t.written, table)
		}
	}
}

// afterWrite runs the watchers of a statement that ran outside a
// transaction and, on PostgreSQL, notifies the other processes.
func (db *DB) afterWrite(ctx context.Context, query string) {
	tables := db.watchedWrites(query)
	if len(tables) == 0 {
		return
	}
	if db.Dialect == Postgres {
		_, _ = db.DB.ExecContext(context.WithoutCancel(ctx), `SELECT pg_notify($1, $2)`, changesChannel, changeNote(tables, db.notes.sender))
	}
	db.changed(tables)
}

// listenForChanges receives the notifications of other processes' writes
// until ctx ends, reconnecting after errors. Every watcher runs after
// each (re)connection, since notifications sent while no connection
// listened are lost.
func (db *DB) listenForChanges(ctx context.Context) {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := db.listenOnce(ctx)
		db.changedAll()
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			backoff = 100 * time.Millisecond
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

// listenOnce holds one listening connection until it fails or ctx ends.
func (db *DB) listenOnce(ctx context.Context) error {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	// The listening connection leaves the pool for good: one that stopped
	// listening (error, shutdown) is closed rather than reused.
	pc := conn.Hijack()
	defer pc.Close(context.WithoutCancel(ctx))
	if _, err := pc.Exec(ctx, "LISTEN "+changesChannel); err != nil {
		return err
	}
	db.changedAll() // writes that committed before LISTEN took effect
	for {
		n, err := pc.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		if tables, own := readChangeNote(n.Payload, db.notes.sender); !own {
			db.changed(tables)
		}
	}
}

// notifier sends the notifications of committed writes to watched tables
// to the other processes (PostgreSQL), after the commit and batched: one
// pg_notify names the tables of every write committed while the one
// before it was being sent. PostgreSQL serialises the commits of
// transactions that NOTIFY (a global lock held through the commit's WAL
// flush); sent in the writer's transaction, the notification capped
// every write to a watched table (a repository, an account) at one
// commit per WAL flush, whatever the number of connections. A
// notification lost to a crash between a commit and its sending leaves
// the other servers' caches stale for at most their TTL, as a lost
// LISTEN connection does.
type notifier struct {
	db *sql.DB
	// sender tags this process's notifications: its listener skips them,
	// as its own watchers ran at each commit.
	sender  string
	mu      sync.Mutex
	pending []string // tables written since the last notification
	kick    chan struct{}
	stop    chan struct{}
	done    chan struct{}
}

func newNotifier(db *sql.DB) *notifier {
	n := &notifier{db: db, sender: newSenderTag(), kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go n.run()
	return n
}

// send queues a notification of writes to the tables. A nil notifier
// (SQLite) does nothing.
func (n *notifier) send(tables []string) {
	if n == nil || len(tables) == 0 {
		return
	}
	n.mu.Lock()
	for _, t := range tables {
		if !slices.Contains(n.pending, t) {
			n.pending = append(n.pending, t)
		}
	}
	n.mu.Unlock()
	select {
	case n.kick <- struct{}{}:
	default:
	}
}

// run sends the pending notifications until close, then the last ones.
func (n *notifier) run() {
	defer close(n.done)
	for {
		select {
		case <-n.kick:
			n.flush()
		case <-n.stop:
			n.flush()
			return
		}
	}
}

// flush sends one notification of the pending tables; when that fails
// (a lost connection) they stay pending for the next write's, and the
// listeners, which run every watcher when they reconnect, cover the gap.
func (n *notifier) flush() {
	n.mu.Lock()
	tables := n.pending
	n.pending = nil
	n.mu.Unlock()
	if len(tables) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := n.db.ExecContext(ctx, `SELECT pg_notify($1, $2)`, changesChannel, changeNote(tables, n.sender)); err != nil {
		n.mu.Lock()
		for _, t := range tables {
			if !slices.Contains(n.pending, t) {
				n.pending = append(n.pending, t)
			}
		}
		n.mu.Unlock()
	}
}

// close sends what is pending and stops the notifier. A nil notifier
// does nothing.
func (n *notifier) close() {
	if n == nil {
		return
	}
	close(n.stop)
	<-n.done
}

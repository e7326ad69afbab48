// Package store opens forgeapi's database (SQLite by default, PostgreSQL to
// scale out), runs the embedded schema migrations and offers the small
// handle types every area's SQL is written against.
//
// SQL is written once for both databases: placeholders are $1, $2, ...
// (modernc SQLite binds them by number), timestamps are bound as UTC
// time.Time values, booleans as bool, and JSON documents as TEXT.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"modernc.org/sqlite" // registers the "sqlite" driver; its errors carry result codes
)

// Dialect names the SQL database behind a DB.
type Dialect string

// The supported dialects.
const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

// Q is what store functions take to run SQL: a *DB or a transaction.
type Q interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// DB is an open database with its dialect.
type DB struct {
	*sql.DB
	Dialect Dialect
	// Created reports that Open created the schema: the database was
	// empty (a new SQLite file, or a PostgreSQL schema without tables).
	Created bool
	pool    *pgxpool.Pool
	cache   *stmtCache // SQLite only; pgx keeps its own per-connection cache
	// writes (SQLite only) queues this process's transactions for the
	// write lock and commits them in groups; see Tx.
	writes *writeQueue
	watch  watchers
	// stopListening ends the PostgreSQL listener of other processes'
	// writes (see Watch); listening is closed when it has ended.
	stopListening context.CancelFunc
	listening     chan struct{}
	// notes sends the notifications of this process's committed writes
	// to watched tables (PostgreSQL only; see notifier).
	notes *notifier
	// checkpoints copies the WAL back into the database file (SQLite
	// only; see checkpointer).
	checkpoints *checkpointer
	// path is the SQLite database file; serveLock the file whose lock
	// ClaimServer holds (nil until then).
	path      string
	serveLock *os.File
	nesting   atomic.Pointer[nestingCheck] // nil unless CheckNesting
}

// Open connects to the database named by dsn and migrates its schema.
// An empty dsn means SQLite at DATA/forgeapi.db; a dsn starting with
// postgres:// or postgresql:// means PostgreSQL.
func Open(ctx context.Context, dsn, dataDir string) (*DB, error) {
	var db *DB
	var err error
	switch {
	case dsn == "":
		db, err = openSQLite(filepath.Join(dataDir, "forgeapi.db"))
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		db, err = openPostgres(ctx, dsn)
	case strings.HasPrefix(dsn, "sqlite://"), strings.HasPrefix(dsn, "file:"):
		db, err = openSQLite(strings.TrimPrefix(strings.TrimPrefix(dsn, "sqlite://"), "file:"))
	default:
		return nil, fmt.Errorf("unsupported database URL %q: want postgres://... or sqlite://PATH", dsn)
	}
	if err != nil {
		return nil, err
	}
	if err := migrate(ctx, db); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// busyTimeout is how long a SQLite statement waits for a lock that
// another process (an admin command, a backup) holds. The process's own
// writes wait for their turn in the write queue instead (group.go,
// plainwrite.go).
const busyTimeout = 10 * time.Second

func openSQLite(path string) (*DB, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("create database directory: %w", err)
	}
	q := url.Values{}
	// temp_store(MEMORY): statement journals (a multi-row INSERT in a
	// transaction that wrote before keeps one) stay in memory; otherwise
	// one past 64 KiB spills to a temporary file, created and written for
	// every such INSERT. wal_autocheckpoint(0): the checkpointer does it, off
	// the writers' path.
	for _, p := range []string{fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()), "journal_mode(WAL)", "foreign_keys(ON)", "synchronous(NORMAL)",
		"temp_store(MEMORY)", "wal_autocheckpoint(0)"} {
		q.Add("_pragma", p)
	}
	q.Set("_txlock", "immediate")
	q.Set("_time_format", "sqlite")
	sqldb, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	// SQLite has one writer; a small pool keeps readers concurrent under WAL
	// while writers queue on busy_timeout instead of failing.
	sqldb.SetMaxOpenConns(8)
	sqldb.SetMaxIdleConns(8)
	sqldb.SetConnMaxIdleTime(0)
	if err := sqldb.Ping(); err != nil {
		sqldb.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	conn, err := sqldb.Conn(context.Background())
	if err != nil {
		sqldb.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	writes := &writeQueue{span: maxGroupSpan, conn: conn}
	return &DB{DB: sqldb, Dialect: SQLite, cache: &stmtCache{stmts: map[string]*sql.Stmt{}},
		writes: writes, checkpoints: startCheckpointer(sqldb, writes, checkpointInterval, restartFrames), path: path}, nil
}

// defaultPoolSize is how many connections a server holds to PostgreSQL
// at most (beside the listener's) when its URL does not say: pgx's own
// default, the number of CPUs, leaves a busy server of a small machine
// queueing for connections.
const defaultPoolSize = 16

// namesPoolSize reports whether the URL sets the pool's size itself
// (pool_max_conns), which then stands: tests, which run many servers on
// one PostgreSQL at once, ask for small pools.
func namesPoolSize(dsn string) bool {
	u, err := url.Parse(dsn)
	return err == nil && u.Query().Has("pool_max_conns")
}

func openPostgres(ctx context.Context, dsn string) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("parse postgres URL: %w", err)
	}
	// Every statement is prepared by name once per connection (pgx's
	// statement cache, an LRU that deallocates what it evicts) and then
	// only bound and executed: PostgreSQL parses and plans a query once
	// per connection instead of on every call (the received-events feed's
	// union of many parts takes longer to plan than to run).
	// Texts built at run time (Dynamic) do not enter it: see pgArgs.
	cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeCacheStatement
	cfg.ConnConfig.StatementCacheCapacity = statementCacheCapacity
	if !namesPoolSize(dsn) && cfg.MaxConns < defaultPoolSize {
		cfg.MaxConns = defaultPoolSize
	}
	conns := int(cfg.MaxConns)
	cfg.MaxConns++ // the listener's (see listenOnce), beside database/sql's
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect postgres: %w", err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := pool.Ping(pingCtx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect postgres: %w", err)
	}
	// database/sql keeps its connections (stdlib.OpenDBFromPool keeps
	// none idle: every query took a connection from the pool and gave it
	// back, and a *sql.Stmt, such as the feeds' prepared unions, was
	// prepared again and deallocated around every call). It holds at most
	// conns, so that the listener can always take one more from the pool.
	sqldb := stdlib.OpenDBFromPool(pool)
	sqldb.SetMaxOpenConns(conns)
	sqldb.SetMaxIdleConns(conns)
	db := &DB{DB: sqldb, Dialect: Postgres, pool: pool, listening: make(chan struct{})}
	listenCtx, stop := context.WithCancel(context.Background())
	db.stopListening = stop
	db.notes = newNotifier(db.DB)
	go func() {
		defer close(db.listening)
		db.listenForChanges(listenCtx)
	}()
	return db, nil
}

// OpenPostgresSQL is a plain database/sql handle on the PostgreSQL
// database at dsn, for a tool's own queries beside the store (checks,
// tests' administration): it accepts the URLs a server takes, pool
// settings (pool_max_conns) included, which the driver alone would send
// to PostgreSQL as unknown parameters.
func OpenPostgresSQL(dsn string) (*sql.DB, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("parse postgres URL: %w", err)
	}
	return stdlib.OpenDB(*cfg.ConnConfig), nil
}

// Close closes the database and, for PostgreSQL, its pool.
func (db *DB) Close() error {
	if db.stopListening != nil {
		db.stopListening()
		<-db.listening
	}
	db.notes.close()
	db.checkpoints.close()
	db.cache.close()
	if db.writes != nil {
		_ = db.writes.conn.Close() // back to the pool, which closes it
	}
	err := db.DB.Close()
	if db.pool != nil {
		db.pool.Close()
	}
	if db.serveLock != nil {
		db.serveLock.Close() // and with it the lock
	}
	return err
}

// Tx is a transaction that can run functions once it commits.
type Tx struct {
	*sql.Tx
	db          *DB
	afterCommit []func()
	uncached    []string // query texts run unprepared, for the statement cache
	written     []string // watched tables written (see Watch)
	now         time.Time
}

// Now is the transaction's clock: the time its function began (UTC, to
// the microsecond, as Now), the same for every timestamp it writes, so
// that the rows of one change agree on when it happened.
func (t *Tx) Now() time.Time { return t.now }

// ForUpdate is the clause that locks the rows a query selects for the
// rest of the transaction (DB.ForUpdate of the transaction's database).
func (t *Tx) ForUpdate() string { return t.db.ForUpdate() }

// LockKey serialises the transactions that take the same key: on
// PostgreSQL the second waits here until the first ends (a transaction
// advisory lock on the key's hash); SQLite's write transactions never
// overlap. It covers a check of rows that do not exist yet, which no row
// lock can ("no open pull request for this head and base yet: insert
// one").
func (t *Tx) LockKey(ctx context.Context, key string) error {
	if t.db.Dialect != Postgres {
		return nil
	}
	_, err := t.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, key)
	return Normalize(err)
}

// AfterCommit registers fn to run after the transaction commits (never
// when it rolls back): in-process wake-ups of background workers.
func (t *Tx) AfterCommit(fn func()) { t.afterCommit = append(t.afterCommit, fn) }

// Tx runs fn in a transaction, committing when fn returns nil and rolling
// back otherwise. The error fn returns is returned unchanged. fn gets
// the *Tx itself, so that what must wait for the commit (Tx.AfterCommit)
// can only be registered on a transaction, never run early on the
// database. fn must not start another transaction.
//
// On SQLite every transaction takes the database's one write lock at
// BEGIN (IMMEDIATE). The transactions of this process queue for it in
// order and commit in groups (see group.go); the busy handler is left to
// arbitrate with other processes (admin commands). Once a transaction
// has its turn its statements run to their end: ctx ending no longer
// interrupts them (an interrupted write would roll back the whole
// group's transaction), though fn may still check ctx and fail.
func (db *DB) Tx(ctx context.Context, fn func(tx *Tx) error) error {
	if c := db.nesting.Load(); c != nil {
		c.checkBegin()
	}
	return db.runTx(ctx, fn)
}

// runTx is Tx without the check of a transaction begun inside another's
// function: for a statement on the DB run as a transaction of its own,
// which the check records as the statement it is.
func (db *DB) runTx(ctx context.Context, fn func(tx *Tx) error) error {
	if c := db.nesting.Load(); c != nil {
		fn = c.wrap(fn)
	}
	var uncached []string
	err := db.tx(ctx, fn, &uncached)
	db.prepareAll(context.WithoutCancel(ctx), uncached)
	return err
}

// tx is Tx without the statement cache's upkeep: it reports in *uncached
// the queries that ran unprepared.
func (db *DB) tx(ctx context.Context, fn func(tx *Tx) error, uncached *[]string) error {
	if db.writes != nil {
		return db.groupTx(ctx, fn, uncached)
	}
	sqlTx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return Normalize(err)
	}
	tx := &Tx{Tx: sqlTx, db: db, now: Now()}
	defer func() { *uncached = tx.uncached }()
	if err := fn(tx); err != nil {
		_ = sqlTx.Rollback()
		return err
	}
	if err := sqlTx.Commit(); err != nil {
		return Normalize(err)
	}
	db.committed(tx)
	return nil
}

// committed does what follows the commit of tx: the checkpointer, the
// watchers and the other servers hear of its writes (batched, see
// notifier: never of a write that rolled back), then its AfterCommit
// functions run.
func (db *DB) committed(tx *Tx) {
	db.checkpoints.committed()
	db.notes.send(tx.written)
	db.changed(tx.written)
	for _, f := range tx.afterCommit {
		f()
	}
}

// Bounds of RetryTx.
const (
	retryAttempts  = 8
	retryFirstWait = 5 * time.Millisecond
	retryMaxWait   = 500 * time.Millisecond
)

// RetryTx is Tx run again, after a short randomised wait, when the
// database aborted the transaction to resolve a conflict with another
// one: PostgreSQL's deadlock_detected (40P01) and serialization_failure
// (40001); see Retryable. It tries at most retryAttempts times and
// returns the last error. fn must be safe to run again: everything it
// wrote was rolled back, but what it changed outside the transaction was
// not. SQLite needs no retry (a transaction holds the one write lock from
// BEGIN on), so there fn runs once.
func (db *DB) RetryTx(ctx context.Context, fn func(tx *Tx) error) error {
	wait := retryFirstWait
	for attempt := 1; ; attempt++ {
		err := db.Tx(ctx, fn)
		if err == nil || !Retryable(err) || attempt == retryAttempts {
			return err
		}
		timer := time.NewTimer(wait/2 + rand.N(wait))
		select {
		case <-ctx.Done():
			timer.Stop()
			return err
		case <-timer.C:
		}
		wait = min(2*wait, retryMaxWait)
	}
}

// Retryable reports whether err is PostgreSQL aborting a transaction that
// may succeed when run again: a deadlock (40P01), a serialization
// failure (40001), or a statement prepared before another server's
// migration changed its result columns (see stalePlan; run again, it is
// prepared anew).
func Retryable(err error) bool {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return false
	}
	return pgErr.Code == "40P01" || pgErr.Code == "40001" || stalePlan(err)
}

// SkipLocked is the clause that claim queries append to their row
// selection: FOR UPDATE SKIP LOCKED on PostgreSQL, nothing on SQLite
// (whose immediate transactions already serialise writers).
func (db *DB) SkipLocked() string {
	if db.Dialect == Postgres {
		return " FOR UPDATE SKIP LOCKED"
	}
	return ""
}

// ForUpdate is the clause that locks the rows a query selects for the
// rest of the transaction: FOR UPDATE on PostgreSQL, nothing on SQLite
// (whose immediate transactions already serialise writers).
func (db *DB) ForUpdate() string {
	if db.Dialect == Postgres {
		return " FOR UPDATE"
	}
	return ""
}

// Now returns the current time as the store keeps it: UTC, microseconds.
func Now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// writeWaitTimeout bounds the wait for the write lock (a transaction
// started inside another one would otherwise wait forever).
const writeWaitTimeout = 30 * time.Second

// ErrBusy is returned when a transaction waited too long for its turn to
// write.
var ErrBusy = errors.New("store: timed out waiting for the database write lock")

// ErrNotFound is returned when a row that was asked for does not exist.
var ErrNotFound = errors.New("store: not found")

// ErrConflict is returned when a write breaks a unique constraint.
var ErrConflict = errors.New("store: conflict")

// Affected returns how many rows the statement whose result and error
// it is given changed: Affected(q.ExecContext(...)). The error is
// Normalize'd.
func Affected(res sql.Result, err error) (int64, error) {
	if err != nil {
		return 0, Normalize(err)
	}
	return res.RowsAffected()
}

// Normalize maps driver errors to ErrNotFound and ErrConflict (wrapping the
// original) and returns any other error unchanged. A conflict is a unique
// or primary key violation, told by the driver's error code (SQLite's
// extended result code, PostgreSQL's SQLSTATE 23505), not by its text.
func Normalize(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	if uniqueViolation(err) {
		return fmt.Errorf("%w: %v", ErrConflict, err)
	}
	return err
}

// SQLite's extended result codes of a unique and a primary key violation.
const (
	sqliteConstraintUnique     = 2067 // SQLITE_CONSTRAINT_UNIQUE
	sqliteConstraintPrimaryKey = 1555 // SQLITE_CONSTRAINT_PRIMARYKEY
)

// uniqueViolation reports whether err is a driver's unique or primary key
// violation.
func uniqueViolation(err error) bool {
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok {
		return pgErr.Code == "23505"
	}
	if liteErr, ok := errors.AsType[*sqlite.Error](err); ok {
		code := liteErr.Code()
		return code == sqliteConstraintUnique || code == sqliteConstraintPrimaryKey
	}
	return false
}

package store

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// maxCachedStatements bounds the statement cache. Queries are constant
// texts in the code, so the bound is only a guard against code that
// builds SQL text dynamically.
const maxCachedStatements = 512

// Dynamic starts the text of a query built at run time (a VALUES list
// of a varying number of rows, say): such a query is never cached, so
// that its many texts cannot fill the cache and push out the hot ones.
// On PostgreSQL it is not prepared by name either (see pgArgs).
const Dynamic = "/* dynamic */ "

// statementCacheCapacity bounds, per PostgreSQL connection, the
// statements prepared by name (pgx's LRU cache; an evicted statement is
// deallocated on the server). The code has about 450 constant query
// texts, and one connection runs a part of them.
const statementCacheCapacity = 512

// pgArgs returns the arguments to pass to the driver for the query. On
// PostgreSQL a Dynamic query runs with pgx's description cache
// (QueryExecModeCacheDescribe: an unnamed statement, parsed and planned
// on every call, its parameter and result types cached per text) instead
// of being prepared by name, so that its texts do not push the hot
// statements out of the statement cache; pgx takes the mode as a leading
// argument, and its database/sql driver passes every argument through.
func (db *DB) pgArgs(query string, args []any) []any {
	if db.Dialect != Postgres || !strings.HasPrefix(query, Dynamic) {
		return args
	}
	return append([]any{pgx.QueryExecModeCacheDescribe}, args...)
}

// stalePlan reports whether PostgreSQL refused to run a statement
// prepared before a schema change altered its result columns ("cached
// plan must not change result type", 0A000): another server migrated
// the database under this one. pgx drops the statement from the
// connection's cache on that error, so running the query again prepares
// it anew.
func stalePlan(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "0A000" && strings.Contains(pgErr.Message, "cached plan")
}

// stmtCache keeps one prepared statement per query text, so that a hot
// query is parsed once per connection instead of once per call. Parsing
// is most of the cost of a small query on SQLite.
type stmtCache struct {
	mu    sync.RWMutex
	stmts map[string]*sql.Stmt
}

// stmt returns the cached statement of the query, preparing it on first
// use; nil when the cache is off, full, or the query does not prepare
// (the caller then runs the query unprepared and gets its error).
func (db *DB) stmt(ctx context.Context, query string) *sql.Stmt {
	c := db.cache
	if c == nil || strings.HasPrefix(query, Dynamic) {
		return nil
	}
	c.mu.RLock()
	st := c.stmts[query]
	c.mu.RUnlock()
	if st != nil {
		return st
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if st := c.stmts[query]; st != nil {
		return st
	}
	if len(c.stmts) >= maxCachedStatements {
		return nil
	}
	text := query
	if db.Dialect == SQLite {
		text = positional(query)
	}
	st, err := db.DB.PrepareContext(ctx, text)
	if err != nil {
		return nil
	}
	c.stmts[query] = st
	return st
}

// cached returns the query's statement when it is already in the cache.
// Transactions use it: preparing a new statement takes a connection from
// the pool, and a transaction that waits for a second connection while
// holding SQLite's write lock can deadlock the pool.
func (db *DB) cached(query string) *sql.Stmt {
	if db.cache == nil {
		return nil
	}
	db.cache.mu.RLock()
	defer db.cache.mu.RUnlock()
	return db.cache.stmts[query]
}

// cachedOrNote is cached, and when the query is not in the cache yet it
// notes it in t so that Tx prepares it once the transaction has ended
// (and holds no connection): a query that only ever runs in transactions
// is then parsed once per connection too, not once per call.
func (t *Tx) cachedOrNote(query string) *sql.Stmt {
	st := t.db.cached(query)
	if st == nil && t.db.cache != nil && !strings.HasPrefix(query, Dynamic) && !slices.Contains(t.uncached, query) {
		t.uncached = append(t.uncached, query)
	}
	return st
}

// prepareAll prepares the queries into the cache. It must be called
// without holding a connection (see cached).
func (db *DB) prepareAll(ctx context.Context, queries []string) {
	for _, q := range queries {
		_ = db.stmt(ctx, q)
	}
}

func (c *stmtCache) close() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for q, st := range c.stmts {
		_ = st.Close()
		delete(c.stmts, q)
	}
}

// QueryRowContext runs a query expected to return at most one row,
// through the statement cache. On PostgreSQL a query refused for a stale
// plan (see stalePlan) runs once more.
func (db *DB) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if c := db.nesting.Load(); c != nil {
		c.check(query)
	}
	defer db.afterWrite(ctx, query)
	// A Row cannot carry the wait's error: a query whose turn did not
	// come runs as before the turns, on the busy handler (or fails with
	// the ended ctx).
	if done, err := db.plainWriteTurn(ctx, query); err == nil {
		defer done()
	}
	if st := db.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	args = db.pgArgs(query, args)
	row := db.DB.QueryRowContext(ctx, query, args...)
	if stalePlan(row.Err()) {
		row = db.DB.QueryRowContext(ctx, query, args...)
	}
	return row
}

// QueryContext runs a query through the statement cache. On PostgreSQL
// a query refused for a stale plan (see stalePlan) runs once more.
func (db *DB) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if c := db.nesting.Load(); c != nil {
		c.check(query)
	}
	defer db.afterWrite(ctx, query)
	done, err := db.plainWriteTurn(ctx, query)
	if err != nil {
		return nil, err
	}
	defer done()
	if st := db.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	args = db.pgArgs(query, args)
	rows, err := db.DB.QueryContext(ctx, query, args...)
	if stalePlan(err) {
		rows, err = db.DB.QueryContext(ctx, query, args...)
	}
	return rows, err
}

// ExecContext runs a statement through the statement cache. On
// PostgreSQL a statement refused for a stale plan (see stalePlan) runs
// once more: it was refused before it ran.
func (db *DB) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if c := db.nesting.Load(); c != nil {
		c.check(query)
	}
	if db.writes != nil && plainWrite(query) {
		return db.execInTx(ctx, query, args)
	}
	defer db.afterWrite(ctx, query)
	defer db.checkpoints.committed()
	if st := db.stmt(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	args = db.pgArgs(query, args)
	res, err := db.DB.ExecContext(ctx, query, args...)
	if stalePlan(err) {
		res, err = db.DB.ExecContext(ctx, query, args...)
	}
	return res, err
}

// statementContext is the context a statement of the transaction runs
// with: on SQLite one that never ends (see DB.Tx: an interrupted write
// would roll back the whole group's transaction; and modernc's driver
// starts no watcher goroutine per statement for it).
func (t *Tx) statementContext(ctx context.Context) context.Context {
	if t.db.writes != nil {
		return context.WithoutCancel(ctx)
	}
	return ctx
}

// QueryRowContext runs a query in the transaction, reusing the
// database's cached statement when there is one.
func (t *Tx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	ctx = t.statementContext(ctx)
	t.noteWrites(query)
	if st := t.cachedOrNote(query); st != nil {
		return t.Tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
	}
	return t.Tx.QueryRowContext(ctx, query, t.db.pgArgs(query, args)...)
}

// QueryContext runs a query in the transaction, reusing the database's
// cached statement.
func (t *Tx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	ctx = t.statementContext(ctx)
	t.noteWrites(query)
	if st := t.cachedOrNote(query); st != nil {
		return t.Tx.StmtContext(ctx, st).QueryContext(ctx, args...)
	}
	return t.Tx.QueryContext(ctx, query, t.db.pgArgs(query, args)...)
}

// ExecContext runs a statement in the transaction, reusing the
// database's cached statement.
func (t *Tx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	ctx = t.statementContext(ctx)
	t.noteWrites(query)
	if st := t.cachedOrNote(query); st != nil {
		return t.Tx.StmtContext(ctx, st).ExecContext(ctx, args...)
	}
	return t.Tx.ExecContext(ctx, query, t.db.pgArgs(query, args)...)
}

package store

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"sync"
)

// maxCachedStatements bounds the statement cache. Queries are constant
// texts in the code, so the bound is only a guard against code that
// builds SQL text dynamically.
const maxCachedStatements = 512

// Dynamic starts the text of a query built at run time (a VALUES list
// of a varying number of rows, say): such a query is never cached, so
// that its many texts cannot fill the cache and push out the hot ones.
const Dynamic = "/* dynamic */ "

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
	st, err := db.DB.PrepareContext(ctx, query)
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
// through the statement cache.
func (db *DB) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	defer db.afterWrite(ctx, query)
	if st := db.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return db.DB.QueryRowContext(ctx, query, args...)
}

// QueryContext runs a query through the statement cache.
func (db *DB) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	defer db.afterWrite(ctx, query)
	if st := db.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return db.DB.QueryContext(ctx, query, args...)
}

// ExecContext runs a statement through the statement cache.
func (db *DB) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	defer db.afterWrite(ctx, query)
	if st := db.stmt(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return db.DB.ExecContext(ctx, query, args...)
}

// QueryRowContext runs a query in the transaction, reusing the
// database's cached statement when there is one.
func (t *Tx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	t.noteWrites(query)
	if st := t.cachedOrNote(query); st != nil {
		return t.Tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
	}
	return t.Tx.QueryRowContext(ctx, query, args...)
}

// QueryContext runs a query in the transaction, reusing the database's
// cached statement.
func (t *Tx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	t.noteWrites(query)
	if st := t.cachedOrNote(query); st != nil {
		return t.Tx.StmtContext(ctx, st).QueryContext(ctx, args...)
	}
	return t.Tx.QueryContext(ctx, query, args...)
}

// ExecContext runs a statement in the transaction, reusing the
// database's cached statement.
func (t *Tx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	t.noteWrites(query)
	if st := t.cachedOrNote(query); st != nil {
		return t.Tx.StmtContext(ctx, st).ExecContext(ctx, args...)
	}
	return t.Tx.ExecContext(ctx, query, args...)
}

package feeds

import (
	"context"
	"database/sql"
	"sync"

	"forgeapi/internal/store"
)

// stmtCache keeps the feeds' prepared statements by SQL text, so that a
// poll does not parse and plan its queries again (on SQLite that is most
// of a feed query's cost). It holds at most maxStmts statements; texts
// beyond that run unprepared.
type stmtCache struct {
	db    *store.DB
	mu    sync.Mutex
	stmts map[string]*sql.Stmt
}

const maxStmts = 512

func newStmtCache(db *store.DB) *stmtCache {
	return &stmtCache{db: db, stmts: map[string]*sql.Stmt{}}
}

func (c *stmtCache) stmt(ctx context.Context, query string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.stmts[query]; ok {
		return s
	}
	if len(c.stmts) >= maxStmts {
		return nil
	}
	s, err := c.db.PrepareContext(ctx, query)
	if err != nil {
		return nil // the unprepared query reports the error
	}
	c.stmts[query] = s
	return s
}

// QueryContext runs the query through its prepared statement.
func (c *stmtCache) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if s := c.stmt(ctx, query); s != nil {
		return s.QueryContext(ctx, args...)
	}
	return c.db.QueryContext(ctx, query, args...)
}

// QueryRowContext runs the query through its prepared statement.
func (c *stmtCache) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if s := c.stmt(ctx, query); s != nil {
		return s.QueryRowContext(ctx, args...)
	}
	return c.db.QueryRowContext(ctx, query, args...)
}

// querier is what the feed queries run on: the statement cache, or a
// store handle.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

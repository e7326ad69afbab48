package feeds

import (
	"context"
	"database/sql"
	"sync"

	"forgeapi/internal/store"
)

// stmtCache keeps the prepared statements of the union queries (network
// and received feeds), whose text depends on their number of sources: the
// store's own statement cache is shared by every area and bounded against
// dynamic texts, so these get their own bounded cache instead of filling
// it. Parsing and planning a union of dozens of parts is most of its cost
// on SQLite. It holds at most maxStmts statements; texts beyond that run
// unprepared.
type stmtCache struct {
	db    *store.DB
	mu    sync.Mutex
	stmts map[string]*sql.Stmt
}

const maxStmts = 256

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
	s, err := c.db.DB.PrepareContext(ctx, query)
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
	return c.db.DB.QueryContext(ctx, query, args...)
}

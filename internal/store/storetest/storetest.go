// Package storetest holds what tests of the areas use to look at their
// SQL from the outside: a store.Q that counts the statements it runs, so
// that a test can pin how many queries a page costs, and a store opened
// on a copy of a database migrated once per machine (OpenSQLite), for
// tests below the harness (internal/apptest) that need one.
package storetest

import (
	"context"
	"database/sql"

	"forgeapi/internal/store"
)

// CountingQ is a store.Q that counts the statements run through it.
type CountingQ struct {
	store.Q
	N int
}

// ExecContext counts and runs the statement.
func (c *CountingQ) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	c.N++
	return c.Q.ExecContext(ctx, query, args...)
}

// QueryContext counts and runs the query.
func (c *CountingQ) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	c.N++
	return c.Q.QueryContext(ctx, query, args...)
}

// QueryRowContext counts and runs the query.
func (c *CountingQ) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	c.N++
	return c.Q.QueryRowContext(ctx, query, args...)
}

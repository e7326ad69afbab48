package store

import (
	"context"
	"database/sql"
	"strings"
)

// Writes outside a transaction (SQLite).
//
// A statement that writes outside Tx needs SQLite's one write lock like a
// transaction does. Left to SQLite's busy handler it would wait for the
// lock on a connection of the pool, and while the process's transactions
// hold the lock, enough such waiters took every connection: a transaction
// that read through the pool then waited for a connection held by a
// statement waiting for that transaction's lock, until busy_timeout
// failed the statements (SQLITE_BUSY). So on SQLite such a statement
// first takes its turn in the write queue, holding no connection while it
// waits: an Exec runs as a transaction of its own (and joins a group), a
// query that writes (INSERT ... RETURNING) runs in a turn alone.

// plainWrite reports whether query writes: it starts with INSERT,
// UPDATE, DELETE or REPLACE, or is a WITH whose statement writes. Schema
// changes and PRAGMAs are left to the busy handler (migrations and the
// checkpointer take their own turns).
func plainWrite(query string) bool {
	q := strings.TrimLeft(strings.TrimPrefix(query, Dynamic), " \t\r\n(")
	verb, _, _ := strings.Cut(q, " ")
	switch strings.ToUpper(strings.TrimSpace(verb)) {
	case "INSERT", "UPDATE", "DELETE", "REPLACE":
		return true
	case "WITH":
		return writePattern.MatchString(q)
	}
	return false
}

// execInTx runs a writing Exec outside a transaction as a transaction of
// its own, which waits for its turn in the write queue (see above) and
// tells the watchers and the checkpointer of its write when it commits.
func (db *DB) execInTx(ctx context.Context, query string, args []any) (sql.Result, error) {
	var res sql.Result
	err := db.runTx(ctx, func(tx *Tx) error {
		var err error
		res, err = tx.ExecContext(ctx, query, args...)
		return err
	})
	return res, err
}

// plainWriteTurn takes, on SQLite, the process's write turn for a query
// that writes outside a transaction, and returns the function that gives
// it back once the query has run. SQLite writes a statement's rows, and
// computes what RETURNING returns, at its first step, which the driver
// takes before the query returns; the lock is released when the caller
// has read the rows. Other queries, and PostgreSQL's, take no turn.
func (db *DB) plainWriteTurn(ctx context.Context, query string) (done func(), err error) {
	if db.writes == nil || !plainWrite(query) {
		return func() {}, nil
	}
	if err := db.writes.enterAlone(ctx); err != nil {
		return nil, err
	}
	return db.writes.handOff, nil
}

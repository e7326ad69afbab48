package store

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestPlainWrite(t *testing.T) {
	for query, want := range map[string]bool{
		"INSERT INTO items (name) VALUES ($1)":                      true,
		"\n\t\tUPDATE items SET name = $1":                          true,
		"delete from items":                                         true,
		Dynamic + "INSERT INTO items (name) VALUES ($1), ($2)":      true,
		"WITH n(i) AS (SELECT 1) INSERT INTO items SELECT i FROM n": true,
		"WITH n(i) AS (SELECT 1) SELECT i FROM n":                   false,
		"SELECT name FROM items WHERE name = 'UPDATE'":              false,
		"PRAGMA wal_checkpoint(PASSIVE)":                            false,
		"CREATE TABLE t (x INTEGER)":                                false,
		"VACUUM INTO 'x.db'":                                        false,
	} {
		if got := plainWrite(query); got != want {
			t.Errorf("plainWrite(%q) = %v, want %v", query, got, want)
		}
	}
}

// TestPlainWritesLeaveThePoolToTransactions: while a transaction holds
// the write lock, more writes outside transactions than the pool has
// connections wait for their turn without taking a connection, so the
// transaction's read through the pool runs at once, and every write runs
// after it. (Waiting on SQLite's busy handler, they took every connection
// and the read waited until busy_timeout failed them with SQLITE_BUSY.)
func TestPlainWritesLeaveThePoolToTransactions(t *testing.T) {
	db := openSQLiteForTest(t)
	ctx := context.Background()
	const writers = 12 // more than the pool's 8 connections
	var wg sync.WaitGroup
	errs := make(chan error, 2*writers)
	err := db.Tx(ctx, func(tx *Tx) error {
		if err := insertItem(ctx, tx, "in-tx"); err != nil {
			return err
		}
		for i := range writers {
			wg.Add(2)
			go func() {
				defer wg.Done()
				_, err := db.ExecContext(ctx, "INSERT INTO items (name) VALUES ($1)", fmt.Sprintf("exec-%d", i))
				errs <- err
			}()
			go func() {
				defer wg.Done()
				var name string
				errs <- db.QueryRowContext(ctx, "INSERT INTO items (name) VALUES ($1) RETURNING name", fmt.Sprintf("returning-%d", i)).Scan(&name)
			}()
		}
		awaitWaiting(t, db, 2*writers)
		readCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		var n int
		if err := db.QueryRowContext(readCtx, "SELECT count(*) FROM items").Scan(&n); err != nil {
			return fmt.Errorf("read through the pool: %w", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if got := len(committedItems(t, db)); got != 1+2*writers {
		t.Errorf("%d items committed, want %d", got, 1+2*writers)
	}
}

// TestCheckNestingFindsStatementsOutsideTheirTransaction: a read, a
// write and a transaction run on the DB from inside a transaction's
// function are each recorded with the stack (the write would wait for its
// turn behind that transaction; each needs a second connection of
// PostgreSQL's pool while the transaction holds one); a statement on the
// DB after the transaction is not.
func TestCheckNestingFindsStatementsOutsideTheirTransaction(t *testing.T) {
	db := openSQLiteForTest(t)
	db.CheckNesting()
	ctx := context.Background()
	err := db.Tx(ctx, func(tx *Tx) error {
		var n int
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM items").Scan(&n); err != nil {
			return err
		}
		short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		if _, err := db.ExecContext(short, "INSERT INTO items (name) VALUES ('outside')"); err == nil {
			return fmt.Errorf("a write outside its transaction ran while the transaction held the write turn")
		}
		if err := db.Tx(short, func(*Tx) error { return nil }); err == nil {
			return fmt.Errorf("a transaction inside a transaction's function had its turn")
		}
		return insertItem(ctx, tx, "inside")
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := insertItem(ctx, db, "after"); err != nil {
		t.Fatal(err)
	}
	v := db.Violations()
	want := []string{
		"a read on the DB inside a transaction's function: SELECT count(*) FROM items",
		"a write on the DB inside a transaction's function: INSERT INTO items (name) VALUES ('outside')",
		"a transaction begun inside a transaction's function",
	}
	if len(v) != len(want) {
		t.Fatalf("violations: %q", v)
	}
	for i, w := range want {
		if !strings.HasPrefix(v[i], w+"\n") || !strings.Contains(v[i], "TestCheckNesting") {
			t.Errorf("violation %d: %q, want %q and the test's stack", i, v[i], w)
		}
	}
}

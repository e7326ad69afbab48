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

// TestCheckNestingFindsAWriteOutsideItsTransaction: a write on the DB
// from inside a transaction's function is recorded with its stack (it
// would wait for its turn behind that transaction); a read is not.
func TestCheckNestingFindsAWriteOutsideItsTransaction(t *testing.T) {
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
		return insertItem(ctx, tx, "inside")
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := insertItem(ctx, db, "after"); err != nil {
		t.Fatal(err)
	}
	v := db.Violations()
	if len(v) != 1 || !strings.Contains(v[0], "INSERT INTO items (name) VALUES ('outside')") || !strings.Contains(v[0], "TestCheckNesting") {
		t.Fatalf("violations: %q", v)
	}
}

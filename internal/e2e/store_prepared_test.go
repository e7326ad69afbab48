package e2e_test

import (
	"context"
	"testing"

	"forgeapi/internal/apptest"
	"forgeapi/internal/store"
)

// TestPostgresPreparesStatementsByName checks, on one connection (a
// transaction), that a constant query is prepared by name once however
// often it runs, and that a Dynamic one is not prepared by name at all.
func TestPostgresPreparesStatementsByName(t *testing.T) {
	if !apptest.Postgres() {
		t.Skip("PostgreSQL only (SQLite has its own statement cache)")
	}
	t.Parallel()
	db, _ := open(t)
	ctx := context.Background()
	mustExec(t, db, `CREATE TABLE probe (id BIGINT PRIMARY KEY, v BIGINT NOT NULL)`)
	const constant = `SELECT v FROM probe WHERE id = $1`
	const dynamic = store.Dynamic + `SELECT v FROM probe WHERE id IN ($1, $2)`
	err := db.Tx(ctx, func(tx *store.Tx) error {
		mustExec(t, tx, `INSERT INTO probe (id, v) VALUES ($1, $2)`, 1, 10)
		for range 3 {
			var v int64
			if err := tx.QueryRowContext(ctx, constant, 1).Scan(&v); err != nil || v != 10 {
				t.Fatalf("constant query: %d, %v", v, err)
			}
			rows, err := tx.QueryContext(ctx, dynamic, 1, 2)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for rows.Next() {
				n++
			}
			if err := rows.Close(); err != nil || n != 1 {
				t.Fatalf("dynamic query: %d rows, %v", n, err)
			}
			if _, err := tx.ExecContext(ctx, store.Dynamic+`UPDATE probe SET v = v WHERE id IN ($1, $2)`, 1, 2); err != nil {
				t.Fatal(err)
			}
		}
		count := func(text string) int {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM pg_prepared_statements WHERE statement = $1`, text).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		if n := count(constant); n != 1 {
			t.Errorf("constant query prepared %d times on the connection, want 1", n)
		}
		if n := count(dynamic); n != 0 {
			t.Errorf("dynamic query prepared %d times on the connection, want 0", n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestPostgresSurvivesStalePlans changes the result type of a prepared
// query, as another server's migration would: PostgreSQL then refuses the
// statement prepared before ("cached plan must not change result type").
// The store runs a query outside a transaction again, RetryTx runs the
// transaction again, and a plain transaction fails once per connection
// and statement, after which the statement is prepared anew.
func TestPostgresSurvivesStalePlans(t *testing.T) {
	if !apptest.Postgres() {
		t.Skip("PostgreSQL only")
	}
	t.Parallel()
	db, _ := open(t)
	ctx := context.Background()
	mustExec(t, db, `CREATE TABLE probe (id BIGINT PRIMARY KEY, v BIGINT NOT NULL)`)
	mustExec(t, db, `INSERT INTO probe (id, v) VALUES (1, 10)`)
	const query = `SELECT v FROM probe WHERE id = $1`
	alter := func(typ string) {
		mustExec(t, db, `ALTER TABLE probe ALTER COLUMN v TYPE `+typ+` USING v::`+typ)
	}
	read := func(q store.Q) (string, error) {
		var v string
		err := q.QueryRowContext(ctx, query, 1).Scan(&v)
		return v, err
	}

	// One dedicated connection shows what PostgreSQL and pgx do.
	conn, err := db.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var v string
	if err := conn.QueryRowContext(ctx, query, 1).Scan(&v); err != nil {
		t.Fatal(err)
	}
	alter("TEXT")
	err = conn.QueryRowContext(ctx, query, 1).Scan(&v)
	if err == nil {
		t.Fatal("a statement prepared before the column's type changed ran: the statement is not prepared by name")
	}
	if !store.Retryable(err) {
		t.Errorf("stale plan %v is not Retryable", err)
	}
	if err := conn.QueryRowContext(ctx, query, 1).Scan(&v); err != nil || v != "10" {
		t.Fatalf("after the refusal the statement is not prepared anew: %q, %v", v, err)
	}
	conn.Close()

	// Through the store, on whichever connections the pool hands out.
	for range 20 {
		if v, err := read(db); err != nil || v != "10" {
			t.Fatalf("before: %q, %v", v, err)
		}
		if err := db.Tx(ctx, func(tx *store.Tx) error { _, err := read(tx); return err }); err != nil {
			t.Fatalf("before, in a transaction: %v", err)
		}
	}
	alter("BIGINT")
	for i := range 20 {
		if v, err := read(db); err != nil || v != "10" {
			t.Fatalf("call %d after the change: %q, %v", i, v, err)
		}
		if err := db.RetryTx(ctx, func(tx *store.Tx) error { _, err := read(tx); return err }); err != nil {
			t.Fatalf("RetryTx %d after the change: %v", i, err)
		}
	}
}

// TestPostgresKeepsConnections checks that database/sql keeps its
// connections between queries: one closed after every query loses the
// statements prepared on it (a *sql.Stmt is then prepared again and
// deallocated around every call).
func TestPostgresKeepsConnections(t *testing.T) {
	if !apptest.Postgres() {
		t.Skip("PostgreSQL only")
	}
	t.Parallel()
	db, _ := open(t)
	ctx := context.Background()
	st, err := db.DB.PrepareContext(ctx, `SELECT count(*) FROM pg_prepared_statements WHERE statement = $1`)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	before := db.DB.Stats().MaxIdleClosed
	for range 20 {
		var n int
		if err := st.QueryRowContext(ctx, `SELECT count(*) FROM pg_prepared_statements WHERE statement = $1`).Scan(&n); err != nil || n != 1 {
			t.Fatalf("the prepared statement is on its connection %d times (%v), want 1", n, err)
		}
	}
	if closed := db.DB.Stats().MaxIdleClosed - before; closed != 0 {
		t.Errorf("%d connections closed after their query", closed)
	}
}

package e2e_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"forgeapi/internal/apptest"
	"forgeapi/internal/store"
)

// crossedUpdates runs two transactions through run at once: the first
// updates row 1 then row 2, the second row 2 then row 1, and on their
// first attempt each waits until the other holds its first row, so that
// PostgreSQL finds a deadlock and aborts one of them.
func crossedUpdates(t *testing.T, run func(context.Context, func(*store.Tx) error) error) [2]error {
	t.Helper()
	ctx := context.Background()
	var errs [2]error
	locked := [2]chan struct{}{make(chan struct{}), make(chan struct{})}
	var wg sync.WaitGroup
	for side, order := range [2][2]int{{1, 2}, {2, 1}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			attempt := 0
			errs[side] = run(ctx, func(tx *store.Tx) error {
				attempt++
				if _, err := tx.ExecContext(ctx, `UPDATE probe SET n = n + 1 WHERE id = $1`, order[0]); err != nil {
					return err
				}
				if attempt == 1 {
					close(locked[side])
					select {
					case <-locked[1-side]:
					case <-time.After(10 * time.Second):
					}
				}
				_, err := tx.ExecContext(ctx, `UPDATE probe SET n = n + 1 WHERE id = $1`, order[1])
				return err
			})
		}()
	}
	wg.Wait()
	return errs
}

func TestRetryTxRunsADeadlockedTransactionAgain(t *testing.T) {
	apptest.SkipUnlessPostgres(t, "SQLite transactions hold the one write lock from BEGIN on: they cannot deadlock")
	t.Parallel()
	db, _ := open(t)
	mustExec(t, db, `CREATE TABLE probe (id BIGINT PRIMARY KEY, n BIGINT NOT NULL)`)
	mustExec(t, db, `INSERT INTO probe (id, n) VALUES (1, 0), (2, 0)`)

	// Plain Tx: PostgreSQL aborts one of the two, and Retryable says so.
	errs := crossedUpdates(t, db.Tx)
	failed := 0
	for _, err := range errs {
		if err != nil {
			failed++
			if !store.Retryable(err) {
				t.Errorf("Tx: %v is not Retryable", err)
			}
		}
	}
	if failed != 1 {
		t.Fatalf("Tx: want exactly one transaction aborted by the deadlock, got errors %v", errs)
	}

	// RetryTx: the aborted one runs again and both commit.
	if errs := crossedUpdates(t, db.RetryTx); errs[0] != nil || errs[1] != nil {
		t.Fatalf("RetryTx: %v", errs)
	}
	var n1, n2 int64
	if err := db.QueryRowContext(context.Background(), `SELECT (SELECT n FROM probe WHERE id = 1), (SELECT n FROM probe WHERE id = 2)`).Scan(&n1, &n2); err != nil {
		t.Fatal(err)
	}
	if n1 != 3 || n2 != 3 { // one committed Tx, two committed RetryTx
		t.Errorf("rows updated %d and %d times, want 3 and 3", n1, n2)
	}
}

package apptest

import (
	"database/sql"
	"fmt"
	"testing"

	"forgeapi/internal/testwait"
)

// CommitGate holds the transactions that change rows of a table at their
// commit, after everything else they do, until Open: a test of what
// concurrent transactions see of each other (two completions each
// reading the other's row) makes them overlap every time, not by chance.
// PostgreSQL only (a deferred constraint trigger waits on a table the
// gate locks); the test skips on SQLite, whose write transactions never
// overlap.
type CommitGate struct {
	t    testing.TB
	env  *Env
	name string  // the gate's table, function and trigger
	held *sql.Tx // holds the gate's table locked until Open
}

// gateNeeds is why a test of a CommitGate skips on SQLite.
const gateNeeds = "SQLite's write transactions never overlap (CommitGate)"

// SkipUnlessPostgres skips the test unless the suite runs on PostgreSQL;
// why says what the test needs it for. A test of a CommitGate calls it
// before it starts a server (gateNeeds).
func SkipUnlessPostgres(t testing.TB, why string) {
	t.Helper()
	if !Postgres() {
		t.Skip("needs PostgreSQL (" + PostgresURLEnv + "): " + why)
	}
}

// CommitGate closes a gate on the transactions that change rows of table
// by event ("UPDATE", "DELETE", "INSERT") for which the trigger condition
// when holds (in terms of OLD and NEW, as in `NEW.status = 'completed'`).
func (e *Env) CommitGate(t testing.TB, event, table, when string) *CommitGate {
	t.Helper()
	SkipUnlessPostgres(t, gateNeeds)
	g := &CommitGate{t: t, env: e, name: "commit_gate_" + table}
	db, ctx := e.App.DB, Ctx()
	for _, q := range []string{
		`CREATE TABLE ` + g.name + ` (x int)`,
		`CREATE FUNCTION ` + g.name + `() RETURNS trigger LANGUAGE plpgsql AS
			'BEGIN PERFORM 1 FROM ` + g.name + ` FOR SHARE; RETURN NULL; END'`,
		`CREATE CONSTRAINT TRIGGER ` + g.name + ` AFTER ` + event + ` ON ` + table + ` DEFERRABLE INITIALLY DEFERRED
			FOR EACH ROW WHEN (` + when + `) EXECUTE FUNCTION ` + g.name + `()`,
	} {
		_, err := db.ExecContext(ctx, q)
		Must(t, "set up the commit gate", err)
	}
	held, err := db.BeginTx(ctx, nil)
	Must(t, "begin the commit gate", err)
	t.Cleanup(func() { _ = held.Rollback() })
	_, err = held.ExecContext(ctx, `LOCK TABLE `+g.name+` IN EXCLUSIVE MODE`)
	Must(t, "close the commit gate", err)
	g.held = held
	return g
}

// WaitFor waits until n transactions wait: at the gate, or behind a lock
// that one waiting at the gate holds (a transaction serialised behind
// another never reaches the gate before the other commits).
func (g *CommitGate) WaitFor(n int) {
	g.t.Helper()
	testwait.For(g.t, fmt.Sprintf("%d transactions waiting at the commit gate or behind one there", n), func() error {
		var waiting int
		err := g.env.App.DB.QueryRowContext(Ctx(), `SELECT
			(SELECT count(*) FROM pg_locks WHERE relation = $1::regclass AND NOT granted) +
			(SELECT count(*) FROM pg_stat_activity a JOIN pg_locks l ON l.pid = ANY(pg_blocking_pids(a.pid))
				WHERE l.relation = $1::regclass AND NOT l.granted)`, g.name).Scan(&waiting)
		if err != nil {
			return err
		}
		if waiting < n {
			return fmt.Errorf("%d waiting", waiting)
		}
		return nil
	})
}

// Open lets the transactions held at the gate commit, and the later ones
// through.
func (g *CommitGate) Open() {
	g.t.Helper()
	Must(g.t, "open the commit gate", g.held.Rollback())
}

// Run sends each request from its own goroutine, waits until all of
// them wait at the gate or behind one there (WaitFor), opens the gate
// and returns what each request returned (its response's status), in
// order.
func (g *CommitGate) Run(requests ...func() int) []int {
	g.t.Helper()
	done := make([]chan int, len(requests))
	for i, request := range requests {
		done[i] = make(chan int, 1)
		go func() { done[i] <- request() }()
	}
	g.WaitFor(len(requests))
	g.Open()
	statuses := make([]int, len(requests))
	for i := range done {
		statuses[i] = <-done[i]
	}
	return statuses
}

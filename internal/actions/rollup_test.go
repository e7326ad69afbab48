package actions_test

import (
	"fmt"
	"testing"

	"forgeapi/internal/apptest"
	"forgeapi/internal/testwait"
)

// pairWorkflow has two jobs that need nothing: the built-in runner's two
// slots run them at once.
const pairWorkflow = `on: push
jobs:
  left:
    runs-on: ubuntu-latest
    steps:
      - run: "true"
  right:
    runs-on: ubuntu-latest
    steps:
      - run: "true"
`

// TestJobsCompletingTogetherCompleteTheirRun holds both jobs of a run
// at the commit of their completion (a deferred trigger waits on a table
// the test locks), so that each completion has done its reads before
// either commits, then lets them go: the run completes with success.
// Each completion rolls the run up; reading the run's jobs without its
// row locked first, each saw the other job still in progress and the run
// stayed in progress for good. With the lock the second completion waits
// for the first's commit instead of reaching the gate: the gate opens
// once both completions wait, at it or behind it. PostgreSQL only:
// SQLite's write transactions never overlap.
func TestJobsCompletingTogetherCompleteTheirRun(t *testing.T) {
	apptest.SkipJobsUnderRace(t)
	if !apptest.Postgres() {
		t.Skip("needs PostgreSQL (" + apptest.PostgresURLEnv + "): SQLite's write transactions never overlap")
	}
	f := start(t)
	db, ctx := f.env.App.DB, apptest.Ctx()
	for _, q := range []string{
		`CREATE TABLE completion_gate (x int)`,
		`CREATE FUNCTION wait_at_completion_gate() RETURNS trigger LANGUAGE plpgsql AS
			'BEGIN PERFORM 1 FROM completion_gate FOR SHARE; RETURN NEW; END'`,
		`CREATE CONSTRAINT TRIGGER completion_gate AFTER UPDATE ON actions_jobs DEFERRABLE INITIALLY DEFERRED
			FOR EACH ROW WHEN (NEW.status = 'completed' AND OLD.status <> 'completed')
			EXECUTE FUNCTION wait_at_completion_gate()`,
	} {
		_, err := db.ExecContext(ctx, q)
		apptest.Must(t, "set up the gate", err)
	}
	gate, err := db.BeginTx(ctx, nil)
	apptest.Must(t, "begin the gate", err)
	t.Cleanup(func() { _ = gate.Rollback() })
	_, err = gate.ExecContext(ctx, `LOCK TABLE completion_gate IN EXCLUSIVE MODE`)
	apptest.Must(t, "close the gate", err)

	f.push(t, map[string]string{".github/workflows/pair.yml": pairWorkflow})
	testwait.For(t, "both jobs' completions waiting, at the gate or behind one there", func() error {
		var waiting int
		if err := db.QueryRowContext(ctx, `SELECT
			(SELECT count(*) FROM pg_locks WHERE relation = 'completion_gate'::regclass AND NOT granted) +
			(SELECT count(*) FROM pg_stat_activity a JOIN pg_locks g ON g.pid = ANY(pg_blocking_pids(a.pid))
				WHERE g.relation = 'completion_gate'::regclass AND NOT g.granted)`).Scan(&waiting); err != nil {
			return err
		}
		if waiting < 2 {
			return fmt.Errorf("%d waiting", waiting)
		}
		return nil
	})
	apptest.Must(t, "open the gate", gate.Rollback())

	if run := f.completedRun(t, "pair.yml", 1); run.GetConclusion() != "success" {
		t.Fatalf("run %s, want success", run.GetConclusion())
	}
}

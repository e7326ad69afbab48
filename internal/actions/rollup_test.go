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
// between their completion's write and its commit (a trigger waits on a
// table the test locks), then lets them go together: the run completes
// with success. Each completion rolls the run up; without the run's row
// locked first, each saw the other job still in progress and the run
// stayed in progress for good. PostgreSQL only: SQLite's write
// transactions never overlap.
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
		`CREATE TRIGGER completion_gate AFTER UPDATE OF status ON actions_jobs FOR EACH ROW
			WHEN (NEW.status = 'completed') EXECUTE FUNCTION wait_at_completion_gate()`,
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
	testwait.For(t, "both jobs' completions at the gate", func() error {
		var waiting int
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM pg_locks
			WHERE relation = 'completion_gate'::regclass AND NOT granted`).Scan(&waiting); err != nil {
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

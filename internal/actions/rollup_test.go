package actions_test

import (
	"testing"

	"forgeapi/internal/apptest"
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

// TestJobsCompletingTogetherCompleteTheirRun holds both jobs of a run at
// the commit of their completion (apptest.CommitGate), so that each
// completion has done its reads before either commits, then lets them go:
// the run completes with success. Each completion rolls the run up;
// reading the run's jobs without its row locked first, each saw the
// other job still in progress and the run stayed in progress for good.
// With the lock the second completion waits behind the first instead of
// reaching the gate. PostgreSQL only.
func TestJobsCompletingTogetherCompleteTheirRun(t *testing.T) {
	apptest.SkipJobsUnderRace(t)
	apptest.SkipUnlessPostgres(t, "concurrent transactions that overlap (CommitGate)")
	f := start(t)
	gate := f.env.CommitGate(t, "UPDATE", "actions_jobs", "NEW.status = 'completed' AND OLD.status <> 'completed'")
	f.push(t, map[string]string{".github/workflows/pair.yml": pairWorkflow})
	gate.WaitFor(2)
	gate.Open()
	if run := f.completedRun(t, "pair.yml", 1); run.GetConclusion() != "success" {
		t.Fatalf("run %s, want success", run.GetConclusion())
	}
}

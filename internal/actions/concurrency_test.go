package actions_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/testwait"
)

// concurrencyWorkflow's job waits for the gate file named in the commit
// (gate.txt) when there is one, then marks its commit done, and reports
// whether the other commit's run was done before it started.
const concurrencyWorkflow = `name: Deploy
on: push
concurrency:
  group: deploy-${{ github.ref }}
  cancel-in-progress: CANCEL
jobs:
  deploy:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: |
          if [ -f other.txt ]; then if [ -f "$(cat other.txt)" ]; then echo "other was $(echo done)"; else echo "other was $(echo running)"; fi; fi
          if [ -f gate.txt ]; then while [ ! -f "$(cat gate.txt)" ]; do sleep 0.1; done; fi
          touch "$(cat done.txt)"
`

// runsOfDeploy returns the Deploy runs, oldest first.
func runsOfDeploy(t *testing.T, f *fixture, n int) []*github.WorkflowRun {
	t.Helper()
	var out []*github.WorkflowRun
	testwait.For(t, fmt.Sprintf("%d Deploy runs", n), func() error {
		runs, _, err := f.c.Actions.ListWorkflowRunsByFileName(apptest.Ctx(), "octo", "hello", "deploy.yml", nil)
		if err != nil || len(runs.WorkflowRuns) < n {
			return fmt.Errorf("runs: %v", err)
		}
		out = nil
		for i := len(runs.WorkflowRuns) - 1; i >= 0; i-- {
			out = append(out, runs.WorkflowRuns[i])
		}
		return nil
	})
	return out
}

func TestConcurrencyGroups(t *testing.T) {
	apptest.SkipJobsUnderRace(t)
	for _, cancel := range []bool{true, false} {
		t.Run(fmt.Sprintf("cancel-in-progress=%v", cancel), func(t *testing.T) {
			f := start(t)
			dir := t.TempDir()
			gate, firstDone, secondDone := filepath.Join(dir, "gate"), filepath.Join(dir, "first"), filepath.Join(dir, "second")
			wf := strings.ReplaceAll(concurrencyWorkflow, "CANCEL", fmt.Sprint(cancel))
			f.push(t, map[string]string{".github/workflows/deploy.yml": wf, "gate.txt": gate, "done.txt": firstDone})
			first := runsOfDeploy(t, f, 1)[0]
			testwait.For(t, "the first run in progress", func() error {
				jobs := jobsByName(t, f, first.GetID(), "")
				if jobs["deploy"].GetStatus() != "in_progress" {
					return fmt.Errorf("job %s", jobs["deploy"].GetStatus())
				}
				return nil
			})
			f.push(t, map[string]string{"gate.txt": "", "done.txt": secondDone, "other.txt": firstDone})
			runs := runsOfDeploy(t, f, 2)
			if !cancel {
				apptest.Must(t, "open the gate", os.WriteFile(gate, nil, 0o600))
			}
			second := f.completedRun(t, "deploy.yml", 2)
			if second.GetID() == first.GetID() || runs[1].GetID() != second.GetID() {
				t.Fatalf("runs %d %d %d", first.GetID(), runs[1].GetID(), second.GetID())
			}
			first, _, err := f.c.Actions.GetWorkflowRunByID(apptest.Ctx(), "octo", "hello", first.GetID())
			apptest.Must(t, "first run", err)
			log := f.jobLog(t, jobsByName(t, f, second.GetID(), "")["deploy"].GetID())
			if second.GetConclusion() != "success" {
				t.Fatalf("second run %s:\n%s", second.GetConclusion(), log)
			}
			if cancel {
				if first.GetStatus() != "completed" || first.GetConclusion() != "cancelled" {
					t.Fatalf("first run %s %s, want cancelled", first.GetStatus(), first.GetConclusion())
				}
				return
			}
			if first.GetConclusion() != "success" || !strings.Contains(log, "other was done") {
				t.Fatalf("first run %s; the second ran before it ended:\n%s", first.GetConclusion(), log)
			}
		})
	}
}

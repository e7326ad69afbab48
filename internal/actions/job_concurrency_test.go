package actions_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"forgeapi/internal/apptest"
	"forgeapi/internal/testwait"
)

// jobConcurrencyWorkflow has a job without a group (build) and one in a
// job-level group (deploy), which waits for the gate file named in the
// commit when there is one, then marks its commit done, and reports
// whether the other commit's deploy was done before it started.
const jobConcurrencyWorkflow = `name: Deploy
on: push
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - run: echo built
  deploy:
    runs-on: ubuntu-latest
    concurrency:
      group: deploy-${{ github.ref }}-${{ matrix.target }}
      cancel-in-progress: CANCEL
    strategy:
      matrix:
        target: [prod]
    steps:
      - uses: actions/checkout@v4
      - run: |
          if [ -f other.txt ]; then if [ -f "$(cat other.txt)" ]; then echo "other was $(echo done)"; else echo "other was $(echo running)"; fi; fi
          if [ -f gate.txt ]; then while [ ! -f "$(cat gate.txt)" ]; do sleep 0.1; done; fi
          touch "$(cat done.txt)"
`

// TestJobConcurrencyGroups runs two pushes' runs whose deploy jobs share
// a job-level group (with a matrix value in it): the second run's build
// job runs while the first's deploy holds the group; the second deploy
// waits for the first (cancel-in-progress: false) or cancels it, which
// cancels the first run (true).
func TestJobConcurrencyGroups(t *testing.T) {
	apptest.SkipJobsUnderRace(t)
	for _, cancel := range []bool{true, false} {
		t.Run(fmt.Sprintf("cancel-in-progress=%v", cancel), func(t *testing.T) {
			f := start(t)
			dir := t.TempDir()
			gate, firstDone, secondDone := filepath.Join(dir, "gate"), filepath.Join(dir, "first"), filepath.Join(dir, "second")
			wf := strings.ReplaceAll(jobConcurrencyWorkflow, "CANCEL", fmt.Sprint(cancel))
			f.push(t, map[string]string{".github/workflows/deploy.yml": wf, "gate.txt": gate, "done.txt": firstDone})
			first := runsOfDeploy(t, f, 1)[0]
			testwait.For(t, "the first deploy in progress", func() error {
				if s := jobsByName(t, f, first.GetID(), "")["deploy (prod)"].GetStatus(); s != "in_progress" {
					return fmt.Errorf("job %s", s)
				}
				return nil
			})
			f.push(t, map[string]string{"gate.txt": "", "done.txt": secondDone, "other.txt": firstDone})
			second := runsOfDeploy(t, f, 2)[1]
			if !cancel {
				testwait.For(t, "the second build done while the first deploy runs", func() error {
					jobs := jobsByName(t, f, second.GetID(), "")
					if jobs["build"].GetConclusion() != "success" || jobs["deploy (prod)"].GetStatus() != "queued" {
						return fmt.Errorf("build %s, deploy %s", jobs["build"].GetConclusion(), jobs["deploy (prod)"].GetStatus())
					}
					return nil
				})
				if s := jobsByName(t, f, first.GetID(), "")["deploy (prod)"].GetStatus(); s != "in_progress" {
					t.Fatalf("first deploy %s", s)
				}
				apptest.Must(t, "open the gate", os.WriteFile(gate, nil, 0o600))
			}
			second = f.completedRun(t, "deploy.yml", 2)
			first, _, err := f.c.Actions.GetWorkflowRunByID(apptest.Ctx(), "octo", "hello", first.GetID())
			apptest.Must(t, "first run", err)
			log := f.jobLog(t, jobsByName(t, f, second.GetID(), "")["deploy (prod)"].GetID())
			if second.GetConclusion() != "success" {
				t.Fatalf("second run %s:\n%s", second.GetConclusion(), log)
			}
			firstJobs := jobsByName(t, f, first.GetID(), "")
			if firstJobs["build"].GetConclusion() != "success" {
				t.Fatalf("first build %s", firstJobs["build"].GetConclusion())
			}
			if cancel {
				if first.GetConclusion() != "cancelled" || firstJobs["deploy (prod)"].GetConclusion() != "cancelled" {
					t.Fatalf("first run %s, deploy %s, want cancelled", first.GetConclusion(), firstJobs["deploy (prod)"].GetConclusion())
				}
				return
			}
			if first.GetConclusion() != "success" || !strings.Contains(log, "other was done") {
				t.Fatalf("first run %s; the second deploy ran before it ended:\n%s", first.GetConclusion(), log)
			}
		})
	}
}

// TestJobConcurrencyCancelsThePendingJob queues three runs whose deploy
// jobs share a group while the first holds it: the second, pending, is
// cancelled by the third with the platform's message, and the third runs.
func TestJobConcurrencyCancelsThePendingJob(t *testing.T) {
	t.Parallel()
	apptest.SkipJobsUnderRace(t)
	f := start(t)
	dir := t.TempDir()
	gate := filepath.Join(dir, "gate")
	wf := strings.ReplaceAll(jobConcurrencyWorkflow, "CANCEL", "false")
	f.push(t, map[string]string{".github/workflows/deploy.yml": wf, "gate.txt": gate, "done.txt": filepath.Join(dir, "1")})
	first := runsOfDeploy(t, f, 1)[0]
	testwait.For(t, "the first deploy in progress", func() error {
		if s := jobsByName(t, f, first.GetID(), "")["deploy (prod)"].GetStatus(); s != "in_progress" {
			return fmt.Errorf("job %s", s)
		}
		return nil
	})
	f.push(t, map[string]string{"done.txt": filepath.Join(dir, "2")})
	f.push(t, map[string]string{"done.txt": filepath.Join(dir, "3")})
	runs := runsOfDeploy(t, f, 3)
	apptest.Must(t, "open the gate", os.WriteFile(gate, nil, 0o600))
	third := f.completedRun(t, "deploy.yml", 3)
	if third.GetID() != runs[2].GetID() || third.GetConclusion() != "success" {
		t.Fatalf("third run %d %s", third.GetID(), third.GetConclusion())
	}
	second, _, err := f.c.Actions.GetWorkflowRunByID(apptest.Ctx(), "octo", "hello", runs[1].GetID())
	apptest.Must(t, "second run", err)
	deploy := jobsByName(t, f, second.GetID(), "")["deploy (prod)"]
	if second.GetConclusion() != "cancelled" || deploy.GetConclusion() != "cancelled" {
		t.Fatalf("second run %s, deploy %s", second.GetConclusion(), deploy.GetConclusion())
	}
	log := f.jobLog(t, deploy.GetID())
	if !strings.Contains(log, "Canceling since a higher priority waiting request for 'deploy-refs/heads/main-prod' exists") {
		t.Fatalf("second deploy's log:\n%s", log)
	}
	if _, err := os.Stat(filepath.Join(dir, "2")); err == nil {
		t.Fatal("the cancelled deploy ran")
	}
}

package actions_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/testwait"
)

const (
	ciWorkflow    = "name: CI\non: push\njobs:\n  build:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo built\n"
	afterWorkflow = `name: After
on:
  workflow_run:
    workflows: [CI]
    types: [completed]
    branches: [main]
jobs:
  report:
    runs-on: ubuntu-latest
    steps:
      - run: echo "CI ended ${{ github.event.workflow_run.conclusion }}"
`
	// loopWorkflow follows After and itself: the chain stops at the
	// third level (CI, After, Loop).
	loopWorkflow     = "name: Loop\non:\n  workflow_run:\n    workflows: [After, Loop]\n    types: [completed]\njobs:\n  again:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo again\n"
	ignoredWorkflow  = "name: Ignored\non:\n  workflow_run:\n    workflows: [Other]\njobs:\n  x:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo no\n"
	dispatchWorkflow = `name: Dispatched
on:
  repository_dispatch:
    types: [deploy]
jobs:
  deploy:
    runs-on: ubuntu-latest
    steps:
      - run: echo "deploying ${{ github.event.client_payload.target }}"
`
)

// runsOf lists the repository's runs of an event, newest first.
func runsOf(t *testing.T, f *fixture, event string) []*github.WorkflowRun {
	t.Helper()
	runs, _, err := f.c.Actions.ListRepositoryWorkflowRuns(apptest.Ctx(), "octo", "hello", &github.ListWorkflowRunsOptions{Event: event})
	apptest.Must(t, "list runs", err)
	return runs.WorkflowRuns
}

// completedOf waits for n runs of the event, the newest completed, and
// returns it.
func completedOf(t *testing.T, f *fixture, event string, n int) *github.WorkflowRun {
	t.Helper()
	var run *github.WorkflowRun
	testwait.For(t, event+" run completed", func() error {
		runs := runsOf(t, f, event)
		if len(runs) < n || runs[0].GetStatus() != "completed" {
			return fmt.Errorf("%d %s runs", len(runs), event)
		}
		run = runs[0]
		return nil
	})
	return run
}

// TestWorkflowRunAndRepositoryDispatchTriggers: a workflow on
// workflow_run runs when the CI workflow it names completes (and reads
// the triggering run in github.event), one naming another workflow does
// not; a workflow on repository_dispatch runs for the listed type alone,
// with the client payload.
func TestWorkflowRunAndRepositoryDispatchTriggers(t *testing.T) {
	t.Parallel()
	apptest.SkipJobsUnderRace(t)
	f := start(t)
	ctx := apptest.Ctx()
	sha := f.push(t, map[string]string{".github/workflows/ci.yml": ciWorkflow, ".github/workflows/after.yml": afterWorkflow,
		".github/workflows/ignored.yml": ignoredWorkflow,
		".github/workflows/loop.yml":    loopWorkflow, ".github/workflows/dispatch.yml": dispatchWorkflow})

	apptest.Step(t, "workflow_run: After runs once CI completed, Loop after it, and no more", func(t *testing.T) {
		ci := completedOf(t, f, "push", 1)
		loop := completedOf(t, f, "workflow_run", 2) // the newest: Loop, which triggers nothing
		if loop.GetName() != "Loop" || loop.GetConclusion() != "success" {
			t.Fatalf("newest workflow_run run: %s %s", loop.GetName(), loop.GetConclusion())
		}
		var after *github.WorkflowRun
		for _, r := range runsOf(t, f, "workflow_run") {
			if r.GetName() == "After" {
				after = r
			}
		}
		if after == nil {
			t.Fatal("no After run")
		}
		if after.GetName() != "After" || after.GetConclusion() != "success" || after.GetHeadSHA() != sha || after.GetHeadBranch() != "main" {
			t.Fatalf("after: %s %s %s %s", after.GetName(), after.GetConclusion(), after.GetHeadSHA(), after.GetHeadBranch())
		}
		jobs := jobsByName(t, f, after.GetID(), "")
		if log := f.jobLog(t, jobs["report"].GetID()); !strings.Contains(log, "CI ended success") {
			t.Fatalf("log:\n%s", log)
		}
		if ci.GetName() != "CI" || len(runsOf(t, f, "workflow_run")) != 2 || len(runsOf(t, f, "")) != 3 {
			t.Fatalf("runs: %d workflow_run, %d in all", len(runsOf(t, f, "workflow_run")), len(runsOf(t, f, "")))
		}
	})
	apptest.Step(t, "repository_dispatch: only the listed type runs", func(t *testing.T) {
		other := json.RawMessage(`{"target":"nowhere"}`)
		_, _, err := f.c.Repositories.Dispatch(ctx, "octo", "hello", github.DispatchRequestOptions{EventType: "other", ClientPayload: &other})
		apptest.Must(t, "dispatch other", err)
		payload := json.RawMessage(`{"target":"production"}`)
		_, _, err = f.c.Repositories.Dispatch(ctx, "octo", "hello", github.DispatchRequestOptions{EventType: "deploy", ClientPayload: &payload})
		apptest.Must(t, "dispatch deploy", err)
		run := completedOf(t, f, "repository_dispatch", 1)
		if n := len(runsOf(t, f, "repository_dispatch")); n != 1 || run.GetName() != "Dispatched" || run.GetConclusion() != "success" ||
			run.GetHeadSHA() != sha {
			t.Fatalf("%d dispatch runs: %s %s", n, run.GetName(), run.GetConclusion())
		}
		jobs := jobsByName(t, f, run.GetID(), "")
		if log := f.jobLog(t, jobs["deploy"].GetID()); !strings.Contains(log, "deploying production") {
			t.Fatalf("log:\n%s", log)
		}
	})
}

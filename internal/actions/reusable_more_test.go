package actions_test

import (
	"strings"
	"testing"

	"forgeapi/internal/apptest"
)

// lastCallCaller calls a workflow once per combination, the first
// combination's call finishing last; "after" reports the caller's output.
const lastCallCaller = `name: Last call
on: push
jobs:
  build:
    strategy:
      matrix:
        speed: [slow, fast]
    uses: ./.github/workflows/timed.yml
    with:
      speed: ${{ matrix.speed }}
  after:
    needs: build
    runs-on: ubuntu-latest
    steps:
      - run: echo "the calls said ${{ needs.build.outputs.speed }}"
`

const timedWorkflow = `on:
  workflow_call:
    inputs:
      speed:
        type: string
        required: true
    outputs:
      speed:
        value: ${{ jobs.work.outputs.speed }}
jobs:
  work:
    runs-on: ubuntu-latest
    outputs:
      speed: ${{ steps.s.outputs.speed }}
    steps:
      - id: s
        run: |
          if [ "${{ inputs.speed }}" = slow ]; then sleep 3; fi
          echo "speed=${{ inputs.speed }}" >> "$GITHUB_OUTPUT"
`

// TestReusableWorkflowMatrixOutputsAreTheLastCalls: of a matrix of
// calls, the dependents see the outputs of the call that completed last
// (the first combination's, which sleeps), not the combinations' merged.
func TestReusableWorkflowMatrixOutputsAreTheLastCalls(t *testing.T) {
	t.Parallel()
	apptest.SkipJobsUnderRace(t)
	f := start(t)
	f.push(t, map[string]string{".github/workflows/last.yml": lastCallCaller, ".github/workflows/timed.yml": timedWorkflow})
	run := f.completedRun(t, "last.yml", 1)
	jobs := jobsByName(t, f, run.GetID(), "")
	slow, fast := jobs["build (slow) / work"], jobs["build (fast) / work"]
	if run.GetConclusion() != "success" || slow == nil || fast == nil || !slow.GetCompletedAt().After(fast.GetCompletedAt().Time) {
		t.Fatalf("run %s, slow %v fast %v", run.GetConclusion(), slow.GetCompletedAt(), fast.GetCompletedAt())
	}
	if log := f.jobLog(t, jobs["after"].GetID()); !strings.Contains(log, "the calls said slow") {
		t.Fatalf("after:\n%s", log)
	}
}

// TestCalledWorkflowPermissionsOnlyNarrow: the caller job grants issues
// write; the called workflow's job that declares issues read is refused
// an issue, the one that declares statuses write (which the caller did
// not grant) is refused a status but keeps the caller's issues write,
// and the one that declares nothing has the caller's permissions.
func TestCalledWorkflowPermissionsOnlyNarrow(t *testing.T) {
	t.Parallel()
	apptest.SkipJobsUnderRace(t)
	f := start(t)
	api := strings.TrimSuffix(f.env.URL, "/") + "/api/v3"
	caller := `name: Caller
on: push
jobs:
  call:
    permissions:
      issues: write
      contents: read
    uses: ./.github/workflows/called.yml
`
	status := `          curl -s -o /dev/null -w "KEY status %{http_code}\n" -X POST -H "Authorization: Bearer ${{ secrets.GITHUB_TOKEN }}" -d '{"state":"success"}' API/repos/octo/hello/statuses/${{ github.sha }}
`
	called := "on: workflow_call\njobs:\n" +
		job(issueJob, "narrowed", "    permissions:\n      issues: read\n", api, "") +
		job(issueJob+status, "widened", "    permissions:\n      issues: write\n      statuses: write\n", api, "") +
		job(issueJob+status, "inherits", "", api, "")
	f.push(t, map[string]string{".github/workflows/caller.yml": caller, ".github/workflows/called.yml": called})
	run := f.completedRun(t, "caller.yml", 1)
	logs := ""
	for _, j := range jobsByName(t, f, run.GetID(), "") {
		logs += f.jobLog(t, j.GetID())
	}
	for _, want := range []string{"narrowed issue 403", "widened issue 201", "widened status 403", "inherits issue 201", "inherits status 403"} {
		if !strings.Contains(logs, want) {
			t.Errorf("the called jobs' logs lack %q:\n%s", want, logs)
		}
	}
}

// nestedCallsCaller calls mid.yml, whose job "build" is a matrix of
// calls of timed.yml (the first combination's finishing last); mid.yml's
// output is build's, and its job "inner" needs build.
const nestedCallsCaller = `name: Nested calls
on: push
jobs:
  mid:
    uses: ./.github/workflows/mid.yml
  after:
    needs: mid
    runs-on: ubuntu-latest
    steps:
      - run: echo "the nested calls said ${{ needs.mid.outputs.speed }}"
`

const nestedCallsMid = `on:
  workflow_call:
    outputs:
      speed:
        value: ${{ jobs.build.outputs.speed }}
jobs:
  build:
    strategy:
      matrix:
        speed: [slow, fast]
    uses: ./.github/workflows/timed.yml
    with:
      speed: ${{ matrix.speed }}
  inner:
    needs: build
    runs-on: ubuntu-latest
    steps:
      - run: echo "the inner calls said ${{ needs.build.outputs.speed }}"
`

// TestNestedReusableWorkflowMatrixOutputsAreTheLastCalls: a matrix of
// calls inside a called workflow gives its dependents, inside that
// workflow and through its outputs outside it, the outputs of the call
// that completed last (the slow one, created first), not the
// combinations' merged (where the later-created fast one won).
func TestNestedReusableWorkflowMatrixOutputsAreTheLastCalls(t *testing.T) {
	t.Parallel()
	apptest.SkipJobsUnderRace(t)
	f := start(t)
	f.push(t, map[string]string{".github/workflows/nested.yml": nestedCallsCaller, ".github/workflows/mid.yml": nestedCallsMid,
		".github/workflows/timed.yml": timedWorkflow})
	run := f.completedRun(t, "nested.yml", 1)
	jobs := jobsByName(t, f, run.GetID(), "")
	slow, fast := jobs["mid / build (slow) / work"], jobs["mid / build (fast) / work"]
	if run.GetConclusion() != "success" || slow == nil || fast == nil || !slow.GetCompletedAt().After(fast.GetCompletedAt().Time) {
		names := []string{}
		for n := range jobs {
			names = append(names, n)
		}
		t.Fatalf("run %s, jobs %v", run.GetConclusion(), names)
	}
	if log := f.jobLog(t, jobs["mid / inner"].GetID()); !strings.Contains(log, "the inner calls said slow") {
		t.Fatalf("inner:\n%s", log)
	}
	if log := f.jobLog(t, jobs["after"].GetID()); !strings.Contains(log, "the nested calls said slow") {
		t.Fatalf("after:\n%s", log)
	}
}

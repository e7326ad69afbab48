package actions_test

import (
	"archive/zip"
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/nacl/box"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/accounts"
	"forgeapi/internal/app"
	"forgeapi/internal/apptest"
	"forgeapi/internal/repos"
	"forgeapi/internal/testwait"
	"forgeapi/internal/webhooks"
)

// withRunner turns the built-in runner on.
func withRunner(c *app.Config) { c.BuiltinRunner = true }

// fixture is a server with the built-in runner, a user, a repository
// and a hook receiving the Actions events.
type fixture struct {
	env   *apptest.Env
	owner *accounts.Account
	token string
	c     *github.Client
	rc    *apptest.Receiver
	work  string
}

func start(t *testing.T, opts ...apptest.Option) *fixture {
	t.Helper()
	env := apptest.Start(t, append([]apptest.Option{withRunner, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"})}, opts...)...)
	owner := env.User("octo", apptest.UserOpts{Email: "octo@example.com"})
	env.Repo(owner, "hello")
	token := env.Token(owner, "repo", "admin:repo_hook", "workflow")
	f := &fixture{env: env, owner: owner, token: token, c: env.Client(token), rc: apptest.NewReceiver(t, "s")}
	_, _, err := f.c.Repositories.CreateHook(apptest.Ctx(), "octo", "hello", &github.Hook{
		Events: []string{"workflow_run", "workflow_job", "workflow_dispatch"},
		Config: &github.HookConfig{URL: github.Ptr(f.rc.URL), ContentType: github.Ptr("json"), Secret: github.Ptr("s")}})
	apptest.Must(t, "create hook", err)
	f.work = apptest.WorkTree(t, nil)
	apptest.Git(t, f.work, "remote", "add", "origin", env.GitURL("octo", "hello", "octo", token))
	t.Cleanup(func() { // before the server stops
		if t.Failed() {
			logJobs(t, env)
		}
	})
	return f
}

// logJobs writes the state of every job of the server to the test's log:
// where a failed test's runs stopped.
func logJobs(t *testing.T, env *apptest.Env) {
	rows, err := env.Q().QueryContext(apptest.Ctx(), `SELECT j.id, r.id, r.status, j.name, j.status,
		COALESCE(j.conclusion, ''), j.lease_owner, COALESCE(j.runner_name, ''), j.steps FROM actions_jobs j
		JOIN actions_runs r ON r.id = j.run_id ORDER BY j.id`)
	if err != nil {
		t.Logf("list the jobs: %v", err)
		return
	}
	defer rows.Close()
	for rows.Next() {
		var job, run int64
		var runStatus, name, status, conclusion, owner, runner, steps string
		if err := rows.Scan(&job, &run, &runStatus, &name, &status, &conclusion, &owner, &runner, &steps); err != nil {
			t.Logf("read a job: %v", err)
			return
		}
		t.Logf("job %d %q of run %d (%s): %s %s, lease %q, runner %q, steps %s", job, name, run, runStatus, status,
			conclusion, owner, runner, steps)
	}
}

// push commits the files and pushes main.
func (f *fixture) push(t *testing.T, files map[string]string) string {
	t.Helper()
	sha := apptest.Commit(t, f.work, "change", files)
	apptest.Git(t, f.work, "push", "-q", "origin", "HEAD:refs/heads/main")
	return sha
}

// completedRun waits for the repository's run of the workflow file to
// complete and returns it.
func (f *fixture) completedRun(t *testing.T, file string, n int) *github.WorkflowRun {
	t.Helper()
	var run *github.WorkflowRun
	testwait.For(t, "the run of "+file+" completed", func() error {
		runs, _, err := f.c.Actions.ListWorkflowRunsByFileName(apptest.Ctx(), "octo", "hello", file, nil)
		if err != nil {
			return err
		}
		if len(runs.WorkflowRuns) < n {
			return fmt.Errorf("%d runs", len(runs.WorkflowRuns))
		}
		run = runs.WorkflowRuns[0]
		if run.GetStatus() != "completed" {
			return fmt.Errorf("run status %s", run.GetStatus())
		}
		return nil
	})
	return run
}

// jobLog downloads a job's log through its redirect.
func (f *fixture) jobLog(t *testing.T, jobID int64) string {
	t.Helper()
	u, resp, err := f.c.Actions.GetWorkflowJobLogs(apptest.Ctx(), "octo", "hello", jobID, 0)
	apptest.Must(t, "job log URL", err)
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("job logs: %d", resp.StatusCode)
	}
	return get(t, u.String())
}

func get(t *testing.T, u string) string {
	t.Helper()
	resp, err := http.Get(u)
	apptest.Must(t, "download", err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	apptest.Must(t, "read download", err)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("download %s: %d %s", u, resp.StatusCode, b)
	}
	return string(b)
}

func jobsByName(t *testing.T, f *fixture, runID int64, filter string) map[string]*github.WorkflowJob {
	t.Helper()
	jobs, _, err := f.c.Actions.ListWorkflowJobs(apptest.Ctx(), "octo", "hello", runID, &github.ListWorkflowJobsOptions{Filter: filter})
	apptest.Must(t, "list jobs", err)
	out := map[string]*github.WorkflowJob{}
	for _, j := range jobs.Jobs {
		out[j.GetName()] = j
	}
	return out
}

const twoJobs = `name: CI
on:
  push:
    branches: [main]
    paths-ignore: ['docs/**']
jobs:
  build:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        n: [1, 2, 3]
    outputs:
      greeting: ${{ steps.say.outputs.greeting }}
    steps:
      - uses: actions/checkout@v4
      - id: say
        run: |
          cat README.md
          echo "greeting=hello-from-build" >> "$GITHUB_OUTPUT"
  test:
    needs: build
    runs-on: ubuntu-latest
    steps:
      - run: echo "got ${{ needs.build.outputs.greeting }}"
`

func describeActions(d apptest.Delivery) string {
	var p struct {
		Action string `json:"action"`
		Job    struct {
			Name string `json:"name"`
		} `json:"workflow_job"`
	}
	_ = json.Unmarshal(d.Body, &p)
	switch d.Event {
	case "workflow_run":
		return "run " + p.Action
	case "workflow_job":
		return "job " + p.Job.Name + " " + p.Action
	}
	return d.Event
}

// TestWorkflowRunsOnPush pushes a two-job workflow (a matrix of three, a
// job that needs it and reads its outputs) with git: it runs on the
// built-in runner and succeeds, its jobs, steps and logs are served, and
// the hook receives workflow_run and workflow_job in order.
func TestWorkflowRunsOnPush(t *testing.T) {
	t.Parallel()
	apptest.SkipJobsUnderRace(t)
	f := start(t)
	ctx := apptest.Ctx()
	sha := f.push(t, map[string]string{"README.md": "# hello from the readme\n", ".github/workflows/ci.yml": twoJobs})

	run := f.completedRun(t, "ci.yml", 1)
	apptest.Step(t, "the run succeeded on the pushed commit", func(t *testing.T) {
		if run.GetConclusion() != "success" || run.GetHeadSHA() != sha || run.GetEvent() != "push" || run.GetHeadBranch() != "main" ||
			run.GetName() != "CI" || run.GetRunNumber() != 1 || run.GetRunAttempt() != 1 || run.GetActor().GetLogin() != "octo" {
			t.Fatalf("run: %s %s %s %s %s %d %d %s", run.GetConclusion(), run.GetHeadSHA(), run.GetEvent(), run.GetHeadBranch(),
				run.GetName(), run.GetRunNumber(), run.GetRunAttempt(), run.GetActor().GetLogin())
		}
	})
	apptest.Step(t, "its jobs: the matrix expanded, the dependent one with the outputs", func(t *testing.T) {
		jobs := jobsByName(t, f, run.GetID(), "")
		if len(jobs) != 4 {
			t.Fatalf("jobs: %v", jobs)
		}
		for _, name := range []string{"build (1)", "build (2)", "build (3)", "test"} {
			j := jobs[name]
			if j == nil || j.GetConclusion() != "success" || j.GetRunnerName() != "forgeapi-builtin" || len(j.Steps) < 3 {
				t.Fatalf("job %s: %+v", name, j)
			}
		}
		if !strings.HasPrefix(jobs["test"].GetStartedAt().String(), "20") ||
			jobs["test"].GetStartedAt().Before(jobs["build (3)"].GetCompletedAt().Time) {
			t.Fatalf("test started before build ended: %v < %v", jobs["test"].GetStartedAt(), jobs["build (3)"].GetCompletedAt())
		}
		steps := jobs["test"].Steps
		if steps[0].GetName() != "Set up job" || steps[1].GetName() != `Run echo "got ${{ needs.build.outputs.greeting }}"` ||
			steps[1].GetConclusion() != "success" || steps[1].GetNumber() != 2 {
			t.Fatalf("steps: %q %q %s %d", steps[0].GetName(), steps[1].GetName(), steps[1].GetConclusion(), steps[1].GetNumber())
		}
		if log := f.jobLog(t, jobs["test"].GetID()); !strings.Contains(log, "got hello-from-build") {
			t.Fatalf("test's log:\n%s", log)
		}
		if log := f.jobLog(t, jobs["build (2)"].GetID()); !strings.Contains(log, "# hello from the readme") {
			t.Fatalf("build's log:\n%s", log)
		}
	})
	apptest.Step(t, "the run's logs are a zip of the jobs' logs", func(t *testing.T) {
		u, _, err := f.c.Actions.GetWorkflowRunLogs(ctx, "octo", "hello", run.GetID(), 0)
		apptest.Must(t, "run logs", err)
		body := get(t, u.String())
		z, err := zip.NewReader(bytes.NewReader([]byte(body)), int64(len(body)))
		apptest.Must(t, "read zip", err)
		files := map[string]string{}
		for _, zf := range z.File {
			rc, err := zf.Open()
			apptest.Must(t, "open "+zf.Name, err)
			b, _ := io.ReadAll(rc)
			_ = rc.Close()
			files[zf.Name] = string(b)
		}
		step := files["build (2)/3_Run cat README.md.txt"]
		if len(files) != 4+3*4+3 || !strings.Contains(files["3_test.txt"], "got hello-from-build") ||
			!strings.Contains(step, "# hello from the readme") || strings.Contains(step, "Set up job") {
			t.Fatalf("zip: %d files, the step's:\n%s", len(files), step)
		}
	})
	apptest.Step(t, "the workflow is listed", func(t *testing.T) {
		wfs, _, err := f.c.Actions.ListWorkflows(ctx, "octo", "hello", nil)
		apptest.Must(t, "list workflows", err)
		if wfs.GetTotalCount() != 1 || wfs.Workflows[0].GetPath() != ".github/workflows/ci.yml" || wfs.Workflows[0].GetState() != "active" {
			t.Fatalf("workflows: %+v", wfs.Workflows)
		}
		wf, _, err := f.c.Actions.GetWorkflowByFileName(ctx, "octo", "hello", "ci.yml")
		apptest.Must(t, "get workflow", err)
		if wf.GetID() != run.GetWorkflowID() || wf.GetName() != "CI" {
			t.Fatalf("workflow %+v", wf)
		}
	})
	apptest.Step(t, "the hook received the run's and the jobs' events", func(t *testing.T) {
		// Deliveries go out concurrently: their order is not the events'.
		f.rc.WaitFor(t, describeActions, "run requested", "job test queued", "run in_progress",
			"job build (1) in_progress", "job build (1) completed", "job test completed", "run completed")
	})
	apptest.Step(t, "a push of docs only runs nothing (paths-ignore)", func(t *testing.T) {
		f.push(t, map[string]string{"docs/a.md": "a\n"})
		f.push(t, map[string]string{"src.txt": "x\n"})
		f.completedRun(t, "ci.yml", 2)
		runs, _, err := f.c.Actions.ListRepositoryWorkflowRuns(ctx, "octo", "hello", nil)
		apptest.Must(t, "list runs", err)
		if runs.GetTotalCount() != 2 {
			t.Fatalf("%d runs", runs.GetTotalCount())
		}
		filtered, _, err := f.c.Actions.ListRepositoryWorkflowRuns(ctx, "octo", "hello",
			&github.ListWorkflowRunsOptions{HeadSHA: sha, Status: "success", Event: "push", Actor: "octo", Branch: "main"})
		apptest.Must(t, "filter runs", err)
		if filtered.GetTotalCount() != 1 || filtered.WorkflowRuns[0].GetID() != run.GetID() {
			t.Fatalf("filtered: %d", filtered.GetTotalCount())
		}
		for created, want := range map[string]int{"2000-01-01..*": 2, ">=2000-01-01": 2, "<2000-01-01": 0, "2000-01-01..2000-01-02": 0} {
			list, _, err := f.c.Actions.ListRepositoryWorkflowRuns(ctx, "octo", "hello", &github.ListWorkflowRunsOptions{Created: created})
			apptest.Must(t, "created "+created, err)
			if list.GetTotalCount() != want {
				t.Fatalf("created %s: %d runs", created, list.GetTotalCount())
			}
		}
	})
}

// TestFailedStepAndRerunFailedJobs fails a step: its job and the run fail
// and the job that needs it is skipped; rerun-failed-jobs runs the failed
// job (and its dependent) again in attempt 2 and copies the one that
// succeeded without running it.
func TestFailedStepAndRerunFailedJobs(t *testing.T) {
	t.Parallel()
	apptest.SkipJobsUnderRace(t)
	f := start(t)
	ctx := apptest.Ctx()
	counts := t.TempDir()
	wf := fmt.Sprintf(`on: push
jobs:
  ok:
    runs-on: ubuntu-latest
    steps:
      - run: echo ran >> %[1]s/ok
  bad:
    runs-on: ubuntu-latest
    steps:
      - run: echo ran >> %[1]s/bad
      - run: exit 3
      - run: echo never
  after:
    needs: [ok, bad]
    runs-on: ubuntu-latest
    steps:
      - run: echo ran >> %[1]s/after
`, counts)
	f.push(t, map[string]string{".github/workflows/flaky.yaml": wf})
	run := f.completedRun(t, "flaky.yaml", 1)
	jobs := jobsByName(t, f, run.GetID(), "")
	apptest.Step(t, "the failing step failed its job and the run", func(t *testing.T) {
		if run.GetConclusion() != "failure" || jobs["bad"].GetConclusion() != "failure" || jobs["ok"].GetConclusion() != "success" ||
			jobs["after"].GetConclusion() != "skipped" {
			t.Fatalf("run %s, jobs bad %s ok %s after %s", run.GetConclusion(), jobs["bad"].GetConclusion(),
				jobs["ok"].GetConclusion(), jobs["after"].GetConclusion())
		}
		steps := jobs["bad"].Steps
		if steps[2].GetConclusion() != "failure" || steps[3].GetConclusion() != "skipped" {
			t.Fatalf("bad's steps: %+v %+v", steps[2], steps[3])
		}
	})
	apptest.Step(t, "rerun-failed-jobs reruns only the failed job and its dependent", func(t *testing.T) {
		resp, err := f.c.Actions.RerunFailedJobsByID(ctx, "octo", "hello", run.GetID())
		apptest.Must(t, "rerun failed jobs", err)
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("rerun: %d", resp.StatusCode)
		}
		testwait.For(t, "attempt 2 completed", func() error {
			r, _, err := f.c.Actions.GetWorkflowRunByID(ctx, "octo", "hello", run.GetID())
			if err != nil || r.GetRunAttempt() != 2 || r.GetStatus() != "completed" {
				return fmt.Errorf("run: attempt %d %s %v", r.GetRunAttempt(), r.GetStatus(), err)
			}
			return nil
		})
		for file, want := range map[string]string{"ok": "ran\n", "bad": "ran\nran\n"} {
			if b, _ := os.ReadFile(filepath.Join(counts, file)); string(b) != want {
				t.Fatalf("%s ran %q", file, b)
			}
		}
		second := jobsByName(t, f, run.GetID(), "latest")
		if second["ok"].GetConclusion() != "success" || second["ok"].GetRunAttempt() != 2 || second["bad"].GetConclusion() != "failure" {
			t.Fatalf("attempt 2: ok %+v bad %+v", second["ok"], second["bad"])
		}
		all, _, err := f.c.Actions.ListWorkflowJobs(ctx, "octo", "hello", run.GetID(), &github.ListWorkflowJobsOptions{Filter: "all"})
		apptest.Must(t, "all jobs", err)
		if all.GetTotalCount() != 6 {
			t.Fatalf("%d jobs in all attempts", all.GetTotalCount())
		}
		first, _, err := f.c.Actions.GetWorkflowRunAttempt(ctx, "octo", "hello", run.GetID(), 1, nil)
		apptest.Must(t, "attempt 1", err)
		if first.GetRunAttempt() != 1 || first.GetConclusion() != "failure" {
			t.Fatalf("attempt 1: %+v", first)
		}
	})
	apptest.Step(t, "rerunning one job runs it and the jobs that need it", func(t *testing.T) {
		okJob := jobsByName(t, f, run.GetID(), "latest")["ok"]
		resp, err := f.c.Actions.RerunJobByID(ctx, "octo", "hello", okJob.GetID())
		apptest.Must(t, "rerun a job", err)
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("rerun a job: %d", resp.StatusCode)
		}
		testwait.For(t, "attempt 3 completed", func() error {
			r, _, err := f.c.Actions.GetWorkflowRunByID(ctx, "octo", "hello", run.GetID())
			if err != nil || r.GetRunAttempt() != 3 || r.GetStatus() != "completed" {
				return fmt.Errorf("run: attempt %d %s %v", r.GetRunAttempt(), r.GetStatus(), err)
			}
			return nil
		})
		for file, want := range map[string]string{"ok": "ran\nran\n", "bad": "ran\nran\n"} {
			if b, _ := os.ReadFile(filepath.Join(counts, file)); string(b) != want {
				t.Fatalf("%s ran %q", file, b)
			}
		}
		third := jobsByName(t, f, run.GetID(), "latest")
		if third["ok"].GetRunAttempt() != 3 || third["bad"].GetConclusion() != "failure" || third["after"].GetConclusion() != "skipped" {
			t.Fatalf("attempt 3: ok %d bad %s after %s", third["ok"].GetRunAttempt(), third["bad"].GetConclusion(), third["after"].GetConclusion())
		}
	})
	apptest.Step(t, "a completed run cannot be cancelled; it can be deleted", func(t *testing.T) {
		_, err := f.c.Actions.CancelWorkflowRunByID(ctx, "octo", "hello", run.GetID())
		if resp := errResponse(err); resp == nil || resp.StatusCode != http.StatusConflict {
			t.Fatalf("cancel a completed run: %v", err)
		}
		_, err = f.c.Actions.DeleteWorkflowRun(ctx, "octo", "hello", run.GetID())
		apptest.Must(t, "delete run", err)
		runs, _, err := f.c.Actions.ListRepositoryWorkflowRuns(ctx, "octo", "hello", nil)
		apptest.Must(t, "list runs", err)
		if runs.GetTotalCount() != 0 {
			t.Fatalf("%d runs after the deletion", runs.GetTotalCount())
		}
	})
}

func errResponse(err error) *http.Response {
	if e, ok := err.(*github.ErrorResponse); ok {
		return e.Response
	}
	return nil
}

// TestCancelStopsARunningStep cancels a run whose step sleeps ten
// minutes: the step's process is killed and the run completes cancelled
// (the wait would time out long before the sleep ends).
func TestCancelStopsARunningStep(t *testing.T) {
	t.Parallel()
	apptest.SkipJobsUnderRace(t)
	f := start(t)
	ctx := apptest.Ctx()
	f.push(t, map[string]string{".github/workflows/slow.yml": "on: push\njobs:\n  slow:\n    runs-on: ubuntu-latest\n    steps:\n      - run: sleep 600\n"})
	var runID int64
	testwait.For(t, "the sleep step running", func() error {
		runs, _, err := f.c.Actions.ListRepositoryWorkflowRuns(ctx, "octo", "hello", nil)
		if err != nil || len(runs.WorkflowRuns) == 0 {
			return fmt.Errorf("no run yet (%v)", err)
		}
		runID = runs.WorkflowRuns[0].GetID()
		jobs := jobsByName(t, f, runID, "")
		if j := jobs["slow"]; j == nil || len(j.Steps) < 2 || j.Steps[1].GetStatus() != "in_progress" {
			return fmt.Errorf("job %+v", j)
		}
		return nil
	})
	resp, err := f.c.Actions.CancelWorkflowRunByID(ctx, "octo", "hello", runID)
	if resp == nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("cancel: %v %v", resp, err)
	}
	run := f.completedRun(t, "slow.yml", 1)
	job := jobsByName(t, f, runID, "")["slow"]
	if run.GetConclusion() != "cancelled" || job.GetConclusion() != "cancelled" || job.Steps[1].GetConclusion() != "cancelled" {
		t.Fatalf("run %s job %s step %s", run.GetConclusion(), job.GetConclusion(), job.Steps[1].GetConclusion())
	}
	f.rc.WaitFor(t, describeActions, "job slow in_progress", "job slow completed", "run completed")
}

// TestDispatchWithInputs dispatches a workflow with an input that reaches
// its step; unknown inputs and a workflow without workflow_dispatch are
// 422s.
func TestDispatchWithInputs(t *testing.T) {
	t.Parallel()
	apptest.SkipJobsUnderRace(t)
	f := start(t)
	ctx := apptest.Ctx()
	f.push(t, map[string]string{
		".github/workflows/manual.yml": `name: Manual
on:
  workflow_dispatch:
    inputs:
      x:
        description: what to say
        required: true
      y:
        default: fallback
jobs:
  say:
    runs-on: ubuntu-latest
    steps:
      - run: echo "x is ${{ inputs.x }} and y is ${{ github.event.inputs.y }}"
`,
		".github/workflows/pushonly.yml": "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: 'true'\n",
	})
	_, resp, err := f.c.Actions.CreateWorkflowDispatchEventByFileName(ctx, "octo", "hello", "manual.yml",
		github.CreateWorkflowDispatchEventRequest{Ref: "main", Inputs: map[string]any{"x": "forty-two"}})
	apptest.Must(t, "dispatch", err)
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("dispatch: %d", resp.StatusCode)
	}
	run := f.completedRun(t, "manual.yml", 1)
	if run.GetConclusion() != "success" || run.GetEvent() != "workflow_dispatch" || run.GetName() != "Manual" {
		t.Fatalf("run %+v", run)
	}
	job := jobsByName(t, f, run.GetID(), "")["say"]
	if log := f.jobLog(t, job.GetID()); !strings.Contains(log, "x is forty-two and y is fallback") {
		t.Fatalf("log:\n%s", log)
	}
	f.rc.WaitFor(t, describeActions, "workflow_dispatch")
	for what, req := range map[string]struct {
		file string
		body github.CreateWorkflowDispatchEventRequest
	}{
		"an unknown input":          {"manual.yml", github.CreateWorkflowDispatchEventRequest{Ref: "main", Inputs: map[string]any{"x": "1", "z": "2"}}},
		"a missing required input":  {"manual.yml", github.CreateWorkflowDispatchEventRequest{Ref: "main"}},
		"no workflow_dispatch":      {"pushonly.yml", github.CreateWorkflowDispatchEventRequest{Ref: "main"}},
		"a ref that does not exist": {"manual.yml", github.CreateWorkflowDispatchEventRequest{Ref: "nope", Inputs: map[string]any{"x": "1"}}},
	} {
		_, _, err := f.c.Actions.CreateWorkflowDispatchEventByFileName(ctx, "octo", "hello", req.file, req.body)
		if resp := errResponse(err); resp == nil || resp.StatusCode != http.StatusUnprocessableEntity {
			t.Fatalf("%s: %v", what, err)
		}
	}
	apptest.Step(t, "fine-grained tokens: Actions read lists, Actions write dispatches", func(t *testing.T) {
		repo, err := repos.ByOwnerAndName(ctx, f.env.App.DB, "octo", "hello")
		apptest.Must(t, "repository", err)
		reader := f.env.Client(f.env.FineGrainedToken(f.owner, f.owner, []*repos.Repository{repo}, "actions:read"))
		if _, _, err := reader.Actions.ListWorkflows(ctx, "octo", "hello", nil); err != nil {
			t.Fatalf("list with actions:read: %v", err)
		}
		_, _, err = reader.Actions.CreateWorkflowDispatchEventByFileName(ctx, "octo", "hello", "manual.yml",
			github.CreateWorkflowDispatchEventRequest{Ref: "main", Inputs: map[string]any{"x": "1"}})
		if resp := errResponse(err); resp == nil || resp.StatusCode != http.StatusForbidden {
			t.Fatalf("dispatch with actions:read: %v", err)
		}
		writer := f.env.Client(f.env.FineGrainedToken(f.owner, f.owner, []*repos.Repository{repo}, "actions:write"))
		if _, _, err := writer.Actions.CreateWorkflowDispatchEventByFileName(ctx, "octo", "hello", "manual.yml",
			github.CreateWorkflowDispatchEventRequest{Ref: "main", Inputs: map[string]any{"x": "2"}}); err != nil {
			t.Fatalf("dispatch with actions:write: %v", err)
		}
		f.completedRun(t, "manual.yml", 2)
	})
	apptest.Step(t, "a workflow is disabled and enabled again", func(t *testing.T) {
		_, err := f.c.Actions.DisableWorkflowByFileName(ctx, "octo", "hello", "manual.yml")
		apptest.Must(t, "disable", err)
		wf, _, err := f.c.Actions.GetWorkflowByFileName(ctx, "octo", "hello", "manual.yml")
		apptest.Must(t, "get workflow", err)
		if wf.GetState() != "disabled_manually" {
			t.Fatalf("state %s", wf.GetState())
		}
		_, err = f.c.Actions.EnableWorkflowByFileName(ctx, "octo", "hello", "manual.yml")
		apptest.Must(t, "enable", err)
	})
}

// TestInvalidWorkflowFailsItsRun pushes a workflow the parser refuses:
// its run is failed at once with no jobs.
func TestInvalidWorkflowFailsItsRun(t *testing.T) {
	t.Parallel()
	f := start(t)
	f.push(t, map[string]string{".github/workflows/broken.yml": "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    stepz: []\n"})
	run := f.completedRun(t, "broken.yml", 1)
	if run.GetConclusion() != "failure" {
		t.Fatalf("run %+v", run)
	}
	jobs := jobsByName(t, f, run.GetID(), "")
	if len(jobs) != 0 {
		t.Fatalf("jobs %v", jobs)
	}
}

// setSecretAndVariable sets a repository secret, sealed as gh seals it
// (libsodium's sealed box to the repository's public key), and a
// variable, through the settings area's API.
func setSecretAndVariable(t *testing.T, c *github.Client, owner, repo string) {
	t.Helper()
	ctx := apptest.Ctx()
	key, _, err := c.Actions.GetRepoPublicKey(ctx, owner, repo)
	apptest.Must(t, "the repository's public key", err)
	raw, err := base64.StdEncoding.DecodeString(key.GetKey())
	apptest.Must(t, "decode the public key", err)
	var recipient [32]byte
	copy(recipient[:], raw)
	sealed, err := box.SealAnonymous(nil, []byte("s3cr3t-value"), &recipient, rand.Reader)
	apptest.Must(t, "seal the secret", err)
	_, err = c.Actions.CreateOrUpdateRepoSecret(ctx, owner, repo, "DEPLOY_KEY", github.SecretRequest{
		KeyID: key.GetKeyID(), EncryptedValue: base64.StdEncoding.EncodeToString(sealed)})
	apptest.Must(t, "set the secret", err)
	_, err = c.Actions.CreateRepoVariable(ctx, owner, repo, github.ActionsCreateVariableRequest{Name: "TARGET", Value: "staging"})
	apptest.Must(t, "set the variable", err)
}

// TestSecretsAreMaskedAndPullRequestsRun runs a workflow on a pull
// request of a branch of the repository: the secret reaches the step and
// is *** in the log, the variable is there as it is, and the job's
// GITHUB_TOKEN (masked too) reads the repository but may not write.
func TestSecretsAreMaskedAndPullRequestsRun(t *testing.T) {
	t.Parallel()
	apptest.SkipJobsUnderRace(t)
	env := apptest.Start(t, withRunner)
	owner := env.User("octo", apptest.UserOpts{Email: "octo@example.com"})
	env.Repo(owner, "hello")
	token := env.Token(owner, "repo")
	c := env.Client(token)
	setSecretAndVariable(t, c, "octo", "hello")
	ctx := apptest.Ctx()
	work := apptest.WorkTree(t, map[string]string{"README.md": "hi\n"})
	apptest.Git(t, work, "remote", "add", "origin", env.GitURL("octo", "hello", "octo", token))
	apptest.Git(t, work, "push", "-q", "origin", "HEAD:refs/heads/main")
	apptest.Git(t, work, "checkout", "-q", "-b", "feature")
	apptest.Commit(t, work, "add the workflow", map[string]string{".github/workflows/pr.yml": strings.ReplaceAll(`on:
  pull_request:
    branches: [main]
jobs:
  check:
    runs-on: ubuntu-latest
    steps:
      - run: echo "key ${{ secrets.DEPLOY_KEY }} target ${{ vars.TARGET }} event ${{ github.event_name }}"
      - name: read with GITHUB_TOKEN
        run: |
          echo "token ${{ secrets.GITHUB_TOKEN }}"
          curl -sf -H "Authorization: token ${{ secrets.GITHUB_TOKEN }}" API/repos/octo/hello | grep -o '"full_name": *"[^"]*"'
          echo "write: $(curl -s -o /dev/null -w '%{http_code}' -X POST -H "Authorization: token ${{ secrets.GITHUB_TOKEN }}" -d '{"title":"x"}' API/repos/octo/hello/issues)"
`, "API", env.URL)})
	apptest.Git(t, work, "push", "-q", "origin", "feature")
	pr, _, err := c.PullRequests.Create(ctx, "octo", "hello", github.CreatePullRequest{Title: github.Ptr("Feature"),
		Head: "feature", Base: "main"})
	apptest.Must(t, "open the pull request", err)
	f := &fixture{env: env, owner: owner, token: token, c: c}
	run := f.completedRun(t, "pr.yml", 1)
	if run.GetEvent() != "pull_request" || run.GetConclusion() != "success" || run.GetHeadSHA() != pr.GetHead().GetSHA() ||
		run.GetDisplayTitle() != "Feature" || run.GetHeadBranch() != "feature" {
		t.Fatalf("run: %s %s %s %s", run.GetEvent(), run.GetConclusion(), run.GetDisplayTitle(), run.GetHeadBranch())
	}
	log := f.jobLog(t, jobsByName(t, f, run.GetID(), "")["check"].GetID())
	if !strings.Contains(log, "key *** target staging event pull_request") || strings.Contains(log, "s3cr3t-value") {
		t.Fatalf("log:\n%s", log)
	}
	if !strings.Contains(log, "token ***") || !strings.Contains(log, `"full_name":"octo/hello"`) || !strings.Contains(log, "write: 403") {
		t.Fatalf("GITHUB_TOKEN: log:\n%s", log)
	}
	var live int
	apptest.Must(t, "count tokens", env.App.DB.QueryRowContext(ctx, `SELECT count(*) FROM tokens WHERE note = 'GITHUB_TOKEN'`).Scan(&live))
	if live != 0 {
		t.Fatalf("%d GITHUB_TOKENs left after the job", live)
	}
}

// TestAJobOfAStoppedServerIsFailedNotRunAgain stops the server while a
// job runs: the next start fails the job (its step ran once and must not
// run twice) and completes the run.
func TestAJobOfAStoppedServerIsFailedNotRunAgain(t *testing.T) {
	t.Parallel()
	apptest.SkipJobsUnderRace(t)
	f := start(t, shortLease) // on PostgreSQL the next start waits for the lease to run out
	ctx := apptest.Ctx()
	marks := t.TempDir()
	f.push(t, map[string]string{".github/workflows/long.yml": fmt.Sprintf(
		"on: push\njobs:\n  long:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ran >> %s/long && sleep 600\n", marks)})
	testwait.For(t, "the step running", func() error {
		b, _ := os.ReadFile(filepath.Join(marks, "long"))
		if len(b) == 0 {
			return fmt.Errorf("not yet")
		}
		return nil
	})
	f.env.Stop()
	env := apptest.StartConfig(t, f.env.Config)
	c := env.Client(f.token)
	testwait.For(t, "the run failed", func() error {
		runs, _, err := c.Actions.ListRepositoryWorkflowRuns(ctx, "octo", "hello", nil)
		if err != nil || len(runs.WorkflowRuns) != 1 || runs.WorkflowRuns[0].GetConclusion() != "failure" {
			return fmt.Errorf("runs %v %v", runs, err)
		}
		return nil
	})
	if b, _ := os.ReadFile(filepath.Join(marks, "long")); string(b) != "ran\n" {
		t.Fatalf("the step ran %q", b)
	}
}

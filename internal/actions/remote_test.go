package actions_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/actions/runnerclient"
	"forgeapi/internal/actions/runnerproto"
	"forgeapi/internal/app"
	"forgeapi/internal/apptest"
	"forgeapi/internal/testwait"
)

// runnerChildEnv names the config file of a registered runner that the
// test binary runs as its own process (TestMain), for the tests that
// kill it.
const runnerChildEnv = "FORGEAPI_TEST_RUNNER_CONFIG"

func TestMain(m *testing.M) {
	if path := os.Getenv(runnerChildEnv); path != "" {
		os.Exit(runRunnerChild(path))
	}
	if path := os.Getenv(serverChildEnv); path != "" {
		os.Exit(runServerChild(path))
	}
	os.Exit(m.Run())
}

// runRunnerChild is `forgeapi runner run` in this process.
func runRunnerChild(path string) int {
	cfg, err := runnerclient.Load(path)
	if err == nil {
		err = (&runnerclient.Runner{Config: cfg, Dir: filepath.Dir(path), Wait: 2 * time.Second, Logger: quiet}).Run(context.Background())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// startKillable starts cmd in a process group of its own, its output in
// the returned buffer, and returns kill: SIGKILL to the whole group (the
// process and every step it started: the machine's death), waited for,
// once. The test's end kills it too.
func startKillable(t *testing.T, cmd *exec.Cmd) (kill func(), output *bytes.Buffer) {
	t.Helper()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	output = &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = output, output
	apptest.Must(t, "start "+filepath.Base(cmd.Path), cmd.Start())
	var once sync.Once
	kill = func() {
		once.Do(func() {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			_ = cmd.Wait()
		})
	}
	t.Cleanup(kill)
	return kill, output
}

// quiet is the runners' logger in tests.
var quiet = slog.New(slog.DiscardHandler)

// shortLease makes lost jobs found within seconds.
func shortLease(c *app.Config) { c.ActionsRunner.Lease = 3 * time.Second }

// remote is a server without the built-in runner, a repository and a
// runner registered with it.
type remote struct {
	*fixture
	cfg     *runnerclient.Config
	cfgPath string
}

// startRemote starts the server and registers a runner named name with
// custom labels; the runner does not run yet.
func startRemote(t *testing.T, name string, labels ...string) *remote {
	t.Helper()
	env := apptest.Start(t, shortLease)
	owner := env.User("octo", apptest.UserOpts{Email: "octo@example.com"})
	env.Repo(owner, "hello")
	token := env.Token(owner, "repo", "workflow")
	f := &fixture{env: env, owner: owner, token: token, c: env.Client(token)}
	f.work = apptest.WorkTree(t, nil)
	apptest.Git(t, f.work, "remote", "add", "origin", env.GitURL("octo", "hello", "octo", token))
	reg, _, err := f.c.Actions.CreateRegistrationToken(apptest.Ctx(), "octo", "hello")
	apptest.Must(t, "registration token", err)
	cfg, err := runnerclient.Register(apptest.Ctx(), runnerclient.Registration{URL: env.URL + "/api/v3", Token: reg.GetToken(),
		Name: name, Labels: labels})
	apptest.Must(t, "register", err)
	path := filepath.Join(t.TempDir(), "runner.json")
	apptest.Must(t, "save", cfg.Save(path))
	return &remote{fixture: f, cfg: cfg, cfgPath: path}
}

// runOrgRunner registers an organization runner in the group and runs
// it in this process until the test ends.
func runOrgRunner(t *testing.T, env *apptest.Env, c *github.Client, org, name, group string) {
	t.Helper()
	reg, _, err := c.Actions.CreateOrganizationRegistrationToken(apptest.Ctx(), org)
	apptest.Must(t, "registration token", err)
	cfg, err := runnerclient.Register(apptest.Ctx(), runnerclient.Registration{URL: env.URL, Token: reg.GetToken(), Name: name,
		Group: group})
	apptest.Must(t, "register", err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- (&runnerclient.Runner{Config: cfg, Dir: t.TempDir(), Wait: 2 * time.Second, Logger: quiet}).Run(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
}

// run runs the runner in this process until the test ends; jobs gets the
// id of each job it starts.
func (rm *remote) run(t *testing.T, jobs chan<- int64) {
	t.Helper()
	cfg, err := runnerclient.Load(rm.cfgPath)
	apptest.Must(t, "load the runner's config", err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- (&runnerclient.Runner{Config: cfg, Dir: t.TempDir(), Wait: 2 * time.Second, Jobs: jobs, Logger: quiet}).Run(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
}

// job returns the run's job of the name.
func (rm *remote) job(t *testing.T, runID int64, name string) *github.WorkflowJob {
	t.Helper()
	j := jobsByName(t, rm.fixture, runID, "all")[name]
	if j == nil {
		t.Fatalf("no job %q in run %d", name, runID)
	}
	return j
}

// runnerOf returns the repository's runner as the API shows it.
func (rm *remote) runnerOf(t *testing.T) *github.Runner {
	t.Helper()
	r, _, err := rm.c.Actions.GetRunner(apptest.Ctx(), "octo", "hello", rm.cfg.ID)
	apptest.Must(t, "get runner", err)
	return r
}

const remoteWorkflow = `name: gpu
on: push
jobs:
  train:
    runs-on: [self-hosted, GPU]
    outputs:
      answer: ${{ steps.a.outputs.answer }}
    steps:
      - uses: actions/checkout@v4
      - id: a
        run: |
          echo "answer=$(cat data.txt)" >> "$GITHUB_OUTPUT"
          echo "on $RUNNER_LABEL with token ${{ secrets.GITHUB_TOKEN }}"
          git log --format=%s -1
        env:
          RUNNER_LABEL: the remote runner
  report:
    needs: train
    runs-on: self-hosted
    steps:
      - run: |
          echo "the answer is ${{ needs.train.outputs.answer }}"
          echo "::warning file=data.txt,line=1::from afar"
  elsewhere:
    runs-on: [self-hosted, tpu]
    steps:
      - run: echo never
`

// TestRemoteRunnerRunsTheJobsOfItsLabels registers a runner with a
// registration token, runs it (its Go entry, in this process, on its own
// directory) and pushes a workflow: the jobs whose labels it has run on
// it and succeed, with their logs and outputs; the job for a label no
// runner has stays queued; the runner shows online and busy while it
// runs, offline once stopped, and a remove token unregisters it. A
// workflow command's annotation comes back with the job's result.
func TestRemoteRunnerRunsTheJobsOfItsLabels(t *testing.T) {
	apptest.SkipJobsUnderRace(t)
	t.Parallel()
	rm := startRemote(t, "gpu-box", "gpu")
	info, err := os.Stat(rm.cfgPath)
	apptest.Must(t, "stat config", err)
	if info.Mode().Perm() != 0o600 || rm.cfg.Credential == "" || rm.cfg.ID == 0 {
		t.Fatalf("config %v mode %v", rm.cfg, info.Mode())
	}
	if got := strings.Join(rm.cfg.Labels, ","); !strings.Contains(got, "self-hosted") || !strings.Contains(got, "gpu") {
		t.Fatalf("labels %s", got)
	}
	jobs := make(chan int64, 10)
	rm.run(t, jobs)
	apptest.Step(t, "the runner is online and idle", func(t *testing.T) {
		testwait.For(t, "online", func() error {
			if r := rm.runnerOf(t); r.GetStatus() != "online" || r.GetBusy() {
				return fmt.Errorf("status %s busy %v", r.GetStatus(), r.GetBusy())
			}
			return nil
		})
	})
	rm.push(t, map[string]string{".github/workflows/gpu.yml": remoteWorkflow, "data.txt": "42\n"})
	var runID int64
	apptest.Step(t, "the runner is busy while its job runs", func(t *testing.T) {
		<-jobs
		if r := rm.runnerOf(t); r.GetStatus() != "online" || !r.GetBusy() {
			t.Fatalf("status %s busy %v", r.GetStatus(), r.GetBusy())
		}
	})
	apptest.Step(t, "the jobs of its labels run on it and succeed", func(t *testing.T) {
		testwait.For(t, "train and report completed", func() error {
			runs, _, err := rm.c.Actions.ListRepositoryWorkflowRuns(apptest.Ctx(), "octo", "hello", nil)
			if err != nil || len(runs.WorkflowRuns) != 1 {
				return fmt.Errorf("runs %v %v", runs, err)
			}
			runID = runs.WorkflowRuns[0].GetID()
			jobs := jobsByName(t, rm.fixture, runID, "all")
			for _, name := range []string{"train", "report"} {
				if j := jobs[name]; j == nil || j.GetStatus() != "completed" {
					return fmt.Errorf("%s: %v", name, j.GetStatus())
				}
			}
			return nil
		})
		for _, name := range []string{"train", "report"} {
			j := rm.job(t, runID, name)
			if j.GetConclusion() != "success" || j.GetRunnerName() != "gpu-box" || j.GetRunnerID() != rm.cfg.ID {
				t.Fatalf("%s: %s on %s (%d)", name, j.GetConclusion(), j.GetRunnerName(), j.GetRunnerID())
			}
		}
		train := rm.job(t, runID, "train")
		if got := strings.Join(train.Labels, ","); got != "self-hosted,GPU" {
			t.Fatalf("labels %s", got)
		}
		log := rm.jobLog(t, train.GetID())
		for _, want := range []string{"on the remote runner with token ***", "change"} {
			if !strings.Contains(log, want) {
				t.Fatalf("train's log lacks %q:\n%s", want, log)
			}
		}
		if log := rm.jobLog(t, rm.job(t, runID, "report").GetID()); !strings.Contains(log, "the answer is 42") {
			t.Fatalf("report's log:\n%s", log)
		}
		if list := annotationsOf(t, rm.fixture, rm.job(t, runID, "report")); len(list) != 1 ||
			annotationLine(list[0]) != "warning data.txt:1-1 : from afar" {
			t.Fatalf("report's annotations %v", list)
		}
	})
	apptest.Step(t, "the job of a label no runner has stays queued", func(t *testing.T) {
		if j := rm.job(t, runID, "elsewhere"); j.GetStatus() != "queued" || j.RunnerName != nil {
			t.Fatalf("elsewhere: %s on %v", j.GetStatus(), j.RunnerName)
		}
		run, _, err := rm.c.Actions.GetWorkflowRunByID(apptest.Ctx(), "octo", "hello", runID)
		apptest.Must(t, "get run", err)
		if run.GetStatus() == "completed" {
			t.Fatalf("run %s", run.GetStatus())
		}
		testwait.For(t, "idle", func() error {
			if r := rm.runnerOf(t); r.GetStatus() != "online" || r.GetBusy() {
				return fmt.Errorf("status %s busy %v", r.GetStatus(), r.GetBusy())
			}
			return nil
		})
	})
	apptest.Step(t, "a cancelled run's job stops on the runner", func(t *testing.T) {
		count := filepath.Join(t.TempDir(), "starts")
		rm.push(t, map[string]string{".github/workflows/long.yml": killWorkflow(count)})
		testwait.For(t, "the long job's step started", func() error {
			_, err := os.Stat(count)
			return err
		})
		runs, _, err := rm.c.Actions.ListWorkflowRunsByFileName(apptest.Ctx(), "octo", "hello", "long.yml", nil)
		apptest.Must(t, "list runs", err)
		_, err = rm.c.Actions.CancelWorkflowRunByID(apptest.Ctx(), "octo", "hello", runs.WorkflowRuns[0].GetID())
		var accepted *github.AcceptedError
		if err != nil && !errors.As(err, &accepted) {
			t.Fatal(err)
		}
		run := rm.completedRun(t, "long.yml", 1)
		j := rm.job(t, run.GetID(), "long")
		if run.GetConclusion() != "cancelled" || j.GetConclusion() != "cancelled" || j.GetRunnerName() != "gpu-box" {
			t.Fatalf("run %s, job %s on %s", run.GetConclusion(), j.GetConclusion(), j.GetRunnerName())
		}
	})
	apptest.Step(t, "a remove token unregisters the runner", func(t *testing.T) {
		tok, _, err := rm.c.Actions.CreateRemoveToken(apptest.Ctx(), "octo", "hello")
		apptest.Must(t, "remove token", err)
		apptest.Must(t, "remove", runnerclient.Remove(apptest.Ctx(), rm.cfg.URL, tok.GetToken(), rm.cfg.Name))
		list, _, err := rm.c.Actions.ListRunners(apptest.Ctx(), "octo", "hello", nil)
		apptest.Must(t, "list runners", err)
		if list.TotalCount != 0 {
			t.Fatalf("%d runners", list.TotalCount)
		}
		err = (&runnerclient.Runner{Config: rm.cfg, Dir: t.TempDir(), Logger: quiet}).Run(apptest.Ctx())
		if !errors.Is(err, runnerclient.ErrUnregistered) {
			t.Fatalf("run after removal: %v", err)
		}
	})
}

// killWorkflow's job counts its starts in a file and then sleeps.
func killWorkflow(count string) string {
	return `name: long
on: push
jobs:
  long:
    runs-on: [self-hosted, gpu]
    steps:
      - run: |
          echo started >> ` + count + `
          sleep 60
`
}

// TestKilledRemoteRunnerFailsItsJobOnce kills (-9) a runner process in
// the middle of its job: once the lease ran out the job is failed as
// lost, and no runner runs it again.
func TestKilledRemoteRunnerFailsItsJobOnce(t *testing.T) {
	apptest.SkipJobsUnderRace(t)
	t.Parallel()
	rm := startRemote(t, "doomed", "gpu")
	count := filepath.Join(t.TempDir(), "starts")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), runnerChildEnv+"="+rm.cfgPath)
	kill, stderr := startKillable(t, cmd) // the runner and the steps it started
	rm.push(t, map[string]string{".github/workflows/long.yml": killWorkflow(count)})
	testwait.For(t, "the job's step started", func() error {
		b, err := os.ReadFile(count)
		if err != nil {
			return fmt.Errorf("%v (runner: %s)", err, stderr.String())
		}
		if n := strings.Count(string(b), "started"); n != 1 {
			return fmt.Errorf("%d starts", n)
		}
		return nil
	})
	kill()
	// A second runner with the same labels is there to take the job again, were it given back.
	rm2cfg := registerAnother(t, rm, "survivor", "gpu")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- (&runnerclient.Runner{Config: rm2cfg, Dir: t.TempDir(), Wait: 2 * time.Second}).Run(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
	run := rm.completedRun(t, "long.yml", 1)
	if run.GetConclusion() != "failure" {
		t.Fatalf("run %s", run.GetConclusion())
	}
	j := rm.job(t, run.GetID(), "long")
	if j.GetConclusion() != "failure" || j.GetRunnerName() != "doomed" {
		t.Fatalf("job %s on %s", j.GetConclusion(), j.GetRunnerName())
	}
	if log := rm.jobLog(t, j.GetID()); !strings.Contains(log, "The runner of this job was lost") {
		t.Fatalf("log:\n%s", log)
	}
	b, err := os.ReadFile(count)
	apptest.Must(t, "read the count", err)
	if n := strings.Count(string(b), "started"); n != 1 {
		t.Fatalf("the job started %d times", n)
	}
}

// registerAnother registers one more runner of the fixture's repository.
func registerAnother(t *testing.T, rm *remote, name string, labels ...string) *runnerclient.Config {
	t.Helper()
	reg, _, err := rm.c.Actions.CreateRegistrationToken(apptest.Ctx(), "octo", "hello")
	apptest.Must(t, "registration token", err)
	cfg, err := runnerclient.Register(apptest.Ctx(), runnerclient.Registration{URL: rm.env.URL, Token: reg.GetToken(),
		Name: name, Labels: labels})
	apptest.Must(t, "register", err)
	return cfg
}

// TestJobClaimedButNeverStartedIsQueuedAgain claims a job over the
// protocol as a runner that dies before it starts the job: when the
// lease runs out the job is queued again, and a live runner runs it once.
func TestJobClaimedButNeverStartedIsQueuedAgain(t *testing.T) {
	apptest.SkipJobsUnderRace(t)
	t.Parallel()
	rm := startRemote(t, "flaky", "gpu")
	count := filepath.Join(t.TempDir(), "starts")
	rm.push(t, map[string]string{".github/workflows/once.yml": strings.ReplaceAll(killWorkflow(count), "sleep 60", "true")})
	var job runnerproto.Job
	testwait.For(t, "a job claimed", func() error {
		body, _ := json.Marshal(runnerproto.Claim{Wait: 1})
		req, _ := http.NewRequest(http.MethodPost, rm.env.URL+runnerproto.ClaimPath, bytes.NewReader(body))
		req.Header.Set("Authorization", "RemoteAuth "+rm.cfg.Credential)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("claim: %d", resp.StatusCode)
		}
		return json.NewDecoder(resp.Body).Decode(&job)
	})
	if job.Spec.JobKey != "long" || job.Spec.Token == "" || job.HeadSHA == "" {
		t.Fatalf("claimed %+v", job)
	}
	testwait.For(t, "the job queued again", func() error {
		runs, _, err := rm.c.Actions.ListRepositoryWorkflowRuns(apptest.Ctx(), "octo", "hello", nil)
		if err != nil || len(runs.WorkflowRuns) != 1 {
			return fmt.Errorf("runs %v", err)
		}
		if j := rm.job(t, runs.WorkflowRuns[0].GetID(), "long"); j.GetStatus() != "queued" {
			return fmt.Errorf("job %s", j.GetStatus())
		}
		return nil
	})
	// The dead claim's token was revoked with it.
	resp, err := http.DefaultClient.Do(authed(t, rm.env.URL+"/api/v3/repos/octo/hello", job.Spec.Token))
	apptest.Must(t, "use the revoked token", err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the lost claim's GITHUB_TOKEN: %d", resp.StatusCode)
	}
	rm.run(t, nil)
	run := rm.completedRun(t, "once.yml", 1)
	if run.GetConclusion() != "success" {
		t.Fatalf("run %s", run.GetConclusion())
	}
	b, err := os.ReadFile(count)
	apptest.Must(t, "read the count", err)
	if n := strings.Count(string(b), "started"); n != 1 {
		t.Fatalf("the job started %d times", n)
	}
}

func authed(t *testing.T, u, token string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	apptest.Must(t, "request", err)
	req.Header.Set("Authorization", "Bearer "+token)
	return req
}

// BenchmarkTwoRunnersDrainJobs queues 200 jobs (a matrix of 20 by 10)
// for two registered runners and measures until the run completed:
// every job ran exactly once (each appends its name to a file), on one of
// the two, none lost. go test ./internal/actions -run '^$' -bench TwoRunners -benchtime 1x
func BenchmarkTwoRunnersDrainJobs(b *testing.B) {
	apptest.SkipJobsUnderRace(b)
	for range b.N {
		b.StopTimer()
		drain(b)
	}
}

// drain is one run of BenchmarkTwoRunnersDrainJobs.
func drain(b *testing.B) {
	env := apptest.Start(b, shortLease)
	owner := env.User("octo")
	env.Repo(owner, "hello")
	token := env.Token(owner, "repo", "workflow")
	c := env.Client(token)
	var cfgs []*runnerclient.Config
	for _, name := range []string{"one", "two"} {
		reg, _, err := c.Actions.CreateRegistrationToken(apptest.Ctx(), "octo", "hello")
		apptest.Must(b, "registration token", err)
		cfg, err := runnerclient.Register(apptest.Ctx(), runnerclient.Registration{URL: env.URL, Token: reg.GetToken(), Name: name})
		apptest.Must(b, "register", err)
		cfgs = append(cfgs, cfg)
	}
	ran := filepath.Join(b.TempDir(), "ran")
	work := apptest.WorkTree(b, nil)
	apptest.Git(b, work, "remote", "add", "origin", env.GitURL("octo", "hello", "octo", token))
	apptest.Commit(b, work, "many", map[string]string{".github/workflows/many.yml": `name: many
on: push
jobs:
  small:
    runs-on: self-hosted
    strategy:
      matrix:
        a: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19]
        b: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
    steps:
      - run: echo "${{ matrix.a }}-${{ matrix.b }}" >> ` + ran + `
`})
	apptest.Git(b, work, "push", "-q", "origin", "HEAD:refs/heads/main")
	var runID int64
	testwait.For(b, "200 jobs queued", func() error {
		runs, _, err := c.Actions.ListRepositoryWorkflowRuns(apptest.Ctx(), "octo", "hello", nil)
		if err != nil || len(runs.WorkflowRuns) != 1 {
			return fmt.Errorf("runs: %v", err)
		}
		runID = runs.WorkflowRuns[0].GetID()
		jobs, _, err := c.Actions.ListWorkflowJobs(apptest.Ctx(), "octo", "hello", runID, &github.ListWorkflowJobsOptions{})
		if err != nil || jobs.GetTotalCount() != 200 {
			return fmt.Errorf("jobs: %v %v", jobs.GetTotalCount(), err)
		}
		return nil
	})
	b.StartTimer()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, len(cfgs))
	for _, cfg := range cfgs {
		go func() {
			done <- (&runnerclient.Runner{Config: cfg, Dir: b.TempDir(), Wait: 2 * time.Second, Logger: quiet}).Run(ctx)
		}()
	}
	waitCompleted(b, c, runID, 10*time.Minute) // testwait.Timeout (a minute) is short for 200 jobs on a loaded machine
	b.StopTimer()
	cancel()
	for range cfgs {
		<-done
	}
	content, err := os.ReadFile(ran)
	apptest.Must(b, "read", err)
	seen := map[string]int{}
	for _, l := range strings.Fields(string(content)) {
		seen[l]++
	}
	if len(seen) != 200 {
		b.Fatalf("%d jobs ran", len(seen))
	}
	for k, n := range seen {
		if n != 1 {
			b.Fatalf("%s ran %d times", k, n)
		}
	}
	on := map[string]int{}
	for page := 1; page <= 2; page++ {
		jobs, _, err := c.Actions.ListWorkflowJobs(apptest.Ctx(), "octo", "hello", runID, &github.ListWorkflowJobsOptions{
			ListOptions: github.ListOptions{Page: page, PerPage: 100}})
		apptest.Must(b, "list jobs", err)
		for _, j := range jobs.Jobs {
			on[j.GetRunnerName()]++
		}
	}
	b.ReportMetric(float64(on["one"]), "jobs-on-one")
	b.ReportMetric(float64(on["two"]), "jobs-on-two")
}

// waitCompleted waits up to limit for the run to complete with success.
func waitCompleted(b *testing.B, c *github.Client, runID int64, limit time.Duration) {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(limit)
	for {
		run, _, err := c.Actions.GetWorkflowRunByID(apptest.Ctx(), "octo", "hello", runID)
		apptest.Must(b, "get run", err)
		if run.GetStatus() == "completed" {
			if run.GetConclusion() != "success" {
				b.Fatalf("run %s", run.GetConclusion())
			}
			return
		}
		select {
		case <-deadline:
			b.Fatalf("the run is %s after %v", run.GetStatus(), limit)
		case <-tick.C:
		}
	}
}

// TestOrganizationRunnerTakesItsGroupsRepositories registers an
// organization's runner in a group of selected repositories: it runs the
// jobs of the selected repository, not those of the organization's other
// repository.
func TestOrganizationRunnerTakesItsGroupsRepositories(t *testing.T) {
	apptest.SkipJobsUnderRace(t)
	t.Parallel()
	env := apptest.Start(t, shortLease)
	owner := env.User("octo")
	org := env.Org("acme", owner)
	selected := env.Repo(org, "selected", apptest.RepoOpts{Private: true})
	env.Repo(org, "other", apptest.RepoOpts{Private: true})
	token := env.Token(owner, "repo", "workflow", "admin:org")
	c := env.Client(token)
	_, _, err := c.Actions.CreateOrganizationRunnerGroup(apptest.Ctx(), "acme", github.CreateRunnerGroupRequest{
		Name: github.Ptr("gpus"), Visibility: github.Ptr("selected"), SelectedRepositoryIDs: []int64{selected.ID}})
	apptest.Must(t, "runner group", err)
	runOrgRunner(t, env, c, "acme", "org-box", "gpus")
	for _, name := range []string{"other", "selected"} {
		work := apptest.WorkTree(t, nil)
		apptest.Git(t, work, "remote", "add", "origin", env.GitURL("acme", name, "octo", token))
		apptest.Commit(t, work, "ci", map[string]string{".github/workflows/ci.yml": "on: push\njobs:\n  build:\n    runs-on: self-hosted\n    steps:\n      - run: echo built\n"})
		apptest.Git(t, work, "push", "-q", "origin", "HEAD:refs/heads/main")
	}
	jobOf := func(repo string) *github.WorkflowJob {
		runs, _, err := c.Actions.ListRepositoryWorkflowRuns(apptest.Ctx(), "acme", repo, nil)
		apptest.Must(t, "list runs", err)
		if len(runs.WorkflowRuns) != 1 {
			return nil
		}
		jobs, _, err := c.Actions.ListWorkflowJobs(apptest.Ctx(), "acme", repo, runs.WorkflowRuns[0].GetID(), nil)
		apptest.Must(t, "list jobs", err)
		if len(jobs.Jobs) != 1 {
			return nil
		}
		return jobs.Jobs[0]
	}
	testwait.For(t, "the selected repository's job succeeded on the organization's runner", func() error {
		j := jobOf("selected")
		if j == nil || j.GetConclusion() != "success" {
			return fmt.Errorf("job %v", j.GetStatus())
		}
		if j.GetRunnerName() != "org-box" || j.GetRunnerGroupName() != "gpus" || j.GetRunnerGroupID() == 0 {
			t.Fatalf("on %s, group %d %s", j.GetRunnerName(), j.GetRunnerGroupID(), j.GetRunnerGroupName())
		}
		return nil
	})
	if j := jobOf("other"); j == nil || j.GetStatus() != "queued" {
		t.Fatalf("the other repository's job: %s", j.GetStatus())
	}
}

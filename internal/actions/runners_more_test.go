package actions_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/actions/runnerclient"
	"forgeapi/internal/actions/runnerproto"
	"forgeapi/internal/apptest"
	"forgeapi/internal/testwait"
)

// claimAs claims over the protocol with the runner's credential and the
// session, waiting wait seconds: the status.
func claimAs(t *testing.T, url string, cfg *runnerclient.Config, session string, wait int) int {
	t.Helper()
	body, _ := json.Marshal(runnerproto.Claim{Wait: wait, Session: session})
	req, _ := http.NewRequest(http.MethodPost, url+runnerproto.ClaimPath, bytes.NewReader(body))
	req.Header.Set("Authorization", "RemoteAuth "+cfg.Credential)
	resp, err := http.DefaultClient.Do(req)
	apptest.Must(t, "claim", err)
	resp.Body.Close()
	return resp.StatusCode
}

// TestEphemeralRunnerTakesOneJobAndIsRemoved registers an ephemeral
// runner (REST shows ephemeral: true) and runs it: it takes one of the
// two jobs of its labels, runs it to success and stops, the server
// removes it, and the other job stays queued. An ephemeral runner's
// credential serves one runner process: a second one's claim is a 409.
func TestEphemeralRunnerTakesOneJobAndIsRemoved(t *testing.T) {
	apptest.SkipJobsUnderRace(t)
	t.Parallel()
	rm := startRemote(t, "unused", "other")
	reg, _, err := rm.c.Actions.CreateRegistrationToken(apptest.Ctx(), "octo", "hello")
	apptest.Must(t, "registration token", err)
	cfg, err := runnerclient.Register(apptest.Ctx(), runnerclient.Registration{URL: rm.env.URL, Token: reg.GetToken(),
		Name: "once", Labels: []string{"gpu"}, Ephemeral: true})
	apptest.Must(t, "register", err)
	r, _, err := rm.c.Actions.GetRunner(apptest.Ctx(), "octo", "hello", cfg.ID)
	apptest.Must(t, "get runner", err)
	if !r.GetEphemeral() || !cfg.Ephemeral {
		t.Fatalf("ephemeral %v, config %v", r.GetEphemeral(), cfg.Ephemeral)
	}
	job := func(n string) string {
		return "  j" + n + ":\n    runs-on: [self-hosted, gpu]\n    steps:\n      - run: echo job " + n + "\n"
	}
	rm.push(t, map[string]string{".github/workflows/two.yml": "on: push\njobs:\n" + job("1") + job("2")})
	done := make(chan error, 1)
	go func() {
		done <- (&runnerclient.Runner{Config: cfg, Dir: t.TempDir(), Wait: 2 * time.Second, Logger: quiet, Capacity: 4}).Run(context.Background())
	}()
	select {
	case err := <-done:
		apptest.Must(t, "the ephemeral runner's run", err)
	case <-time.After(2 * time.Minute):
		t.Fatal("the ephemeral runner did not stop after its job")
	}
	runs, _, err := rm.c.Actions.ListRepositoryWorkflowRuns(apptest.Ctx(), "octo", "hello", nil)
	apptest.Must(t, "list runs", err)
	jobs := jobsByName(t, rm.fixture, runs.WorkflowRuns[0].GetID(), "all")
	ran, queued := 0, 0
	for _, j := range jobs {
		if j.GetConclusion() == "success" && j.GetRunnerName() == "once" {
			ran++
		} else if j.GetStatus() == "queued" {
			queued++
		}
	}
	if ran != 1 || queued != 1 {
		t.Fatalf("%d jobs ran on the ephemeral runner, %d queued", ran, queued)
	}
	if _, resp, _ := rm.c.Actions.GetRunner(apptest.Ctx(), "octo", "hello", cfg.ID); resp == nil || resp.StatusCode != 404 {
		t.Fatalf("the ephemeral runner after its job: %v", resp)
	}
	apptest.Step(t, "a second process of an ephemeral runner is refused", func(t *testing.T) {
		cfg2, err := runnerclient.Register(apptest.Ctx(), runnerclient.Registration{URL: rm.env.URL, Token: reg.GetToken(),
			Name: "twice", Labels: []string{"nothing-asks-this"}, Ephemeral: true})
		apptest.Must(t, "register", err)
		if got := claimAs(t, rm.env.URL, cfg2, "first", 0); got != http.StatusNoContent {
			t.Fatalf("the first process's claim: %d", got)
		}
		if got := claimAs(t, rm.env.URL, cfg2, "first", 0); got != http.StatusNoContent {
			t.Fatalf("the first process's claim again: %d", got)
		}
		if got := claimAs(t, rm.env.URL, cfg2, "second", 0); got != http.StatusConflict {
			t.Fatalf("a second process's claim: %d", got)
		}
		err = (&runnerclient.Runner{Config: cfg2, Dir: t.TempDir(), Wait: time.Second, Logger: quiet}).Run(context.Background())
		if err != runnerclient.ErrInUse {
			t.Fatalf("a second runner process: %v", err)
		}
	})
}

// TestRunnerWithCapacityRunsTwoJobsAtOnce runs a runner of capacity 2 on
// a workflow of two jobs that each wait for the other to have started:
// both succeed (they ran at the same time, on the one runner), each
// started once, and the runner is busy while they run, idle after.
func TestRunnerWithCapacityRunsTwoJobsAtOnce(t *testing.T) {
	apptest.SkipJobsUnderRace(t)
	t.Parallel()
	rm := startRemote(t, "wide", "gpu")
	starts := filepath.Join(t.TempDir(), "starts")
	job := func(n string) string {
		return "  j" + n + ":\n    runs-on: [self-hosted, gpu]\n    steps:\n      - run: |\n" +
			"          echo " + n + " >> " + starts + "\n" +
			"          for i in $(seq 1 300); do [ \"$(wc -l < " + starts + ")\" -ge 2 ] && exit 0; sleep 0.1; done\n" +
			"          echo the other job never started; exit 1\n"
	}
	cfg, err := runnerclient.Load(rm.cfgPath)
	apptest.Must(t, "load", err)
	jobs := make(chan int64, 4)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- (&runnerclient.Runner{Config: cfg, Dir: t.TempDir(), Wait: 2 * time.Second, Logger: quiet, Capacity: 2, Jobs: jobs}).Run(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
	rm.push(t, map[string]string{".github/workflows/pair.yml": "on: push\njobs:\n" + job("1") + job("2")})
	<-jobs
	<-jobs
	if r := rm.runnerOf(t); !r.GetBusy() {
		t.Fatalf("busy %v while its jobs run", r.GetBusy())
	}
	run := rm.completedRun(t, "pair.yml", 1)
	if run.GetConclusion() != "success" {
		for _, j := range jobsByName(t, rm.fixture, run.GetID(), "all") {
			t.Logf("%s: %s\n%s", j.GetName(), j.GetConclusion(), rm.jobLog(t, j.GetID()))
		}
		t.Fatalf("run %s", run.GetConclusion())
	}
	for name, j := range jobsByName(t, rm.fixture, run.GetID(), "all") {
		if j.GetRunnerName() != "wide" {
			t.Fatalf("%s ran on %q", name, j.GetRunnerName())
		}
	}
	b, err := os.ReadFile(starts)
	apptest.Must(t, "read starts", err)
	if lines := strings.Fields(string(b)); len(lines) != 2 || lines[0] == lines[1] {
		t.Fatalf("starts %q", lines)
	}
	testwait.For(t, "the runner idle", func() error {
		if r := rm.runnerOf(t); r.GetBusy() {
			return fmt.Errorf("busy")
		}
		return nil
	})
}

// TestRunnerGroupRestrictedToSelectedWorkflows makes an organization's
// runner group restricted to one workflow at main (REST create and get
// show the fields; a workflow without a ref is a 422): its runner runs
// that workflow's job, not the other workflow's. The Default group does
// not allow public repositories.
func TestRunnerGroupRestrictedToSelectedWorkflows(t *testing.T) {
	apptest.SkipJobsUnderRace(t)
	t.Parallel()
	env := apptest.Start(t, shortLease)
	owner := env.User("octo")
	org := env.Org("acme", owner)
	env.Repo(org, "app", apptest.RepoOpts{Private: true})
	token := env.Token(owner, "repo", "workflow", "admin:org")
	c := env.Client(token)
	groups, _, err := c.Actions.ListOrganizationRunnerGroups(apptest.Ctx(), "acme", nil)
	apptest.Must(t, "list groups", err)
	if len(groups.RunnerGroups) != 1 || !groups.RunnerGroups[0].GetDefault() || groups.RunnerGroups[0].GetAllowsPublicRepositories() {
		t.Fatalf("the default group %+v", groups.RunnerGroups)
	}
	_, resp, _ := c.Actions.CreateOrganizationRunnerGroup(apptest.Ctx(), "acme", github.CreateRunnerGroupRequest{
		Name: github.Ptr("bad"), RestrictedToWorkflows: github.Ptr(true), SelectedWorkflows: []string{"acme/app/.github/workflows/deploy.yml"}})
	if resp == nil || resp.StatusCode != 422 {
		t.Fatalf("a selected workflow without a ref: %v", resp)
	}
	selected := []string{"acme/app/.github/workflows/deploy.yml@main"}
	g, _, err := c.Actions.CreateOrganizationRunnerGroup(apptest.Ctx(), "acme", github.CreateRunnerGroupRequest{
		Name: github.Ptr("deployers"), RestrictedToWorkflows: github.Ptr(true), SelectedWorkflows: selected})
	apptest.Must(t, "runner group", err)
	g, _, err = c.Actions.GetOrganizationRunnerGroup(apptest.Ctx(), "acme", g.GetID())
	apptest.Must(t, "get group", err)
	if !g.GetRestrictedToWorkflows() || len(g.SelectedWorkflows) != 1 || g.SelectedWorkflows[0] != selected[0] {
		t.Fatalf("group %+v", g)
	}
	runOrgRunner(t, env, c, "acme", "deploy-box", "deployers")
	work := apptest.WorkTree(t, nil)
	apptest.Git(t, work, "remote", "add", "origin", env.GitURL("acme", "app", "octo", token))
	wf := "on: push\njobs:\n  go:\n    runs-on: self-hosted\n    steps:\n      - run: echo go\n"
	apptest.Commit(t, work, "ci", map[string]string{".github/workflows/ci.yml": wf, ".github/workflows/deploy.yml": wf})
	apptest.Git(t, work, "push", "-q", "origin", "HEAD:refs/heads/main")
	jobOf := func(file string) *github.WorkflowJob {
		runs, _, err := c.Actions.ListWorkflowRunsByFileName(apptest.Ctx(), "acme", "app", file, nil)
		apptest.Must(t, "list runs", err)
		if len(runs.WorkflowRuns) != 1 {
			return nil
		}
		jobs, _, err := c.Actions.ListWorkflowJobs(apptest.Ctx(), "acme", "app", runs.WorkflowRuns[0].GetID(), nil)
		apptest.Must(t, "list jobs", err)
		if len(jobs.Jobs) != 1 {
			return nil
		}
		return jobs.Jobs[0]
	}
	testwait.For(t, "the selected workflow's job succeeded on the group's runner", func() error {
		j := jobOf("deploy.yml")
		if j == nil || j.GetConclusion() != "success" {
			return fmt.Errorf("job %v", j.GetStatus())
		}
		if j.GetRunnerName() != "deploy-box" || j.GetRunnerGroupName() != "deployers" {
			t.Fatalf("on %s, group %s", j.GetRunnerName(), j.GetRunnerGroupName())
		}
		return nil
	})
	time.Sleep(2 * time.Second) // the runner's next claims pass over the other workflow's job
	if j := jobOf("ci.yml"); j == nil || j.GetStatus() != "queued" {
		t.Fatalf("the other workflow's job: %v", j.GetStatus())
	}
}

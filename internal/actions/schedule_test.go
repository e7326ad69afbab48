package actions_test

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"forgeapi/internal/app"
	"forgeapi/internal/apptest"
	"forgeapi/internal/webhooks"
)

const scheduled = `name: Nightly
on:
  schedule:
    - cron: '*/5 * * * *'
jobs:
  tick:
    runs-on: ubuntu-latest
    steps:
      - run: echo "tick ${{ github.event.schedule }}"
`

// TestScheduleTrigger pushes a workflow on a five-minute schedule to the
// default branch and moves the server's clock: nothing fires before the
// time, one run (event schedule, on the branch's head) once it has come,
// none again until the next time, and none once a push drops the
// schedule.
func TestScheduleTrigger(t *testing.T) {
	t.Parallel()
	apptest.SkipJobsUnderRace(t)
	// The server's clock starts half-way between two of the schedule's
	// times and moves by whole periods, so that the seconds the test takes
	// never carry it over one of them.
	const period = 5 * time.Minute
	start := time.Now()
	midway := start.Truncate(period).Add(period + period/2).Sub(start)
	var offset atomic.Int64
	offset.Store(int64(midway))
	clock := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	env := apptest.Start(t, withRunner, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}),
		func(c *app.Config) { c.Now = clock })
	owner := env.User("octo", apptest.UserOpts{Email: "octo@example.com"})
	env.Repo(owner, "hello")
	token := env.Token(owner, "repo", "workflow")
	f := &fixture{env: env, owner: owner, token: token, c: env.Client(token), work: apptest.WorkTree(t, nil)}
	apptest.Git(t, f.work, "remote", "add", "origin", env.GitURL("octo", "hello", "octo", token))
	ctx := apptest.Ctx()
	sha := f.push(t, map[string]string{".github/workflows/nightly.yml": scheduled})
	sched := env.App.ActionsScheduler

	sched.RunOnce(ctx)
	if runs := runsOf(t, f, "schedule"); len(runs) != 0 {
		t.Fatalf("%d schedule runs before the time", len(runs))
	}
	offset.Store(int64(midway + period))
	sched.RunOnce(ctx)
	run := completedOf(t, f, "schedule", 1)
	if run.GetName() != "Nightly" || run.GetHeadSHA() != sha || run.GetHeadBranch() != "main" || run.GetConclusion() != "success" {
		t.Fatalf("schedule run: %s %s %s %s", run.GetName(), run.GetHeadSHA(), run.GetHeadBranch(), run.GetConclusion())
	}
	if log := f.jobLog(t, jobsByName(t, f, run.GetID(), "")["tick"].GetID()); !strings.Contains(log, "tick */5 * * * *") {
		t.Fatalf("log:\n%s", log)
	}
	sched.RunOnce(ctx)
	if runs := runsOf(t, f, "schedule"); len(runs) != 1 {
		t.Fatalf("%d schedule runs before the next time", len(runs))
	}
	f.push(t, map[string]string{".github/workflows/nightly.yml": "name: Nightly\non: workflow_dispatch\njobs:\n  tick:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo manual\n"})
	offset.Store(int64(midway + 2*period))
	sched.RunOnce(ctx)
	if runs := runsOf(t, f, "schedule"); len(runs) != 1 {
		t.Fatalf("%d schedule runs after the schedule was dropped", len(runs))
	}
}

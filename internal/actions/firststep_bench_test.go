package actions_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/actions/runnerclient"
	"forgeapi/internal/app"
	"forgeapi/internal/apptest"
)

// BenchmarkPushToFirstStep measures, with an idle runner waiting, the
// time from the start of a `git push` of a commit to the moment its
// workflow's first step runs: the step opens a named pipe the benchmark
// is reading, so the moment is the step's own, not a poll's. It reports
// the p50 and p99 over b.N pushes (target: p50 under 1 s).
//
//	go test ./internal/actions -run '^$' -bench PushToFirstStep -benchtime 20x
func BenchmarkPushToFirstStep(b *testing.B) {
	apptest.SkipJobsUnderRace(b)
	b.Run("registered", func(b *testing.B) {
		env := apptest.Start(b)
		owner := env.User("octo")
		env.Repo(owner, "hello")
		startRegisteredRunner(b, env, owner)
		pushToFirstStep(b, env, owner, "self-hosted")
	})
	b.Run("builtin", func(b *testing.B) {
		env := apptest.Start(b, func(c *app.Config) { c.BuiltinRunner = true })
		owner := env.User("octo")
		env.Repo(owner, "hello")
		pushToFirstStep(b, env, owner, "ubuntu-latest")
	})
}

// startRegisteredRunner registers a runner for octo/hello and runs it
// until the benchmark ends.
func startRegisteredRunner(b *testing.B, env *apptest.Env, owner *accounts.Account) {
	c := env.Client(env.Token(owner, "repo"))
	reg, _, err := c.Actions.CreateRegistrationToken(apptest.Ctx(), "octo", "hello")
	apptest.Must(b, "registration token", err)
	cfg, err := runnerclient.Register(apptest.Ctx(), runnerclient.Registration{URL: env.URL, Token: reg.GetToken(), Name: "idle"})
	apptest.Must(b, "register", err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- (&runnerclient.Runner{Config: cfg, Dir: b.TempDir(), Logger: quiet}).Run(ctx) }()
	b.Cleanup(func() { cancel(); <-done })
}

// pushToFirstStep pushes b.N commits to owner's octo/hello, each running
// a workflow on runsOn whose first step writes to a named pipe, and
// reports the times from each push's start to that write.
func pushToFirstStep(b *testing.B, env *apptest.Env, owner *accounts.Account, runsOn string) {
	token := env.Token(owner, "repo", "workflow")
	fifo := filepath.Join(b.TempDir(), "started")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		b.Skipf("no named pipes here: %v", err)
	}
	work := apptest.WorkTree(b, nil)
	apptest.Git(b, work, "remote", "add", "origin", env.GitURL("octo", "hello", "octo", token))
	var took []time.Duration
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		apptest.Commit(b, work, fmt.Sprintf("push %d", i), map[string]string{".github/workflows/first.yml": `name: first
on: push
jobs:
  first:
    runs-on: ` + runsOn + `
    steps:
      - run: echo ` + fmt.Sprint(i) + ` > ` + fifo + `
`})
		b.StartTimer()
		start := time.Now()
		apptest.Git(b, work, "push", "-q", "origin", "HEAD:refs/heads/main")
		took = append(took, readPipe(b, fifo).Sub(start))
	}
	b.StopTimer()
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Milliseconds()), "p50-ms")
	b.ReportMetric(float64(took[(len(took)*99)/100].Milliseconds()), "p99-ms")
}

// readPipe waits (up to two minutes) for a writer to open the named pipe
// and returns when it did.
func readPipe(b *testing.B, fifo string) time.Time {
	opened := make(chan time.Time, 1)
	go func() {
		f, err := os.Open(fifo) // blocks until the step opens it to write
		if err != nil {
			return
		}
		at := time.Now()
		_, _ = f.Read(make([]byte, 64))
		f.Close()
		opened <- at
	}()
	select {
	case at := <-opened:
		return at
	case <-time.After(2 * time.Minute):
		b.Fatal("the workflow's first step did not run within two minutes")
		return time.Time{}
	}
}

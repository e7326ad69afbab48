package actions_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"forgeapi/internal/actions"
	"forgeapi/internal/app"
	"forgeapi/internal/apptest"
	"forgeapi/internal/testwait"
)

// serverChildEnv names the file of a serverChild that the test binary
// runs as its own process (TestMain), for the tests that kill a server.
const serverChildEnv = "FORGEAPI_TEST_SERVER_CHILD"

// serverChild is what a server run in a child process needs: the data
// of a server the test stopped, and the address it listened on.
type serverChild struct {
	Addr        string `json:"addr"`
	DataDir     string `json:"data_dir"`
	DatabaseURL string `json:"database_url"`
	// Lease is the jobs' lease (a short one: on PostgreSQL the next
	// server waits for it to run out before it fails the job).
	Lease time.Duration `json:"lease"`
}

// runServerChild serves with the built-in runner until it is killed.
func runServerChild(path string) int {
	raw, err := os.ReadFile(path)
	var sc serverChild
	if err == nil {
		err = json.Unmarshal(raw, &sc)
	}
	if err == nil {
		_, err = app.Start(context.Background(), app.Config{Addr: sc.Addr, DataDir: sc.DataDir, DatabaseURL: sc.DatabaseURL,
			BuiltinRunner: true, ActionsRunner: actions.RunnerConfig{Lease: sc.Lease}, Logger: slog.New(slog.DiscardHandler)})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	select {}
}

// TestAKilledServersJobIsFailedNotRunAgain kills (-9) a server process
// and the steps it runs (its process group: the machine's death) while
// its built-in runner runs a job: when the server starts again on the
// same data the run is failed, not lost, and its step never runs twice.
func TestAKilledServersJobIsFailedNotRunAgain(t *testing.T) {
	apptest.SkipJobsUnderRace(t)
	t.Parallel()
	f := start(t, shortLease)
	f.env.Stop()
	u, err := url.Parse(f.env.URL)
	apptest.Must(t, "server URL", err)
	childCfg := filepath.Join(t.TempDir(), "server.json")
	raw, err := json.Marshal(serverChild{Addr: u.Host, DataDir: f.env.DataDir, DatabaseURL: f.env.Config.DatabaseURL,
		Lease: f.env.Config.ActionsRunner.Lease})
	apptest.Must(t, "child config", err)
	apptest.Must(t, "write child config", os.WriteFile(childCfg, raw, 0o600))
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), serverChildEnv+"="+childCfg)
	kill, stderr := startKillable(t, cmd) // the server and the steps its runner started
	testwait.For(t, "the server process answering", func() error {
		resp, err := f.env.HTTPClient().Get(f.env.URL + "/healthz")
		if err != nil {
			return fmt.Errorf("%v (server: %s)", err, stderr.String())
		}
		resp.Body.Close()
		return nil
	})
	marks := t.TempDir()
	f.push(t, map[string]string{".github/workflows/long.yml": fmt.Sprintf(
		"on: push\njobs:\n  long:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ran >> %s/long && sleep 600\n", marks)})
	testwait.For(t, "the step running", func() error {
		if b, _ := os.ReadFile(filepath.Join(marks, "long")); len(b) == 0 {
			return fmt.Errorf("not yet (server: %s)", stderr.String())
		}
		return nil
	})
	kill()
	env := apptest.StartConfig(t, f.env.Config)
	c := env.Client(f.token)
	testwait.For(t, "the run failed", func() error {
		runs, _, err := c.Actions.ListRepositoryWorkflowRuns(apptest.Ctx(), "octo", "hello", nil)
		if err != nil || len(runs.WorkflowRuns) != 1 || runs.WorkflowRuns[0].GetConclusion() != "failure" {
			return fmt.Errorf("runs %v %v", runs, err)
		}
		return nil
	})
	if b, _ := os.ReadFile(filepath.Join(marks, "long")); string(b) != "ran\n" {
		t.Fatalf("the step ran %q", b)
	}
}

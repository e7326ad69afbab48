package apptest

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// NodeModules returns the repository's testdata/node folder when node
// and its npm modules are installed there (`npm ci`; .ci/run does it),
// module (such as "@octokit/rest") among them. Without them the test is
// skipped, except in CI (CI set), where it fails: CI installs them. Under
// the race detector the test is skipped (OnceWithoutRace).
func NodeModules(t testing.TB, module string) string {
	t.Helper()
	OnceWithoutRace(t)
	dir := testdataDir("node")
	_, nodeErr := exec.LookPath("node")
	_, modErr := os.Stat(filepath.Join(dir, "node_modules", filepath.FromSlash(module)))
	if nodeErr != nil || modErr != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI lacks node (%v) or the npm modules of testdata/node (%v)", nodeErr, modErr)
		}
		t.Skip("node or testdata/node/node_modules missing (run npm ci in testdata/node)")
	}
	return dir
}

// NodeApp is a node script run as an app beside the test's server: it
// prints {"ready": true} once it listens, then one JSON summary line when
// it is done (testdata/node/octokit-app.mjs, octokit-ci.mjs).
type NodeApp struct {
	t     testing.TB
	cmd   *exec.Cmd
	lines *bufio.Scanner
	stop  context.CancelFunc
}

// StartNodeApp runs node script in dir (NodeModules) with env added to
// the test's environment, and returns once the script is ready; the
// script is killed if it runs past two minutes or the test ends.
func StartNodeApp(t testing.TB, dir, script string, env ...string) *NodeApp {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, "node", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	Must(t, "stdout of "+script, err)
	Must(t, "start node "+script, cmd.Start())
	a := &NodeApp{t: t, cmd: cmd, lines: bufio.NewScanner(stdout), stop: cancel}
	if !a.lines.Scan() || !strings.Contains(a.lines.Text(), `"ready":true`) {
		_ = cmd.Wait()
		t.Fatalf("%s did not get ready: %q", script, a.lines.Text())
	}
	return a
}

// Summary waits for the script's summary line, decodes it into v and
// returns it as printed.
func (a *NodeApp) Summary(v any) string {
	a.t.Helper()
	if !a.lines.Scan() {
		a.t.Fatalf("%s printed no summary: %v", a.cmd.Args[1], a.lines.Err())
	}
	out := a.lines.Text()
	Must(a.t, "node "+a.cmd.Args[1], a.cmd.Wait())
	a.t.Logf("%s summary: %s", a.cmd.Args[1], out)
	if err := json.Unmarshal([]byte(out), v); err != nil {
		a.t.Fatalf("summary %q: %v", out, err)
	}
	return out
}

package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// crashPushesReport is the JSON output of `crash pushes`.
type crashPushesReport struct {
	Scenario string `json:"scenario"`
	Database string `json:"database"`
	Runs     int    `json:"runs"`
	Kills    int    `json:"kills"`
	// PushesAcknowledged are the pushes git reported done; only they must
	// have a PushEvent and a push delivery.
	PushesAcknowledged int `json:"pushes_acknowledged"`
	// PushesCutOff are the pushes a kill made fail on the client's side.
	PushesCutOff int `json:"pushes_cut_off"`
	// CutOffWithEvent are the cut-off pushes whose commit still got a
	// PushEvent (the server updated the branch before it died).
	CutOffWithEvent int `json:"cut_off_pushes_with_event"`
	// FeedMissing and FeedDuplicated count acknowledged pushes without a
	// PushEvent in /repos/{owner}/{repo}/events, and PushEvents whose
	// head appears more than once.
	FeedMissing    int `json:"feed_missing"`
	FeedDuplicated int `json:"feed_duplicated"`
	// HookMissing and HookDuplicated count the same in the push
	// deliveries of a webhook (a delivery answered 200 twice is a
	// duplicate).
	HookMissing    int64 `json:"hook_missing"`
	HookDuplicated int64 `json:"hook_duplicated"`
	BadSignatures  int64 `json:"bad_signatures"`
	// GitLeftAfterKill counts the server's git processes still running
	// gitGrace after each kill (once the client's push ended: a killed
	// process group takes a moment to go); GitLeftAtEnd those running
	// when the tool ends.
	GitLeftAfterKill int      `json:"git_processes_left_after_kills"`
	GitLeftAtEnd     int      `json:"git_processes_left_at_end"`
	GitLeftExamples  []string `json:"git_processes_left_examples,omitempty"`
	ElapsedSec       float64  `json:"elapsed_seconds"`
}

// runCrashPushes pushes commits to bench/widgets over HTTP with the git
// CLI, kills the server with SIGKILL while a push is under way (0 to
// 160 ms after the server started git for it, a different moment in
// each run), restarts it, and in the end compares
// the acknowledged pushes with the PushEvents of the repository's feed
// and with a webhook's push deliveries, and looks for the server's git
// processes left running.
func runCrashPushes(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("crash pushes", flag.ContinueOnError)
	runs := fs.Int("n", 3, "runs, each with one kill -9 and a restart")
	pushes := fs.Int("pushes", 8, "pushes per run")
	files := fs.Int("files", 100, "files changed by each push (its size)")
	database := fs.String("database", "", "postgres://... base URL (a schema is created for the run); default SQLite")
	bin := fs.String("bin", "", "forgeapi binary (default: go build it)")
	drain := fs.Duration("drain", 60*time.Second, "how long to wait for the last events and deliveries")
	timeout := fs.Duration("timeout", crashTimeout, "bound of the whole scenario")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	if *runs < 1 || *runs > 50 || *pushes < 2 || *pushes > 200 || *files < 1 || *files > 100000 {
		return errors.New("want -n in 1..50, -pushes in 2..200, -files in 1..100000")
	}
	start := time.Now()
	setup, rcv, hookURL, stop, err := newCrashRig(ctx, *bin, *database)
	if err != nil {
		return err
	}
	defer stop()

	f := &fleet{setup: setup, extra: []string{"--webhook-allowed-hosts", "loopback", "--webhook-timeout", "2s"}}
	defer f.stop()
	srv, err := setup.startServer(f.extra...)
	if err != nil {
		return err
	}
	f.srv = []*server{srv}
	client := &http.Client{Timeout: 30 * time.Second}
	if _, err := createHooks(ctx, client, f.url(0), setup.fx, hookURL, "push", 1); err != nil {
		return err
	}
	if err := rcv.awaitPings(ctx, 1, 30*time.Second); err != nil {
		return err
	}
	work, err := newWorkTree(ctx, filepath.Dir(setup.dataDir))
	if err != nil {
		return err
	}

	rep := crashPushesReport{Scenario: "crash pushes", Database: setup.database(), Runs: *runs}
	var acked, cut []string
	leftSeen := map[string]bool{}
	n := 0
	for run := range *runs {
		killAfter := time.Duration(run%5) * 40 * time.Millisecond // 0, 40, 80, 120, 160 ms after the server started git
		for p := range *pushes {
			n++
			sha, err := work.commit(ctx, n, *files)
			if err != nil {
				return err
			}
			rcv.sent(sha, time.Now())
			kill := p == *pushes/2
			pushed := make(chan error, 1)
			go func() { pushed <- work.push(ctx, f.url(0), setup.fx) }()
			if kill {
				// Kill once the server runs git for this push (or the push
				// ended first), killAfter later.
				for end := time.Now().Add(10 * time.Second); len(pushed) == 0 && time.Now().Before(end); time.Sleep(2 * time.Millisecond) {
					if len(gitProcesses(setup.dataDir)) > 0 {
						break
					}
				}
				time.Sleep(killAfter)
				f.mu.Lock()
				victim := f.srv[0]
				f.mu.Unlock()
				victim.kill()
				rep.Kills++
			}
			if err := <-pushed; err != nil {
				rcv.unsent(sha)
				cut = append(cut, sha)
			} else {
				acked = append(acked, sha)
			}
			if kill {
				progress("run %d: killed during push %d (%d acknowledged, %d cut off so far)", run+1, n, len(acked), len(cut))
				for _, p := range gitProcessesAfter(setup.dataDir, gitGrace) {
					if !leftSeen[p] {
						leftSeen[p] = true
						rep.GitLeftAfterKill++
						if len(rep.GitLeftExamples) < 5 {
							rep.GitLeftExamples = append(rep.GitLeftExamples, p)
						}
					}
				}
				next, err := setup.startServer(f.extra...)
				if err != nil {
					return fmt.Errorf("restart after kill: %w", err)
				}
				f.mu.Lock()
				f.srv[0] = next
				f.mu.Unlock()
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
		}
	}
	rep.PushesAcknowledged, rep.PushesCutOff = len(acked), len(cut)
	progress("pushes done after %.1fs: %d acknowledged, %d cut off", time.Since(start).Seconds(), len(acked), len(cut))

	var heads map[string]int
	for deadline := time.Now().Add(*drain); ; time.Sleep(200 * time.Millisecond) {
		if heads, err = pushEventHeads(ctx, client, f.url(0), setup.fx); err != nil {
			return err
		}
		missing := 0
		for _, sha := range acked {
			if heads[sha] == 0 {
				missing++
			}
		}
		rep.FeedMissing = missing
		if missing == 0 && int64(len(rcv.latencies())) >= int64(len(acked)) || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
	}
	progress("feed and receiver checked after %.1fs: %d missing in the feed, %d deliveries received",
		time.Since(start).Seconds(), rep.FeedMissing, len(rcv.latencies()))
	// Let the deliveries pending after a kill be sent (or sent again), so
	// that a second send is counted.
	for deadline := time.Now().Add(*drain); ; time.Sleep(100 * time.Millisecond) {
		pending, err := setup.pendingDeliveries(ctx)
		if err != nil {
			return err
		}
		if pending == 0 || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
	}
	progress("pending deliveries checked after %.1fs", time.Since(start).Seconds())
	for _, n := range heads {
		rep.FeedDuplicated += max(n-1, 0)
	}
	for _, sha := range cut {
		if heads[sha] > 0 {
			rep.CutOffWithEvent++
		}
	}
	rep.HookMissing = int64(len(acked)) - int64(len(rcv.latencies()))
	rep.HookDuplicated = rcv.duplicates.Load()
	rep.BadSignatures = rcv.badSignatures.Load()
	rep.GitLeftAtEnd = len(gitProcesses(setup.dataDir))
	rep.ElapsedSec = time.Since(start).Seconds()
	return printJSON(rep)
}

// gitGrace is how long after a kill the server's git processes may take
// to go before they count as left behind.
const gitGrace = 10 * time.Second

// gitProcessesAfter returns the git processes of dataDir still running
// when grace has passed, or none as soon as there are none.
func gitProcessesAfter(dataDir string, grace time.Duration) []string {
	left := gitProcesses(dataDir)
	for end := time.Now().Add(grace); len(left) > 0 && time.Now().Before(end); left = gitProcesses(dataDir) {
		time.Sleep(50 * time.Millisecond)
	}
	return left
}

// pushEventHeads counts the PushEvents of the repository's feed by head
// SHA (the feed keeps the newest 300 events).
func pushEventHeads(ctx context.Context, client *http.Client, base string, fx *benchFixture) (map[string]int, error) {
	heads := map[string]int{}
	for page := 1; page <= 3; page++ {
		resp, err := call(ctx, client, "GET", base+"/repos/"+fx.owner+"/"+fx.repo+"/events?per_page=100&page="+strconv.Itoa(page), fx.token, "")
		if err != nil {
			return nil, err
		}
		if resp.status != http.StatusOK {
			return nil, fmt.Errorf("list events: status %d: %s", resp.status, resp.body)
		}
		var evs []struct {
			Type    string `json:"type"`
			Payload struct {
				Head string `json:"head"`
			} `json:"payload"`
		}
		if err := json.Unmarshal(resp.body, &evs); err != nil {
			return nil, err
		}
		for _, e := range evs {
			if e.Type == "PushEvent" {
				heads[e.Payload.Head]++
			}
		}
		if len(evs) < 100 {
			break
		}
	}
	return heads, nil
}

// workTree is the client's clone: git with no user or system
// configuration.
type workTree struct {
	dir string
	env []string
}

func newWorkTree(ctx context.Context, parent string) (*workTree, error) {
	w := &workTree{dir: filepath.Join(parent, "work")}
	home := filepath.Join(parent, "home")
	for _, d := range []string{w.dir, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	w.env = []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=",
		"GIT_AUTHOR_NAME=Bench", "GIT_AUTHOR_EMAIL=bench@example.com",
		"GIT_COMMITTER_NAME=Bench", "GIT_COMMITTER_EMAIL=bench@example.com", "PATH=" + os.Getenv("PATH")}
	_, err := w.git(ctx, "init", "-q", "-b", "main")
	return w, err
}

func (w *workTree) git(ctx context.Context, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"-c", "credential.helper=", "-c", "protocol.version=2"}, args...)...)
	cmd.Dir = w.dir
	cmd.Env = w.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("git %s: %v: %s", args[0], err, out)
	}
	return string(out), nil
}

// commit changes `files` files (new content in each) and commits; it
// returns the commit's SHA.
func (w *workTree) commit(ctx context.Context, n, files int) (string, error) {
	dir := filepath.Join(w.dir, "files")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for i := range files {
		body := fmt.Sprintf("push %d file %d\n%s\n", n, i, strings.Repeat(strconv.Itoa(n*files+i), 40))
		if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(i)+".txt"), []byte(body), 0o644); err != nil {
			return "", err
		}
	}
	if _, err := w.git(ctx, "add", "-A"); err != nil {
		return "", err
	}
	if _, err := w.git(ctx, "commit", "-q", "-m", "push "+strconv.Itoa(n)); err != nil {
		return "", err
	}
	out, err := w.git(ctx, "rev-parse", "HEAD")
	return strings.TrimSpace(out), err
}

// push pushes main to bench/widgets on the server at base.
func (w *workTree) push(ctx context.Context, base string, fx *benchFixture) error {
	u, err := url.Parse(base + "/" + fx.owner + "/" + fx.repo + ".git")
	if err != nil {
		return err
	}
	u.User = url.UserPassword(fx.owner, fx.token)
	_, err = w.git(ctx, "push", "-q", u.String(), "main:main")
	return err
}

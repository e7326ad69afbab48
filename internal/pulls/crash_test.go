package pulls_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/testwait"
	"forgeapi/internal/webhooks"
)

var listening = regexp.MustCompile(`listening on (http://[0-9.:]+)`)

// servedBinary is a forgeapi serve process on a test's data.
type servedBinary struct {
	url  string
	cmd  *exec.Cmd
	done chan struct{} // closed once the process has exited
}

// serveBinary runs the forgeapi binary on the test's data (delivering
// webhooks to loopback) and returns it once it listens.
func serveBinary(t *testing.T, bin string, env *apptest.Env) *servedBinary {
	t.Helper()
	args := []string{"serve", "--addr", "127.0.0.1:0", "--data", env.DataDir, "--webhook-allowed-hosts", "loopback",
		"--webhook-timeout", "1s"}
	if env.Config.DatabaseURL != "" {
		args = append(args, "--database", env.Config.DatabaseURL)
	}
	s := &servedBinary{cmd: exec.Command(bin, args...), done: make(chan struct{})}
	stderr, err := s.cmd.StderrPipe()
	apptest.Must(t, "stderr pipe", err)
	s.cmd.Stdout = io.Discard
	apptest.Must(t, "start forgeapi", s.cmd.Start())
	t.Cleanup(s.kill)
	found := make(chan string, 1)
	go func() {
		scanner := bufio.NewScanner(stderr)
		for scanner.Scan() {
			if m := listening.FindStringSubmatch(scanner.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
		_ = s.cmd.Wait()
		close(s.done)
	}()
	select {
	case s.url = <-found:
		return s
	case <-s.done:
		t.Fatal("forgeapi exited before it listened")
	case <-time.After(60 * time.Second):
		t.Fatal("forgeapi did not start listening")
	}
	return nil
}

// kill ends the process with SIGKILL and waits for it.
func (s *servedBinary) kill() {
	_ = s.cmd.Process.Kill()
	<-s.done
}

// answer is a response's status and body, or the error of a request
// cut off by a kill.
type answer struct {
	status int
	body   []byte
	err    error
}

// call sends a JSON request to the served binary.
func (s *servedBinary) call(method, path, token, body string) answer {
	req, err := http.NewRequest(method, s.url+path, strings.NewReader(body))
	if err != nil {
		return answer{err: err}
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, body: b, err: err}
}

// message is the message of an error answer.
func (a answer) message() string {
	var e struct{ Message string }
	_ = json.Unmarshal(a.body, &e)
	return e.Message
}

// TestKilledMergesAreAllOrNothing merges pull requests (merge, squash
// and rebase in turn) on a real forgeapi serve process, each at once
// with a contents write on another branch, and kills the process with
// SIGKILL 0 to 400 ms after sending them; the next process retries the
// merge cut off, as a client would. After a last start (whose push
// recovery takes every push left over) each merge is all or nothing:
// every pull request is merged exactly once (a merge cut off before the
// base moved is merged by the retry or at the end), its merge_commit_sha
// is the one commit of the base's first-parent history that brings its
// change, it has one merged and one closed event in its history and one
// pull_request closed delivery, and each push (merges and contents
// writes) has one PushEvent; no retry applied a commit twice and no
// answer was a 5xx.
func TestKilledMergesAreAllOrNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the forgeapi binary")
	}
	t.Parallel()
	bin := apptest.ServerBinary(t, t.TempDir())

	// Set up with an in-process server, then hand the data to the binary.
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	ctx := apptest.Ctx()
	octo := env.User("octo")
	repoDir := env.App.Repos.GitDir(env.Repo(octo, "hello").ID)
	token := env.Token(octo, "repo", "admin:repo_hook")
	owner := env.Client(token)
	rc := apptest.NewReceiver(t, "s")
	_, _, err := owner.Repositories.CreateHook(ctx, "octo", "hello", &github.Hook{Events: []string{"pull_request"},
		Config: &github.HookConfig{URL: github.Ptr(rc.URL), ContentType: github.Ptr("json"), Secret: github.Ptr("s")}})
	apptest.Must(t, "hook", err)
	proj := newProject(t, env, "octo", "hello", "octo", token)
	start := proj.remoteRef("refs/heads/main")
	_, _, err = owner.Git.CreateRef(ctx, "octo", "hello", github.CreateRef{Ref: "refs/heads/notes", SHA: start})
	apptest.Must(t, "notes branch", err)
	type pull struct {
		number int
		method string
		file   string
	}
	var pulls []pull
	for i := range 9 {
		branch := fmt.Sprintf("pr-%d", i)
		proj.commitOn(branch, branch, map[string]string{branch + ".txt": branch + "\n"})
		pr, _, err := owner.PullRequests.Create(ctx, "octo", "hello", github.CreatePullRequest{Title: github.Ptr(branch), Head: branch, Base: "main"})
		apptest.Must(t, "open "+branch, err)
		pulls = append(pulls, pull{number: pr.GetNumber(), method: []string{"merge", "squash", "rebase"}[i%3], file: branch + ".txt"})
	}
	env.Stop()

	var problems []string
	kills := 0                  // merges cut off
	recovered := map[int]bool{} // pull requests merged by a push recovery
	cutOff := map[int]bool{}    // pull request number: its last merge was cut off by a kill
	mergePath := func(p pull) string { return fmt.Sprintf("/repos/octo/hello/pulls/%d/merge", p.number) }
	mergeBody := func(p pull) string { return `{"merge_method":"` + p.method + `"}` }
	// judge records a merge's answer: 200, a 405 of a merge done or
	// waiting for its recording, or cut off; never anything else.
	judge := func(what string, p pull, a answer) {
		switch {
		case a.err != nil:
			cutOff[p.number] = true
			kills++
		case a.status == http.StatusOK:
			cutOff[p.number] = false
		case a.status == http.StatusMethodNotAllowed && a.message() == "Pull Request is not mergeable":
			recovered[p.number] = true // merged by the start's push recovery
		case a.status == http.StatusMethodNotAllowed && a.message() == "Merge already in progress":
		default:
			problems = append(problems, fmt.Sprintf("%s #%d: %d %s", what, p.number, a.status, a.body))
		}
	}
	apptest.Step(t, "each merge is killed mid-way and the next process retries it", func(t *testing.T) {
		for i, p := range pulls {
			srv := serveBinary(t, bin, env)
			if i > 0 && cutOff[pulls[i-1].number] {
				prev := pulls[i-1]
				judge("retried merge", prev, srv.call(http.MethodPut, mergePath(prev), token, mergeBody(prev)))
			}
			base := refValue(t, repoDir, "refs/heads/main")
			var wg sync.WaitGroup
			var merged, written answer
			mergeDone := make(chan struct{})
			wg.Go(func() {
				defer close(mergeDone)
				merged = srv.call(http.MethodPut, mergePath(p), token, mergeBody(p))
			})
			wg.Go(func() {
				written = srv.call(http.MethodPut, fmt.Sprintf("/repos/octo/hello/contents/notes/%d.txt", i), token,
					`{"message":"note","content":"bm90ZQo=","branch":"notes"}`)
			})
			// The kill comes at a different moment of the merge each time:
			// most a few milliseconds after the base moved, in the window
			// between the move and the transaction that records it, the
			// others 0 to 400 ms after the request, before or while the
			// merge commit is written.
			if wait := killAfterMove[i%len(killAfterMove)]; wait >= 0 {
				awaitMove(t, repoDir, "refs/heads/main", base, mergeDone)
				time.Sleep(wait)
			} else {
				time.Sleep(time.Duration(i*50%400) * time.Millisecond)
			}
			srv.kill()
			wg.Wait()
			judge("merge", p, merged)
			if written.err == nil && written.status != http.StatusCreated {
				problems = append(problems, fmt.Sprintf("contents write %d: %d %s", i, written.status, written.body))
			}
		}
	})

	// The last start takes every push left over (on PostgreSQL too,
	// where a server does not know the others dead). It serves the steps
	// that follow, so it belongs to the whole test.
	cfg := env.Config
	apptest.WithImmediatePushRecovery(&cfg)
	env = apptest.StartConfig(t, cfg)
	owner = env.Client(token)
	apptest.Git(t, proj.dir, "remote", "set-url", "origin", env.GitURL("octo", "hello", "octo", token))

	apptest.Step(t, "after the last start, the merges cut off before the base moved are tried again", func(t *testing.T) {
		for _, p := range pulls {
			if pr, _, err := owner.PullRequests.Get(ctx, "octo", "hello", p.number); err == nil && pr.GetMerged() && cutOff[p.number] {
				recovered[p.number] = true
			} else if err != nil || !pr.GetMerged() {
				_, resp, err := owner.PullRequests.Merge(ctx, "octo", "hello", p.number, "", &github.PullRequestOptions{MergeMethod: p.method})
				if err != nil {
					problems = append(problems, fmt.Sprintf("merge #%d after the recovery: %d %v", p.number, apptest.ResponseStatus(resp), err))
				}
			}
		}
	})

	// The checks that follow each stand on their own: a failure of one
	// leaves the others worth running.
	t.Run("every answer was a success, a 405 of a merge done or in progress, or cut off", func(t *testing.T) {
		for _, p := range problems {
			t.Error(p)
		}
		t.Logf("%d merges cut off by a kill, %d of them merged by the push recovery", kills, len(recovered))
	})

	// The base's history: one first-parent commit per pull request, each
	// bringing its one file.
	main := proj.remoteRef("refs/heads/main")
	history := strings.Fields(apptest.Git(t, proj.dir, "rev-list", "--first-parent", start+".."+main))
	broughtBy := map[string]string{}
	t.Run("main gained one first-parent commit per pull request, each bringing its file", func(t *testing.T) {
		if len(history) != len(pulls) {
			t.Errorf("main gained %d first-parent commits, want one per pull request (%d): a merge applied twice or lost", len(history), len(pulls))
		}
		for _, c := range history {
			for _, f := range strings.Fields(apptest.Git(t, proj.dir, "diff", "--name-only", c+"^", c)) {
				if broughtBy[f] != "" {
					t.Errorf("%s brought by %s and %s", f, broughtBy[f], c)
				}
				broughtBy[f] = c
			}
		}
	})

	t.Run("each pull request is merged once, by the commit that brought its file", func(t *testing.T) {
		for _, p := range pulls {
			pr, _, err := owner.PullRequests.Get(ctx, "octo", "hello", p.number)
			apptest.Must(t, "get", err)
			if !pr.GetMerged() || pr.GetState() != "closed" || pr.GetMergeCommitSHA() != broughtBy[p.file] || broughtBy[p.file] == "" {
				t.Errorf("#%d (%s, cut off %v): merged %v state %q merge_commit_sha %s; the commit that brought %s: %s", p.number, p.method,
					cutOff[p.number], pr.GetMerged(), pr.GetState(), pr.GetMergeCommitSHA(), p.file, broughtBy[p.file])
			}
			events, _, err := owner.Issues.ListIssueEvents(ctx, "octo", "hello", p.number, &github.ListOptions{PerPage: 100})
			apptest.Must(t, "issue events", err)
			count := map[string]int{}
			for _, e := range events {
				count[e.GetEvent()]++
			}
			if count["merged"] != 1 || count["closed"] != 1 {
				t.Errorf("#%d's history: %d merged and %d closed events, want one each", p.number, count["merged"], count["closed"])
			}
		}
	})

	t.Run("each push, of a merge or a contents write, has one PushEvent", func(t *testing.T) {
		notes := proj.in(t).remoteRef("refs/heads/notes")
		pushed := append(history, strings.Fields(apptest.Git(t, proj.dir, "rev-list", "--first-parent", start+".."+notes))...)
		heads := map[string]int{}
		for page := 1; page <= 3; page++ {
			evs, _, err := owner.Activity.ListRepositoryEvents(ctx, "octo", "hello", &github.ListOptions{PerPage: 100, Page: page})
			apptest.Must(t, "repository events", err)
			for _, e := range evs {
				if e.GetType() != "PushEvent" {
					continue
				}
				payload, err := e.ParsePayload()
				apptest.Must(t, "push payload", err)
				if head := payload.(*github.PushEvent).GetHead(); head != "" {
					heads[head]++
				}
			}
		}
		for _, c := range pushed {
			if heads[c] != 1 {
				t.Errorf("commit %s pushed to main or notes: %d PushEvents, want 1", c, heads[c])
			}
		}
	})

	// A delivery sent again after a kill keeps its GUID.
	t.Run("each pull request has one pull_request closed delivery", func(t *testing.T) {
		var closed map[string]map[string]bool
		testwait.For(t, "a closed delivery for every pull request and no delivery pending", func() error {
			closed = closedDeliveries(rc)
			if len(closed) < len(pulls) {
				return fmt.Errorf("closed deliveries for %d of %d pull requests", len(closed), len(pulls))
			}
			if n := pendingDeliveries(t, env); n != 0 {
				return fmt.Errorf("%d deliveries pending", n)
			}
			return nil
		})
		for _, p := range pulls {
			if n := len(closed[fmt.Sprint(p.number)]); n != 1 {
				t.Errorf("#%d: %d pull_request closed deliveries, want 1", p.number, n)
			}
		}
	})

	t.Run("no push is left unrecorded", func(t *testing.T) {
		var left int
		apptest.Must(t, "count push_log", env.Q().QueryRowContext(ctx, `SELECT COUNT(*) FROM push_log`).Scan(&left))
		if left != 0 {
			t.Errorf("%d pushes left unrecorded", left)
		}
	})
}

// awaitMove returns once the reference ref of the bare repository dir
// has moved from base, or done is closed, or 30 s have passed. It looks
// every millisecond, not at testwait's growing intervals, as a kill
// must come within milliseconds of the move; and it does not fail, as
// a merge that never moves the base is what the caller judges.
func awaitMove(t *testing.T, dir, ref, base string, done <-chan struct{}) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); refValue(t, dir, ref) == base && time.Now().Before(deadline); {
		select {
		case <-done:
			return
		case <-time.After(time.Millisecond):
		}
	}
}

// closedDeliveries returns the GUIDs of the pull_request closed
// deliveries received, by pull request number.
func closedDeliveries(rc *apptest.Receiver) map[string]map[string]bool {
	closed := map[string]map[string]bool{}
	for _, d := range rc.Deliveries() {
		if e, ok := d.Parsed.(*github.PullRequestEvent); ok && e.GetAction() == "closed" {
			n := fmt.Sprint(e.GetNumber())
			if closed[n] == nil {
				closed[n] = map[string]bool{}
			}
			closed[n][d.Header.Get("X-GitHub-Delivery")] = true
		}
	}
	return closed
}

// killAfterMove is how long after the base branch moved each merge of
// TestKilledMergesAreAllOrNothing is killed in turn; -1 for a kill 0 to
// 400 ms after the request.
var killAfterMove = []time.Duration{0, 2 * time.Millisecond, 5 * time.Millisecond, -1, time.Millisecond, 0,
	10 * time.Millisecond, -1, 3 * time.Millisecond}

// refValue reads a reference in a bare repository as git stores it: its
// loose file, else packed-refs; "" when it has neither.
func refValue(t *testing.T, dir, name string) string {
	t.Helper()
	if b, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
		return strings.TrimSpace(string(b))
	}
	packed, _ := os.ReadFile(filepath.Join(dir, "packed-refs"))
	for line := range strings.Lines(string(packed)) {
		if sha, ref, ok := strings.Cut(strings.TrimSpace(line), " "); ok && ref == name {
			return sha
		}
	}
	return ""
}

// pendingDeliveries counts the webhook deliveries not done yet.
func pendingDeliveries(t *testing.T, env *apptest.Env) int {
	t.Helper()
	var n int
	apptest.Must(t, "count pending deliveries", env.Q().QueryRowContext(apptest.Ctx(),
		`SELECT (SELECT COUNT(*) FROM hook_deliveries WHERE state = 'pending') + (SELECT COUNT(*) FROM hook_outboxes)`).Scan(&n))
	return n
}

package repository_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/testwait"
	"forgeapi/internal/webhooks"
)

// loadOps is how many writes each writer of the load makes at most (the
// repository feeds hold 300 events).
const loadOps = 30

// TestBackupUnderLoad backs a forge up while pushes (to a branch, and
// branches made and deleted), contents writes, issues and their webhook
// deliveries go on, restores it into a new data directory and starts a
// server on it. Every write acknowledged before the backup started is
// there, every repository passes git fsck, every push event names
// commits git has and every branch is at a commit its push event names,
// no delivery recorded as sent before the backup is sent again, and every
// delivery the restored server holds is sent.
func TestBackupUnderLoad(t *testing.T) {
	t.Parallel()
	const secret = "s3cret"
	rc := newCountingReceiver(t, secret)
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	octo := env.User("octo")
	token := env.Token(octo, "repo", "admin:repo_hook")
	client := env.Client(token)
	// Idle repositories, copied before the busy ones (ids 30 to 32: the
	// backup copies in the order of the directories' names), so that the
	// writes go on between the database's snapshot and the busy
	// repositories' copies.
	for i := range 29 {
		env.Repo(octo, "idle-"+strconv.Itoa(i))
	}
	repos := []string{"pushed", "written", "tracked"}
	hooks := map[string]int64{}
	for _, name := range repos {
		env.Repo(octo, name)
		hook, _, err := client.Repositories.CreateHook(ctx, "octo", name, &github.Hook{Events: []string{"push", "create", "delete", "issues"},
			Config: &github.HookConfig{URL: github.Ptr(rc.URL), ContentType: github.Ptr("json"), Secret: github.Ptr(secret)}})
		apptest.Must(t, "create hook", err)
		hooks[name] = hook.GetID()
	}
	l := startLoad(t, env, token)
	l.waitOps(t, 3)

	delivered := deliveredDeliveries(t, env, token, hooks)
	started := time.Now()
	db := copyDatabase(t, env)
	dir, summary := backupOf(t, env)
	t.Logf("backup: %+v (%d deliveries recorded as sent before it)", summary, len(delivered))
	l.waitOps(t, l.minOps()+2)
	l.finish()
	env.Stop()
	rc.startPhase(2)

	restored, rsummary := restoreOf(t, env, dir, db)
	t.Logf("restore: %+v", rsummary)
	checkFsck(t, restored)
	dirs := map[string]string{}
	for i, name := range repos {
		dirs[name] = filepath.Join(restored.DataDir, "git", strconv.Itoa(30+i)+".git")
		checkEventsAgreeWithGit(t, restored, token, "octo", name, dirs[name])
	}
	rclient := restored.Client(token)
	for _, w := range l.ackedBefore(started) {
		switch w.kind {
		case "push":
			if out, err := gitDir(dirs["pushed"], "merge-base", "--is-ancestor", w.key, "refs/heads/main"); err != nil {
				t.Errorf("commit %s, pushed at %s before the backup, is not on main after restore: %v %s", w.key, w.at.Format(time.StampMilli), err, out)
			}
		case "file":
			if _, _, _, err := rclient.Repositories.GetContents(ctx, "octo", "written", w.key, nil); err != nil {
				t.Errorf("%s, written at %s before the backup, after restore: %v", w.key, w.at.Format(time.StampMilli), err)
			}
		case "issue":
			n, _ := strconv.Atoi(w.key)
			if _, _, err := rclient.Issues.Get(ctx, "octo", "tracked", n); err != nil {
				t.Errorf("issue #%d, opened at %s before the backup, after restore: %v", n, w.at.Format(time.StampMilli), err)
			}
		}
	}

	testwait.Until(t, "the restored server's deliveries", func() bool {
		return countRows(t, restored, `SELECT count(*) FROM hook_outboxes`) == 0 &&
			countRows(t, restored, `SELECT count(*) FROM hook_deliveries WHERE state <> 'done'`) == 0
	})
	for key := range delivered {
		if n := rc.received(2, key); n > 0 {
			t.Errorf("delivery %s, recorded as sent before the backup, was sent %d times again by the restored server", key, n)
		}
	}
	for key, d := range listDeliveries(t, restored, token, hooks) {
		if d.GetStatusCode() != http.StatusOK || rc.received(0, key) == 0 {
			t.Errorf("delivery %s (%s) on the restored server: status %d, received %d times", key, d.GetEvent(), d.GetStatusCode(), rc.received(0, key))
		}
	}
}

// write is a write of the load, acknowledged at a time: a commit pushed
// to main, a file written, an issue opened.
type write struct {
	kind, key string
	at        time.Time
}

// load runs the writers of TestBackupUnderLoad until finish.
type load struct {
	mu     sync.Mutex
	writes []write
	ops    [3]atomic.Int64
	stop   chan struct{}
	wg     sync.WaitGroup
}

// startLoad starts three writers on env: git pushes to octo/pushed (a
// commit on main each time; a branch made every third push and deleted
// later), contents writes to octo/written and issues of octo/tracked.
func startLoad(t *testing.T, env *apptest.Env, token string) *load {
	l := &load{stop: make(chan struct{})}
	client := env.Client(token)
	wt := apptest.WorkTree(t, map[string]string{"README.md": "load\n"})
	url := env.GitURL("octo", "pushed", "octo", token)
	apptest.Git(t, wt, "push", "-q", url, "HEAD:refs/heads/main")
	_, _, err := client.Repositories.CreateFile(ctx, "octo", "written", "README.md", &github.RepositoryContentFileOptions{
		Message: github.Ptr("first"), Content: []byte("written\n")})
	apptest.Must(t, "contents write", err)
	l.run(t, 0, func(i int) (write, error) {
		if err := os.WriteFile(filepath.Join(wt, "n.txt"), []byte(strconv.Itoa(i)), 0o644); err != nil {
			return write{}, err
		}
		if out, err := apptest.TryGit(t, wt, "add", "n.txt"); err != nil {
			return write{}, fmt.Errorf("git add: %v: %s", err, out)
		}
		if out, err := apptest.TryGit(t, wt, "commit", "-qm", "push "+strconv.Itoa(i)); err != nil {
			return write{}, fmt.Errorf("git commit: %v: %s", err, out)
		}
		sha, _ := apptest.TryGit(t, wt, "rev-parse", "HEAD")
		refs := []string{"HEAD:refs/heads/main"}
		if i%3 == 0 {
			refs = append(refs, "HEAD:refs/heads/b"+strconv.Itoa(i))
		}
		if i%3 == 1 && i > 3 {
			refs = append(refs, ":refs/heads/b"+strconv.Itoa(i-4))
		}
		if out, err := apptest.TryGit(t, wt, append([]string{"push", "-q", url}, refs...)...); err != nil {
			return write{}, fmt.Errorf("push: %v: %s", err, out)
		}
		return write{kind: "push", key: strings.TrimSpace(sha)}, nil
	})
	l.run(t, 1, func(i int) (write, error) {
		path := "f" + strconv.Itoa(i) + ".txt"
		_, _, err := client.Repositories.CreateFile(ctx, "octo", "written", path, &github.RepositoryContentFileOptions{
			Message: github.Ptr("write " + path), Content: []byte(path + "\n")})
		return write{kind: "file", key: path}, err
	})
	l.run(t, 2, func(i int) (write, error) {
		issue, _, err := client.Issues.Create(ctx, "octo", "tracked", github.CreateIssueRequest{Title: "issue " + strconv.Itoa(i)})
		return write{kind: "issue", key: strconv.Itoa(issue.GetNumber())}, err
	})
	return l
}

// run runs one writer: op i from 1 to loadOps, until finish.
func (l *load) run(t *testing.T, writer int, op func(i int) (write, error)) {
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		for i := 1; i <= loadOps; i++ {
			select {
			case <-l.stop:
				return
			default:
			}
			w, err := op(i)
			if err != nil {
				t.Errorf("load: %v", err)
				return
			}
			w.at = time.Now()
			l.mu.Lock()
			l.writes = append(l.writes, w)
			l.mu.Unlock()
			l.ops[writer].Add(1)
		}
	}()
}

// minOps is the fewest writes a writer has made.
func (l *load) minOps() int {
	least := int64(loadOps)
	for i := range l.ops {
		least = min(least, l.ops[i].Load())
	}
	return int(least)
}

// waitOps waits until every writer made n writes (or all of its own).
func (l *load) waitOps(t *testing.T, n int) {
	t.Helper()
	testwait.Until(t, fmt.Sprintf("%d writes of each writer", n), func() bool { return l.minOps() >= min(n, loadOps) })
}

// finish stops the writers and waits for them.
func (l *load) finish() {
	close(l.stop)
	l.wg.Wait()
}

// ackedBefore returns the writes acknowledged before t.
func (l *load) ackedBefore(t time.Time) []write {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []write
	for _, w := range l.writes {
		if w.at.Before(t) {
			out = append(out, w)
		}
	}
	return out
}

// deliveredDeliveries lists the deliveries of the hooks that env
// recorded as sent (200), as "GUID/hook id".
func deliveredDeliveries(t *testing.T, env *apptest.Env, token string, hooks map[string]int64) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for key, d := range listDeliveries(t, env, token, hooks) {
		if d.GetStatusCode() == http.StatusOK {
			out[key] = true
		}
	}
	return out
}

// listDeliveries lists the deliveries of the hooks on env by "GUID/hook id".
func listDeliveries(t *testing.T, env *apptest.Env, token string, hooks map[string]int64) map[string]*github.HookDelivery {
	t.Helper()
	out := map[string]*github.HookDelivery{}
	for repo, id := range hooks {
		for d, err := range env.Client(token).Repositories.ListHookDeliveriesIter(ctx, "octo", repo, id, &github.ListCursorOptions{PerPage: 100}) {
			if err != nil {
				t.Fatalf("deliveries of %s: %v", repo, err)
			}
			out[d.GetGUID()+"/"+strconv.FormatInt(id, 10)] = d
		}
	}
	return out
}

// countingReceiver is a webhook receiver that counts the deliveries it
// gets by "GUID/hook id" and phase (1 before startPhase(2)), answering
// each after a few milliseconds so that some are in flight at any time.
type countingReceiver struct {
	URL   string
	mu    sync.Mutex
	phase int
	got   map[int]map[string]int
}

func newCountingReceiver(t *testing.T, secret string) *countingReceiver {
	rc := &countingReceiver{phase: 1, got: map[int]map[string]int{1: {}, 2: {}}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := github.ValidatePayload(r, []byte(secret))
		if err != nil {
			_, _ = io.Copy(io.Discard, r.Body)
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		apptest.CheckWebhook(t, github.WebHookType(r), body)
		time.Sleep(5 * time.Millisecond) // a receiver's work: deliveries overlap the backup
		rc.mu.Lock()
		rc.got[rc.phase][r.Header.Get("X-GitHub-Delivery")+"/"+r.Header.Get("X-GitHub-Hook-ID")]++
		rc.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	rc.URL = srv.URL
	return rc
}

// startPhase counts the deliveries from now on as phase n.
func (rc *countingReceiver) startPhase(n int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.phase = n
}

// received is how many times the delivery key arrived in phase (0: any).
func (rc *countingReceiver) received(phase int, key string) int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if phase != 0 {
		return rc.got[phase][key]
	}
	return rc.got[1][key] + rc.got[2][key]
}

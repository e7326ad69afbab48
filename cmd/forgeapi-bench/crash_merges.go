package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"forgeapi/internal/app"
	"forgeapi/internal/githost"
)

// crashMergesReport is the JSON output of `crash merges`.
type crashMergesReport struct {
	Scenario string `json:"scenario"`
	Database string `json:"database"`
	Pulls    int    `json:"pull_requests"`
	// Kills are the merges a kill cut off (the client got no answer);
	// RecoveredMerges those of them the push recovery recorded merged
	// (the kill came after the base moved), RetriedMerges those merged
	// by a retry (the kill came before).
	Kills           int `json:"kills"`
	RecoveredMerges int `json:"merges_recorded_by_the_recovery"`
	RetriedMerges   int `json:"merges_merged_by_a_retry"`
	// ServerErrors counts 5xx answers and answers other than 200 and the
	// merge's 405s.
	ServerErrors int `json:"unexpected_answers"`
	// HalfVisible counts pull requests whose state and the base disagree
	// once every merge was recorded: open (or not merged) with their
	// change on the base, or merged without it.
	HalfVisible int `json:"half_visible"`
	// WrongMergeCommit counts merged pull requests whose merge_commit_sha
	// is not the commit that brought their change to the base.
	WrongMergeCommit int `json:"wrong_merge_commit_sha"`
	// AppliedTwice counts the base's first-parent commits beyond one per
	// pull request (a merge whose commits landed twice).
	AppliedTwice int `json:"applied_twice"`
	// HistoryNotOnce counts pull requests whose history has not exactly
	// one merged and one closed event.
	HistoryNotOnce int `json:"history_not_once"`
	// ContentsAcknowledged are contents writes answered 201, ContentsLost
	// those of them whose file is not on their branch.
	ContentsAcknowledged int     `json:"contents_writes_acknowledged"`
	ContentsLost         int     `json:"contents_writes_lost"`
	ElapsedSec           float64 `json:"elapsed_seconds"`
}

// runCrashMerges merges pull requests of bench/widgets (merge, squash
// and rebase in turn), each beside a contents write on another branch,
// on a forgeapi serve process that it kills with SIGKILL during each
// merge (most a few milliseconds after the base branch moved, the window
// before the merge is recorded; the others 0 to 400 ms after the
// request) and restarts; the next process retries the merge cut off, as
// a client would. At the end a server that recovers every push left over
// at once (PostgreSQL's servers wait a grace period) records them, the
// merges cut off before the base moved are tried again, and it counts the
// merges not all or nothing.
func runCrashMerges(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("crash merges", flag.ContinueOnError)
	pulls := fs.Int("n", 20, "pull requests, each merged once with a kill -9 during the merge")
	database := fs.String("database", "", "postgres://... base URL (a schema is created for the run); default SQLite")
	bin := fs.String("bin", "", "forgeapi binary (default: go build it)")
	timeout := fs.Duration("timeout", crashTimeout, "bound of the whole scenario")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *pulls < 1 || *pulls > 200 {
		return errors.New("want -n in 1..200")
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	start := time.Now()
	setup, err := newCrashSetup(ctx, *bin, *database)
	if err != nil {
		return err
	}
	defer setup.close()
	srv, err := setup.startServer()
	if err != nil {
		return err
	}
	defer func() { srv.kill() }()
	run := &mergeRun{setup: setup, client: &http.Client{Timeout: 60 * time.Second},
		rep: crashMergesReport{Scenario: "crash merges", Database: setup.database(), Pulls: *pulls}}
	if err := run.prepare(ctx, srv.url, *pulls); err != nil {
		return err
	}
	for i := range run.pulls {
		if i > 0 {
			next, err := setup.startServer()
			if err != nil {
				return fmt.Errorf("restart after kill: %w", err)
			}
			srv = next
		}
		if err := run.mergeAndKill(ctx, srv, i); err != nil {
			return err
		}
		progress("merge %d of %d: %d cut off so far", i+1, len(run.pulls), run.rep.Kills)
	}
	if err := run.check(ctx); err != nil {
		return err
	}
	run.rep.ElapsedSec = time.Since(start).Seconds()
	return printJSON(run.rep)
}

// mergeRun is the state of a `crash merges` run.
type mergeRun struct {
	setup   *crashSetup
	client  *http.Client
	work    *workTree
	repoDir string // the bare repository of bench/widgets
	start   string // main's commit before the merges
	pulls   []benchPull
	rep     crashMergesReport
}

// benchPull is a pull request of the run: its number, how it is merged,
// the file it adds, and whether its last merge was cut off by a kill.
type benchPull struct {
	number  int
	method  string
	file    string
	cutOff  bool
	written bool // the contents write beside its merge was answered 201
}

// prepare pushes main and one branch per pull request, makes the notes
// branch the contents writes go to, and opens the pull requests.
func (r *mergeRun) prepare(ctx context.Context, base string, n int) error {
	fx := r.setup.fx
	var err error
	if r.work, err = newWorkTree(ctx, filepath.Dir(r.setup.dataDir)); err != nil {
		return err
	}
	if r.start, err = r.work.commit(ctx, 0, 1); err != nil {
		return err
	}
	if err := r.work.push(ctx, base, fx); err != nil {
		return err
	}
	resp, err := call(ctx, r.client, "GET", base+"/repos/"+fx.owner+"/"+fx.repo, fx.token, "")
	if err != nil {
		return err
	}
	var repo struct{ ID int64 }
	if err := json.Unmarshal(resp.body, &repo); err != nil || repo.ID == 0 {
		return fmt.Errorf("read the repository: %d %s", resp.status, resp.body)
	}
	r.repoDir = filepath.Join(r.setup.dataDir, "git", strconv.FormatInt(repo.ID, 10)+".git")
	if err := r.expect(ctx, "create notes", "POST", base+"/repos/"+fx.owner+"/"+fx.repo+"/git/refs",
		`{"ref":"refs/heads/notes","sha":"`+r.start+`"}`, http.StatusCreated, nil); err != nil {
		return err
	}
	for i := range n {
		branch := fmt.Sprintf("pr-%d", i)
		p := benchPull{method: []string{"merge", "squash", "rebase"}[i%3], file: branch + ".txt"}
		if err := r.branch(ctx, base, branch, p.file); err != nil {
			return err
		}
		var pr struct{ Number int }
		if err := r.expect(ctx, "open "+branch, "POST", base+"/repos/"+fx.owner+"/"+fx.repo+"/pulls",
			`{"title":"`+branch+`","head":"`+branch+`","base":"main"}`, http.StatusCreated, &pr); err != nil {
			return err
		}
		p.number = pr.Number
		r.pulls = append(r.pulls, p)
	}
	return nil
}

// branch commits a new file on a new branch from the start and pushes it.
func (r *mergeRun) branch(ctx context.Context, base, branch, file string) error {
	if _, err := r.work.git(ctx, "checkout", "-q", "-b", branch, r.start); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(r.work.dir, file), []byte(branch+"\n"), 0o644); err != nil {
		return err
	}
	if _, err := r.work.git(ctx, "add", file); err != nil {
		return err
	}
	if _, err := r.work.git(ctx, "commit", "-q", "-m", branch); err != nil {
		return err
	}
	fx := r.setup.fx
	u := strings.Replace(base, "://", "://"+fx.owner+":"+fx.token+"@", 1) + "/" + fx.owner + "/" + fx.repo + ".git"
	if _, err := r.work.git(ctx, "push", "-q", u, branch); err != nil {
		return err
	}
	_, err := r.work.git(ctx, "checkout", "-q", "main")
	return err
}

// expect calls the API and decodes the answer into out (when not nil);
// any other status than want is an error.
func (r *mergeRun) expect(ctx context.Context, what, method, url, body string, want int, out any) error {
	resp, err := call(ctx, r.client, method, url, r.setup.fx.token, body)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if resp.status != want {
		return fmt.Errorf("%s: %d %s", what, resp.status, resp.body)
	}
	if out != nil {
		return json.Unmarshal(resp.body, out)
	}
	return nil
}

// killAfterMoveTimes is how long after the base branch moved the merges
// are killed in turn; -1 for a kill 0 to 400 ms after the request.
var killAfterMoveTimes = []time.Duration{0, time.Millisecond, 2 * time.Millisecond, -1, 5 * time.Millisecond, 0,
	10 * time.Millisecond, -1, 3 * time.Millisecond, 20 * time.Millisecond}

// mergeAndKill retries the previous pull request's merge when a kill cut
// it off, then merges pull request i beside a contents write and kills
// the server during the merge.
func (r *mergeRun) mergeAndKill(ctx context.Context, srv *server, i int) error {
	fx := r.setup.fx
	repoURL := srv.url + "/repos/" + fx.owner + "/" + fx.repo
	merge := func(p *benchPull) (response, error) {
		return call(ctx, r.client, "PUT", repoURL+"/pulls/"+strconv.Itoa(p.number)+"/merge", fx.token, `{"merge_method":"`+p.method+`"}`)
	}
	if i > 0 && r.pulls[i-1].cutOff {
		prev := &r.pulls[i-1]
		resp, err := merge(prev)
		if err != nil {
			return fmt.Errorf("retried merge: %w", err)
		}
		r.judge(prev, resp, nil)
	}
	p := &r.pulls[i]
	before := readRef(r.repoDir, "refs/heads/main")
	var wg sync.WaitGroup
	var merged, written response
	var mergeErr, writeErr error
	done := make(chan struct{})
	wg.Go(func() { defer close(done); merged, mergeErr = merge(p) })
	wg.Go(func() {
		written, writeErr = call(ctx, r.client, "PUT", repoURL+"/contents/notes/"+strconv.Itoa(i)+".txt", fx.token,
			`{"message":"note","content":"bm90ZQo=","branch":"notes"}`)
	})
	if wait := killAfterMoveTimes[i%len(killAfterMoveTimes)]; wait >= 0 {
		for deadline := time.Now().Add(30 * time.Second); readRef(r.repoDir, "refs/heads/main") == before && time.Now().Before(deadline); {
			select {
			case <-done:
				deadline = time.Time{}
			case <-time.After(time.Millisecond):
			}
		}
		time.Sleep(wait)
	} else {
		time.Sleep(time.Duration(i*70%400) * time.Millisecond)
	}
	srv.kill()
	wg.Wait()
	r.judge(p, merged, mergeErr)
	switch {
	case writeErr != nil:
	case written.status == http.StatusCreated:
		p.written = true
		r.rep.ContentsAcknowledged++
	default:
		r.rep.ServerErrors++
		progress("contents write %d: %d %s", i, written.status, written.body)
	}
	return nil
}

// judge counts a merge's answer: cut off, 200, or one of the merge's
// 405s; anything else is unexpected.
func (r *mergeRun) judge(p *benchPull, resp response, err error) {
	msg := func() string {
		var e struct{ Message string }
		_ = json.Unmarshal(resp.body, &e)
		return e.Message
	}
	switch {
	case err != nil:
		p.cutOff = true
		r.rep.Kills++
	case resp.status == http.StatusOK:
		if p.cutOff {
			r.rep.RetriedMerges++
		}
		p.cutOff = false
	case resp.status == http.StatusMethodNotAllowed && msg() == "Pull Request is not mergeable":
		r.rep.RecoveredMerges++ // recorded at the server's start
		p.cutOff = false
	case resp.status == http.StatusMethodNotAllowed && msg() == "Merge already in progress":
	default:
		r.rep.ServerErrors++
		progress("merge #%d: %d %s", p.number, resp.status, resp.body)
	}
}

// check starts a server that records every push left over at once,
// merges the pull requests whose merge was cut off before the base moved,
// and counts what is not all or nothing.
func (r *mergeRun) check(ctx context.Context) error {
	m, err := app.Start(ctx, app.Config{Addr: "127.0.0.1:0", DataDir: r.setup.dataDir, DatabaseURL: r.setup.dsn, Logger: discardLogger(),
		PushRecovery: githost.RecoveryConfig{Grace: -1}})
	if err != nil {
		return err
	}
	defer m.Close()
	fx := r.setup.fx
	repoURL := m.URL() + "/repos/" + fx.owner + "/" + fx.repo
	type pullJSON struct {
		Merged         bool   `json:"merged"`
		MergeCommitSHA string `json:"merge_commit_sha"`
	}
	get := func(p benchPull) (pullJSON, error) {
		var pr pullJSON
		return pr, r.expect(ctx, "get #"+strconv.Itoa(p.number), "GET", repoURL+"/pulls/"+strconv.Itoa(p.number), "", http.StatusOK, &pr)
	}
	for i, p := range r.pulls {
		pr, err := get(p)
		if err != nil {
			return err
		}
		if p.cutOff && pr.Merged {
			r.rep.RecoveredMerges++
		} else if !pr.Merged {
			resp, err := call(ctx, r.client, "PUT", repoURL+"/pulls/"+strconv.Itoa(p.number)+"/merge", fx.token, `{"merge_method":"`+p.method+`"}`)
			if err != nil {
				return err
			}
			r.judge(&r.pulls[i], resp, nil)
		}
	}
	u := strings.Replace(m.URL(), "://", "://"+fx.owner+":"+fx.token+"@", 1) + "/" + fx.owner + "/" + fx.repo + ".git"
	if _, err := r.work.git(ctx, "fetch", "-q", u, "+refs/heads/main:refs/remotes/check/main", "+refs/heads/notes:refs/remotes/check/notes"); err != nil {
		return err
	}
	out, err := r.work.git(ctx, "rev-list", "--first-parent", r.start+"..refs/remotes/check/main")
	if err != nil {
		return err
	}
	history := strings.Fields(out)
	r.rep.AppliedTwice = max(len(history)-len(r.pulls), 0)
	broughtBy := map[string]string{}
	for _, c := range history {
		out, err := r.work.git(ctx, "diff", "--name-only", c+"^", c)
		if err != nil {
			return err
		}
		for _, f := range strings.Fields(out) {
			broughtBy[f] = c
		}
	}
	for _, p := range r.pulls {
		pr, err := get(p)
		if err != nil {
			return err
		}
		switch {
		case pr.Merged != (broughtBy[p.file] != ""):
			r.rep.HalfVisible++
		case pr.Merged && pr.MergeCommitSHA != broughtBy[p.file]:
			r.rep.WrongMergeCommit++
		}
		var events []struct{ Event string }
		if err := r.expect(ctx, "history", "GET", repoURL+"/issues/"+strconv.Itoa(p.number)+"/events?per_page=100", "", http.StatusOK, &events); err != nil {
			return err
		}
		count := map[string]int{}
		for _, e := range events {
			count[e.Event]++
		}
		if count["merged"] != 1 || count["closed"] != 1 {
			r.rep.HistoryNotOnce++
		}
	}
	out, err = r.work.git(ctx, "ls-tree", "-r", "--name-only", "refs/remotes/check/notes")
	if err != nil {
		return err
	}
	onNotes := map[string]bool{}
	for _, f := range strings.Fields(out) {
		onNotes[f] = true
	}
	for i, p := range r.pulls {
		if p.written && !onNotes["notes/"+strconv.Itoa(i)+".txt"] {
			r.rep.ContentsLost++
		}
	}
	return nil
}

// readRef reads a reference of a bare repository as git stores it: its
// loose file, else packed-refs; "" when it has neither.
func readRef(dir, name string) string {
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

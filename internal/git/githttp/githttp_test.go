package githttp_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"forgeapi/internal/git/githttp"
)

const zeroSHA = "0000000000000000000000000000000000000000"

func TestCloneEmptyPushCloneShallowFetch(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	rec := &recorder{}
	h.setHooks(nil, rec.postReceive)

	a := newClient(t, "a")
	if _, stderr, err := a.run("clone", h.url, a.dir); err != nil || !strings.Contains(stderr, "empty repository") {
		t.Fatalf("clone empty: %v\n%s", err, stderr)
	}
	first := a.commit("first", map[string]string{"README.md": "hello\n"})
	a.commit("second", map[string]string{"a.txt": "a"})
	third := a.commit("third", map[string]string{"b.txt": "b"})
	a.git("push", "-q", "origin", "main")
	if got := h.serverRef("refs/heads/main"); got != third {
		t.Fatalf("server main = %q, want %q", got, third)
	}
	if calls := rec.take(); len(calls) != 1 || !slices.Equal(calls[0], []githttp.RefUpdate{{Ref: "refs/heads/main", OldSHA: zeroSHA, NewSHA: third}}) {
		t.Errorf("post-receive calls = %v", calls)
	}

	b := newClient(t, "b")
	b.git("clone", "-q", h.url, b.dir)
	if got := b.git("rev-parse", "HEAD"); got != third {
		t.Errorf("clone HEAD = %s, want %s", got, third)
	}
	if got, _ := os.ReadFile(filepath.Join(b.dir, "README.md")); string(got) != "hello\n" {
		t.Errorf("README.md = %q", got)
	}

	s := newClient(t, "shallow")
	s.git("clone", "-q", "--depth", "1", h.url, s.dir)
	if got := s.git("rev-list", "--count", "HEAD"); got != "1" {
		t.Errorf("shallow clone has %s commits, want 1", got)
	}
	if got := s.git("rev-parse", "--is-shallow-repository"); got != "true" {
		t.Errorf("is-shallow = %s", got)
	}
	s.git("fetch", "-q", "--deepen", "1")
	if got := s.git("rev-list", "--count", "HEAD"); got != "2" {
		t.Errorf("deepened clone has %s commits, want 2", got)
	}

	fourth := a.commit("fourth", map[string]string{"c.txt": "c"})
	a.git("push", "-q", "origin", "main")
	b.git("fetch", "-q", "origin")
	if got := b.git("rev-parse", "origin/main"); got != fourth {
		t.Errorf("fetched origin/main = %s, want %s", got, fourth)
	}
	if got := b.git("rev-list", "--count", first+"..origin/main"); got != "3" {
		t.Errorf("fetched %s commits after first, want 3", got)
	}

	h.mu.Lock()
	defer h.mu.Unlock()
	if !slices.Contains(h.protocols, "version=2") {
		t.Errorf("Git-Protocol headers seen: %q, want version=2", h.protocols)
	}
}

func TestProtocolV0Clone(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := newClient(t, "a")
	a.git("init", "-q", a.dir)
	sha := a.commit("first", map[string]string{"x": "x"})
	a.git("-c", "protocol.version=0", "push", "-q", h.url, "main")
	b := newClient(t, "b")
	b.git("-c", "protocol.version=0", "clone", "-q", "--depth", "1", h.url, b.dir)
	if got := b.git("rev-parse", "HEAD"); got != sha {
		t.Errorf("v0 clone HEAD = %s, want %s", got, sha)
	}
}

func TestPushThousandCommitsAndGzipFetch(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	rec := &recorder{}
	h.setHooks(func(ctx context.Context, updates []githttp.RefUpdate, inspect githttp.Inspector) error {
		if !updates[0].IsCreate() {
			return nil
		}
		commits, err := inspect.NewCommits(ctx, updates[0])
		if err != nil {
			return err
		}
		if len(commits) != 1000 {
			return githttp.Refuse("expected 1000 new commits, got %d", len(commits))
		}
		return nil
	}, rec.postReceive)

	a := newClient(t, "a")
	a.git("init", "-q", a.dir)
	head := a.fastImport("main", 0, 1000)
	if _, stderr, err := a.run("push", h.url, "main"); err != nil {
		t.Fatalf("push: %v\n%s", err, stderr)
	}
	if got := h.serverRef("refs/heads/main"); got != head {
		t.Fatalf("server main = %s, want %s", got, head)
	}
	if calls := rec.take(); len(calls) != 1 || calls[0][0].NewSHA != head {
		t.Errorf("post-receive calls = %v", calls)
	}

	// A fetch from a clone with many local commits sends a large, gzipped
	// negotiation request to git-upload-pack.
	b := newClient(t, "b")
	b.git("clone", "-q", h.url, b.dir)
	b.git("checkout", "-q", "-b", "local")
	b.fastImport("local", 5000, 300)
	newer := a.fastImport("main", 1000, 1)
	a.git("push", "-q", h.url, "main")
	b.git("fetch", "-q", "origin")
	if got := b.git("rev-parse", "origin/main"); got != newer {
		t.Errorf("fetched origin/main = %s, want %s", got, newer)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if !slices.Contains(h.encodings, "gzip") {
		t.Errorf("no gzip-encoded request seen: %q", h.encodings)
	}
}

func TestPushHundredRefs(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	rec := &recorder{}
	h.setHooks(nil, rec.postReceive)
	a := newClient(t, "a")
	a.git("init", "-q", a.dir)
	sha := a.commit("first", map[string]string{"x": "x"})
	want := map[string]bool{"refs/heads/main": true}
	for i := range 50 {
		a.git("branch", fmt.Sprintf("feature/b%02d", i))
		want[fmt.Sprintf("refs/heads/feature/b%02d", i)] = true
	}
	for i := range 49 {
		a.git("tag", fmt.Sprintf("v1.%d", i))
		want[fmt.Sprintf("refs/tags/v1.%d", i)] = true
	}
	if _, stderr, err := a.run("push", h.url, "refs/heads/*:refs/heads/*", "refs/tags/*:refs/tags/*"); err != nil {
		t.Fatalf("push: %v\n%s", err, stderr)
	}
	calls := rec.take()
	if len(calls) != 1 || len(calls[0]) != 100 {
		t.Fatalf("post-receive calls = %d, updates %d; want 1 call with 100", len(calls), len(calls[0]))
	}
	branches, tags := 0, 0
	for _, u := range calls[0] {
		if !want[u.Ref] || !u.IsCreate() || u.IsDelete() || u.NewSHA != sha {
			t.Errorf("unexpected update %+v", u)
		}
		if u.IsBranch() {
			branches++
		}
		if u.IsTag() {
			tags++
		}
	}
	if branches != 51 || tags != 49 {
		t.Errorf("branches %d, tags %d", branches, tags)
	}
}

func TestPreReceiveVetoWithInspector(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := newClient(t, "a")
	a.git("init", "-q", a.dir)
	base := a.commit("base", map[string]string{"README.md": "r"})
	a.git("push", "-q", h.url, "main")

	var mu sync.Mutex
	var seenPaths, seenCommits []string
	rec := &recorder{}
	h.setHooks(func(ctx context.Context, updates []githttp.RefUpdate, inspect githttp.Inspector) error {
		paths, err := inspect.ChangedPaths(ctx, updates[0])
		if err != nil {
			return err
		}
		commits, err := inspect.NewCommits(ctx, updates[0])
		if err != nil {
			return err
		}
		mu.Lock()
		seenPaths, seenCommits = paths, commits
		mu.Unlock()
		for _, p := range paths {
			if strings.HasPrefix(p, "agents/") {
				return githttp.Refuse("push declined by ruleset: %s may only be changed through a pull request", p)
			}
		}
		return nil
	}, rec.postReceive)

	a.commit("add agent", map[string]string{"agents/x.md": "# x", "docs/a b.md": "a"})
	head := a.commit("touch readme", map[string]string{"README.md": "r2"})
	_, stderr, err := a.run("push", h.url, "main")
	if err == nil {
		t.Fatal("push with agents/x.md succeeded, want veto")
	}
	if !strings.Contains(stderr, "remote: push declined by ruleset: agents/x.md may only be changed through a pull request") {
		t.Errorf("git stderr lacks the veto message:\n%s", stderr)
	}
	if got := h.serverRef("refs/heads/main"); got != base {
		t.Errorf("server main moved to %s after veto", got)
	}
	if calls := rec.take(); len(calls) != 0 {
		t.Errorf("post-receive ran after veto: %v", calls)
	}
	mu.Lock()
	if want := []string{"README.md", "agents/x.md", "docs/a b.md"}; !slices.Equal(seenPaths, want) {
		t.Errorf("ChangedPaths = %q, want %q", seenPaths, want)
	}
	if len(seenCommits) != 2 || seenCommits[0] != head {
		t.Errorf("NewCommits = %v, want 2 commits starting with %s", seenCommits, head)
	}
	mu.Unlock()

	// An internal error refuses the push without showing its text.
	h.setHooks(func(context.Context, []githttp.RefUpdate, githttp.Inspector) error {
		return errors.New("database password rejected at 10.0.0.7")
	}, nil)
	_, stderr, err = a.run("push", h.url, "HEAD:refs/heads/other")
	if err == nil || strings.Contains(stderr, "10.0.0.7") || !strings.Contains(stderr, "remote: push rejected: internal server error") {
		t.Errorf("push with failing callback: err %v\n%s", err, stderr)
	}
	if got := h.serverRef("refs/heads/other"); got != "" {
		t.Errorf("refs/heads/other created after veto: %s", got)
	}
}

func TestPostReceiveUpdates(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	rec := &recorder{}
	h.setHooks(nil, rec.postReceive)
	a := newClient(t, "a")
	a.git("init", "-q", a.dir)
	c1 := a.commit("one", map[string]string{"x": "1"})
	c2 := a.commit("two", map[string]string{"x": "2"})

	steps := []struct {
		name string
		push []string
		want githttp.RefUpdate
	}{
		{"create", []string{"push", h.url, c1 + ":refs/heads/topic"}, githttp.RefUpdate{Ref: "refs/heads/topic", OldSHA: zeroSHA, NewSHA: c1}},
		{"update", []string{"push", h.url, c2 + ":refs/heads/topic"}, githttp.RefUpdate{Ref: "refs/heads/topic", OldSHA: c1, NewSHA: c2}},
		{"force", []string{"push", "--force", h.url, c1 + ":refs/heads/topic"}, githttp.RefUpdate{Ref: "refs/heads/topic", OldSHA: c2, NewSHA: c1}},
		{"tag", []string{"push", h.url, c2 + ":refs/tags/v1"}, githttp.RefUpdate{Ref: "refs/tags/v1", OldSHA: zeroSHA, NewSHA: c2}},
		{"delete", []string{"push", h.url, ":refs/heads/topic"}, githttp.RefUpdate{Ref: "refs/heads/topic", OldSHA: c1, NewSHA: zeroSHA}},
	}
	for _, step := range steps {
		if _, stderr, err := a.run(step.push...); err != nil {
			t.Fatalf("%s: %v\n%s", step.name, err, stderr)
		}
		// No waiting: PostReceive has finished when git push returns.
		calls := rec.take()
		if len(calls) != 1 || !slices.Equal(calls[0], []githttp.RefUpdate{step.want}) {
			t.Errorf("%s: post-receive calls = %v, want [[%v]]", step.name, calls, step.want)
		}
	}
	if u := steps[4].want; !u.IsDelete() || u.IsCreate() || !u.IsBranch() || u.ShortName() != "topic" {
		t.Errorf("helpers on %+v", u)
	}

	h.setHooks(nil, func(context.Context, []githttp.RefUpdate) error { return errors.New("db down: secret") })
	_, stderr, err := a.run("push", h.url, c2+":refs/heads/after")
	if err != nil || strings.Contains(stderr, "secret") || !strings.Contains(stderr, "remote: warning: the push was accepted") {
		t.Errorf("push with failing post-receive: %v\n%s", err, stderr)
	}
}

func TestRefusalMessageShownByGit(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := newClient(t, "a")
	a.git("init", "-q", a.dir)
	a.commit("one", map[string]string{"x": "1"})
	a.git("push", "-q", h.url, "main")

	h.mu.Lock()
	h.refuse = func(service githttp.Service) (int, string, bool) {
		return http.StatusForbidden, "repository is locked for migration", service == githttp.ServiceReceivePack
	}
	h.mu.Unlock()
	a.commit("two", map[string]string{"x": "2"})
	_, stderr, err := a.run("push", h.url, "main")
	if err == nil || !strings.Contains(stderr, "remote: repository is locked for migration") {
		t.Errorf("push to locked repository: %v\n%s", err, stderr)
	}
	b := newClient(t, "b")
	if _, stderr, err := b.run("clone", "-q", h.url, b.dir); err != nil {
		t.Errorf("clone of locked repository: %v\n%s", err, stderr)
	}
}

func TestConcurrentPushesToOneRepository(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var mu sync.Mutex
	got := map[string]githttp.RefUpdate{}
	h.setHooks(func(ctx context.Context, updates []githttp.RefUpdate, inspect githttp.Inspector) error {
		_, err := inspect.ChangedPaths(ctx, updates[0])
		return err
	}, func(_ context.Context, updates []githttp.RefUpdate) error {
		mu.Lock()
		defer mu.Unlock()
		for _, u := range updates {
			got[u.Ref] = u
		}
		return nil
	})
	const pushers = 8
	want := map[string]string{}
	clients := make([]*client, pushers)
	for i := range clients {
		c := newClient(t, fmt.Sprintf("c%d", i))
		c.git("init", "-q", c.dir)
		ref := fmt.Sprintf("refs/heads/p%d", i)
		want[ref] = c.commit(fmt.Sprintf("pusher %d", i), map[string]string{fmt.Sprintf("f%d", i): "x"})
		clients[i] = c
	}
	var wg sync.WaitGroup
	errs := make(chan error, pushers)
	for i, c := range clients {
		wg.Go(func() {
			if _, stderr, err := c.run("push", h.url, fmt.Sprintf("HEAD:refs/heads/p%d", i)); err != nil {
				errs <- fmt.Errorf("pusher %d: %v\n%s", i, err, stderr)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for ref, sha := range want {
		if u := got[ref]; u.NewSHA != sha || !u.IsCreate() || h.serverRef(ref) != sha {
			t.Errorf("%s: post-receive %+v, server %s, want %s", ref, u, h.serverRef(ref), sha)
		}
	}
}

func TestClientDisconnectDuringPreReceive(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	entered := make(chan struct{})
	ended := make(chan error, 1)
	h.setHooks(func(ctx context.Context, _ []githttp.RefUpdate, _ githttp.Inspector) error {
		close(entered)
		<-ctx.Done()
		ended <- ctx.Err()
		return ctx.Err()
	}, nil)
	a := newClient(t, "a")
	a.git("init", "-q", a.dir)
	a.commit("one", map[string]string{"x": "1"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, _, err := a.runContext(ctx, "push", h.url, "main")
		done <- err
	}()
	<-entered
	cancel() // kills git push; its connection closes
	if err := <-done; err == nil {
		t.Error("killed push succeeded")
	}
	if err := <-ended; !errors.Is(err, context.Canceled) {
		t.Errorf("pre-receive ctx ended with %v", err)
	}
}

func TestUnsupportedRequests(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, tc := range []struct {
		method, path string
		status       int
	}{
		{"GET", "/repo.git/info/refs", http.StatusForbidden},
		{"GET", "/repo.git/info/refs?service=git-upload-archive", http.StatusForbidden},
		{"GET", "/repo.git/HEAD", http.StatusNotFound},
		{"GET", "/repo.git/objects/info/packs", http.StatusNotFound},
		{"POST", "/repo.git/info/refs?service=git-upload-pack", http.StatusMethodNotAllowed},
		{"GET", "/repo.git/git-upload-pack", http.StatusMethodNotAllowed},
		{"GET", "/missing.git/info/refs?service=git-upload-pack", http.StatusNotFound},
		{"POST", "/repo.git/git-upload-pack", http.StatusUnsupportedMediaType}, // git's own answer, no 500
	} {
		req, _ := http.NewRequest(tc.method, h.srv.URL+tc.path, strings.NewReader(""))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s %s = %d, want %d", tc.method, tc.path, resp.StatusCode, tc.status)
		}
	}
	b := newClient(t, "b")
	_, stderr, err := b.run("clone", h.srv.URL+"/missing.git", b.dir)
	if err == nil || !strings.Contains(stderr, "remote: repository not found") {
		t.Errorf("clone of missing repository: %v\n%s", err, stderr)
	}
}

func TestInitIsIdempotentAndHooksIgnoreLocalPushes(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "r.git")
	if err := githttp.Init(dir, "trunk"); err != nil {
		t.Fatal(err)
	}
	if err := githttp.Init(dir, "trunk"); err != nil {
		t.Fatalf("second Init: %v", err)
	}
	if err := githttp.Init(dir, "bad..name"); err == nil {
		t.Error("Init accepted an invalid branch name")
	}
	head, _ := os.ReadFile(filepath.Join(dir, "HEAD"))
	if strings.TrimSpace(string(head)) != "ref: refs/heads/trunk" {
		t.Errorf("HEAD = %q", head)
	}
	for _, hook := range []string{"pre-receive", "post-receive"} {
		info, err := os.Stat(filepath.Join(dir, "hooks", hook))
		if err != nil || info.Mode()&0o111 == 0 {
			t.Errorf("hook %s: %v %v", hook, info, err)
		}
	}
	out, err := exec.Command("git", "--git-dir", dir, "config", "http.receivepack").Output()
	if err != nil || strings.TrimSpace(string(out)) != "true" {
		t.Errorf("http.receivepack = %q, %v", out, err)
	}
	a := newClient(t, "a")
	a.git("init", "-q", a.dir)
	sha := a.commit("one", map[string]string{"x": "1"})
	a.git("push", "-q", dir, "HEAD:refs/heads/trunk") // local push: hooks run without a server
	if err := githttp.SetDefaultBranch(dir, "dev"); err != nil {
		t.Fatal(err)
	}
	if err := githttp.Init(dir, "trunk"); err != nil {
		t.Fatal(err)
	}
	head, _ = os.ReadFile(filepath.Join(dir, "HEAD"))
	if strings.TrimSpace(string(head)) != "ref: refs/heads/dev" {
		t.Errorf("Init on an existing repository changed HEAD to %q", head)
	}
	out, _ = exec.Command("git", "--git-dir", dir, "rev-parse", "refs/heads/trunk").Output()
	if strings.TrimSpace(string(out)) != sha {
		t.Errorf("trunk = %q, want %s", out, sha)
	}
}

// TestGzipEncodedPush sends a receive-pack request whose body is gzipped
// (stock git only gzips fetch negotiation, so the request is built by hand).
func TestGzipEncodedPush(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	rec := &recorder{}
	h.setHooks(nil, rec.postReceive)
	a := newClient(t, "a")
	a.git("init", "-q", a.dir)
	sha := a.fastImport("main", 0, 500)

	pack := exec.Command("git", "pack-objects", "--stdout", "--revs", "-q")
	pack.Dir, pack.Env, pack.Stdin = a.dir, a.env, strings.NewReader("main\n")
	packData, err := pack.Output()
	if err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	zw := gzip.NewWriter(&body)
	command := zeroSHA + " " + sha + " refs/heads/gz\x00report-status\n"
	fmt.Fprintf(zw, "%04x%s0000", len(command)+4, command)
	zw.Write(packData)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, h.url+"/git-receive-pack", &body)
	req.Header.Set("Content-Type", "application/x-git-receive-pack-request")
	req.Header.Set("Content-Encoding", "gzip")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !bytes.Contains(answer, []byte("unpack ok")) || !bytes.Contains(answer, []byte("ok refs/heads/gz")) {
		t.Fatalf("gzip push answered %d: %q", resp.StatusCode, answer)
	}
	if got := h.serverRef("refs/heads/gz"); got != sha {
		t.Errorf("refs/heads/gz = %q, want %s", got, sha)
	}
	if calls := rec.take(); len(calls) != 1 || calls[0][0].NewSHA != sha {
		t.Errorf("post-receive calls = %v", calls)
	}
}

// TestInspectorTreeChanges checks that TreeChanges sees what an update does
// to the reference's files even when it brings no new commit (a force push
// back to an older commit), where ChangedPaths sees nothing.
func TestInspectorTreeChanges(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := newClient(t, "a")
	a.git("init", "-q", a.dir)
	base := a.commit("base", map[string]string{"README.md": "r", "agents/x.md": "v1"})
	a.git("push", "-q", h.url, "main")
	a.commit("edit agent", map[string]string{"agents/x.md": "v2", "docs/new.md": "n"})
	a.git("push", "-q", h.url, "main")

	type seen struct{ changed, tree []string }
	var mu sync.Mutex
	var got []seen
	h.setHooks(func(ctx context.Context, updates []githttp.RefUpdate, inspect githttp.Inspector) error {
		for _, u := range updates {
			changed, err := inspect.ChangedPaths(ctx, u)
			if err != nil {
				return err
			}
			tree, err := inspect.TreeChanges(ctx, u)
			if err != nil {
				return err
			}
			mu.Lock()
			got = append(got, seen{changed, tree})
			mu.Unlock()
		}
		return nil
	}, nil)

	a.git("push", "-q", "--force", h.url, base+":refs/heads/main")
	a.git("push", "-q", h.url, base+":refs/heads/topic")
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 {
		t.Fatalf("hook saw %d updates, want 2", len(got))
	}
	if len(got[0].changed) != 0 || !slices.Equal(got[0].tree, []string{"agents/x.md", "docs/new.md"}) {
		t.Errorf("force push back: ChangedPaths %q, TreeChanges %q", got[0].changed, got[0].tree)
	}
	if len(got[1].changed) != 0 || len(got[1].tree) != 0 {
		t.Errorf("branch creation: ChangedPaths %q, TreeChanges %q", got[1].changed, got[1].tree)
	}
}

// TestRelativeRepositoryDirectory serves a repository named by a path
// relative to the working directory (forgeapi's default data directory is
// relative), hooks and Inspector included.
func TestRelativeRepositoryDirectory(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	// A directory below the working directory, named without "..": a
	// path that climbs to the root would resolve from anywhere.
	dir, err := os.MkdirTemp(".", "relative-repo-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	rel := filepath.Join(dir, "repo.git")
	if err := githttp.Init(rel, "main"); err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	h.repoDir = rel
	h.mu.Unlock()
	var mu sync.Mutex
	var paths []string
	h.setHooks(func(ctx context.Context, updates []githttp.RefUpdate, inspect githttp.Inspector) error {
		p, err := inspect.ChangedPaths(ctx, updates[0])
		mu.Lock()
		paths = p
		mu.Unlock()
		return err
	}, nil)
	a := newClient(t, "a")
	a.git("init", "-q", a.dir)
	head := a.commit("one", map[string]string{"f.txt": "1"})
	a.git("push", "-q", h.url, "main")
	if got := h.serverRef("refs/heads/main"); got != head {
		t.Fatalf("main = %q, want %s", got, head)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(paths, []string{"f.txt"}) {
		t.Errorf("ChangedPaths = %q", paths)
	}
}

// TestMalformedRequestBodies posts bodies that no git client sends: each
// gets a 400 saying what is wrong instead of http-backend's empty 200, and
// a real clone still works afterwards.
func TestMalformedRequestBodies(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	gz := func(s string) string {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		_, _ = zw.Write([]byte(s))
		_ = zw.Close()
		return b.String()
	}
	for _, tc := range []struct {
		service, encoding, body string
		status                  int
	}{
		{"git-upload-pack", "", "", http.StatusBadRequest},
		{"git-upload-pack", "", "garbage", http.StatusBadRequest},
		{"git-receive-pack", "", "PACK", http.StatusBadRequest},
		{"git-upload-pack", "gzip", "garbage", http.StatusBadRequest},
		{"git-receive-pack", "gzip", gz("not a pkt-line"), http.StatusBadRequest},
		{"git-upload-pack", "gzip", gz("00"), http.StatusBadRequest},
		{"git-upload-pack", "", "0000", http.StatusOK},
		{"git-upload-pack", "gzip", gz("0000"), http.StatusOK},
	} {
		req, _ := http.NewRequest("POST", h.url+"/"+tc.service, strings.NewReader(tc.body))
		req.Header.Set("Content-Type", "application/x-"+tc.service+"-request")
		if tc.encoding != "" {
			req.Header.Set("Content-Encoding", tc.encoding)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || tc.status == http.StatusBadRequest && !strings.Contains(string(body), "malformed "+tc.service+" request") {
			t.Errorf("%s %s %q = %d %q, want %d", tc.service, tc.encoding, tc.body, resp.StatusCode, body, tc.status)
		}
	}
	a := newClient(t, "a")
	a.git("clone", "-q", h.url, a.dir)
	a.commit("one", map[string]string{"f": "1"})
	a.git("push", "-q", "origin", "main")
	b := newClient(t, "b")
	b.git("clone", "-q", h.url, b.dir)
}

// TestKeepAliveConnectionServesManyRequests sends info/refs requests one
// after another over one kept-alive connection: each must be served. (A
// read deadline forced on the connection to stop copying a request body
// that had in fact ended failed the connection's background read, which
// cancelled the context of every later request on it: git then got a
// 500 for its push.)
func TestKeepAliveConnectionServesManyRequests(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	transport := &http.Transport{MaxConnsPerHost: 1}
	t.Cleanup(transport.CloseIdleConnections)
	client := &http.Client{Transport: transport}
	for i := range 200 {
		resp, err := client.Get(h.url + "/info/refs?service=git-upload-pack")
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("request %d on the kept-alive connection: status %d", i, resp.StatusCode)
		}
	}
}

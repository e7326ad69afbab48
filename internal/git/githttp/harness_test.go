package githttp_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"forgeapi/internal/git/githttp"
)

// harness is one bare repository served by a githttp.Server behind an
// httptest.Server at {URL}/repo.git, with swappable callbacks.
type harness struct {
	t       testing.TB
	repoDir string
	srv     *httptest.Server
	url     string

	mu        sync.Mutex
	pre       githttp.PreReceiveFunc
	post      githttp.PostReceiveFunc
	refuse    func(service githttp.Service) (status int, message string, refused bool)
	protocols []string // Git-Protocol headers seen
	encodings []string // Content-Encoding headers seen
	inFlight  sync.WaitGroup
}

func newHarness(t testing.TB) *harness {
	t.Helper()
	return newHarnessConfig(t, githttp.Config{})
}

// newHarnessConfig is newHarness with a Server made from cfg.
func newHarnessConfig(t testing.TB, cfg githttp.Config) *harness {
	t.Helper()
	root := t.TempDir()
	h := &harness{t: t, repoDir: filepath.Join(root, "repo.git")}
	if err := githttp.Init(h.repoDir, "main"); err != nil {
		t.Fatal(err)
	}
	server, err := githttp.NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.inFlight.Add(1)
		defer h.inFlight.Done()
		h.serve(server, w, r)
	}))
	h.url = h.srv.URL + "/repo.git"
	t.Cleanup(func() {
		h.srv.Close()
		h.inFlight.Wait()
	})
	return h
}

func (h *harness) serve(server *githttp.Server, w http.ResponseWriter, r *http.Request) {
	sub, ok := strings.CutPrefix(r.URL.Path, "/repo.git")
	if !ok {
		sub, ok = strings.CutPrefix(r.URL.Path, "/missing.git")
		if ok {
			server.ServeGit(w, r, githttp.Request{RepoDir: filepath.Join(h.repoDir, "nope"), SubPath: sub})
			return
		}
		http.NotFound(w, r)
		return
	}
	h.mu.Lock()
	h.protocols = append(h.protocols, r.Header.Get("Git-Protocol"))
	h.encodings = append(h.encodings, r.Header.Get("Content-Encoding"))
	pre, post, refuse, repoDir := h.pre, h.post, h.refuse, h.repoDir
	h.mu.Unlock()
	if refuse != nil {
		if service, err := githttp.RequestedService(r, sub); err == nil {
			if status, msg, refused := refuse(service); refused {
				githttp.WriteRefusal(w, status, msg)
				return
			}
		}
	}
	server.ServeGit(w, r, githttp.Request{
		RepoDir: repoDir, SubPath: sub, RemoteUser: "octo",
		PreReceive: pre, PostReceive: post,
	})
}

// sawRequests reports whether the harness got n requests for the repository.
func (h *harness) sawRequests(n int) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.protocols) >= n
}

func (h *harness) setHooks(pre githttp.PreReceiveFunc, post githttp.PostReceiveFunc) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.pre, h.post = pre, post
}

// serverRef returns the SHA of ref in the served repository, "" if absent.
func (h *harness) serverRef(ref string) string {
	out, err := exec.Command("git", "--git-dir", h.repoDir, "rev-parse", "--verify", "-q", ref).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// client is a git work tree on the test side, isolated from the machine's config.
type client struct {
	t    testing.TB
	dir  string
	env  []string
	tick *int
}

func newClient(t testing.TB, name string) *client {
	t.Helper()
	home := t.TempDir()
	tick := 0
	c := &client{t: t, dir: filepath.Join(home, name), tick: &tick, env: []string{
		"HOME=" + home,
		"PATH=" + os.Getenv("PATH"),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_AUTHOR_NAME=Ada Author", "GIT_AUTHOR_EMAIL=ada@example.com",
		"GIT_COMMITTER_NAME=Carl Committer", "GIT_COMMITTER_EMAIL=carl@example.com",
	}}
	return c
}

// run runs git in the client's work tree (or its parent before it exists).
func (c *client) run(args ...string) (stdout, stderr string, err error) {
	return c.runContext(context.Background(), args...)
}

func (c *client) runContext(ctx context.Context, args ...string) (stdout, stderr string, err error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-c", "init.defaultBranch=main", "-c", "protocol.version=2"}, args...)...)
	// Own process group, so that cancelling also kills git-remote-http,
	// which holds the HTTP connection.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.Dir = c.dir
	if _, statErr := os.Stat(c.dir); statErr != nil {
		cmd.Dir = filepath.Dir(c.dir)
	}
	*c.tick++
	date := fmt.Sprintf("DATE=@%d +0000", 1700000000+*c.tick)
	cmd.Env = append(append([]string{}, c.env...), "GIT_AUTHOR_"+date, "GIT_COMMITTER_"+date)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	return strings.TrimSpace(out.String()), errb.String(), err
}

// git runs git and fails the test on error.
func (c *client) git(args ...string) string {
	c.t.Helper()
	out, stderr, err := c.run(args...)
	if err != nil {
		c.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	return out
}

// commit writes files, commits them and returns the new SHA.
func (c *client) commit(msg string, files map[string]string) string {
	c.t.Helper()
	for name, content := range files {
		p := filepath.Join(c.dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			c.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			c.t.Fatal(err)
		}
	}
	c.git("add", "-A")
	c.git("commit", "-q", "--allow-empty", "-m", msg)
	return c.git("rev-parse", "HEAD")
}

// fastImport appends n commits to branch (each adding one file) quickly.
func (c *client) fastImport(branch string, start, n int) string {
	c.t.Helper()
	var b strings.Builder
	parent, _, _ := c.run("rev-parse", "--verify", "-q", "refs/heads/"+branch)
	for i := range n {
		k := start + i
		msg := fmt.Sprintf("commit %d", k)
		content := fmt.Sprintf("content %d\n", k)
		fmt.Fprintf(&b, "commit refs/heads/%s\n", branch)
		fmt.Fprintf(&b, "committer Carl Committer <carl@example.com> %d +0000\n", 1700000000+k)
		fmt.Fprintf(&b, "data %d\n%s\n", len(msg), msg)
		if i == 0 && parent != "" {
			fmt.Fprintf(&b, "from %s\n", parent)
		}
		fmt.Fprintf(&b, "M 644 inline d%d/f%d.txt\ndata %d\n%s\n", k/100, k, len(content), content)
	}
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir, cmd.Env, cmd.Stdin = c.dir, c.env, strings.NewReader(b.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		c.t.Fatalf("fast-import: %v\n%s", err, out)
	}
	return c.git("rev-parse", "refs/heads/"+branch)
}

// recorder collects PostReceive calls.
type recorder struct {
	mu    sync.Mutex
	calls [][]githttp.RefUpdate
}

func (r *recorder) postReceive(_ context.Context, updates []githttp.RefUpdate) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, updates)
	return nil
}

// take returns and forgets the calls recorded so far.
func (r *recorder) take() [][]githttp.RefUpdate {
	r.mu.Lock()
	defer r.mu.Unlock()
	calls := r.calls
	r.calls = nil
	return calls
}

package githttp_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"forgeapi/internal/git/githttp"
	"forgeapi/internal/testwait"
)

// Environment of the test binary re-executed as a git server (TestMain).
const (
	serveRepoEnv  = "GITHTTP_TEST_SERVE_REPO"
	serveStateEnv = "GITHTTP_TEST_SERVE_STATE"
)

func TestMain(m *testing.M) {
	if repo := os.Getenv(serveRepoEnv); repo != "" {
		serveUntilKilled(repo, os.Getenv(serveStateEnv))
		return
	}
	os.Exit(m.Run())
}

// serveUntilKilled is the re-executed server: it removes what an earlier
// server left, serves repo at {url}/repo.git, and holds every push in
// pre-receive. It reports on stdout: "removed N", "url URL", then
// "waiting" for each push that reached pre-receive.
func serveUntilKilled(repo, state string) {
	var mu sync.Mutex
	say := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Printf(format+"\n", args...)
	}
	server, err := githttp.NewServer(githttp.Config{StateDir: state})
	if err != nil {
		panic(err)
	}
	removed, err := server.RemoveStale()
	if err != nil {
		panic(err)
	}
	say("removed %d", removed)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	say("url http://%s/repo.git", ln.Addr())
	hold := func(ctx context.Context, _ []githttp.RefUpdate, _ githttp.Inspector) error {
		say("waiting")
		<-ctx.Done()
		return ctx.Err()
	}
	panic(http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		server.ServeGit(w, r, githttp.Request{RepoDir: repo, SubPath: strings.TrimPrefix(r.URL.Path, "/repo.git"),
			RemoteUser: "octo", PreReceive: hold})
	})))
}

// testServer is a re-executed server process.
type testServer struct {
	cmd     *exec.Cmd
	lines   chan string
	removed string
	url     string
}

func startTestServer(t *testing.T, repo, state string) *testServer {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), serveRepoEnv+"="+repo, serveStateEnv+"="+state)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &testServer{cmd: cmd, lines: make(chan string, 10)}
	t.Cleanup(s.kill)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
		close(s.lines)
	}()
	s.removed, _ = strings.CutPrefix(s.next(t), "removed ")
	s.url, _ = strings.CutPrefix(s.next(t), "url ")
	return s
}

// next returns the server's next line of output.
func (s *testServer) next(t *testing.T) string {
	t.Helper()
	select {
	case line, ok := <-s.lines:
		if !ok {
			t.Fatal("the test server exited")
		}
		return line
	case <-time.After(60 * time.Second):
		t.Fatal("no word from the test server in 60s")
	}
	return ""
}

// kill kills the server with SIGKILL and reaps it.
func (s *testServer) kill() {
	if s.cmd.ProcessState == nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
	}
}

// processesWithEnv lists the processes (pid and command line) whose
// environment holds entry.
func processesWithEnv(entry string) []string {
	procs, _ := filepath.Glob("/proc/[0-9]*")
	var found []string
	for _, p := range procs {
		env, err := os.ReadFile(filepath.Join(p, "environ"))
		if err != nil || !strings.Contains("\x00"+string(env), "\x00"+entry+"\x00") {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join(p, "cmdline"))
		found = append(found, filepath.Base(p)+" "+strings.ReplaceAll(string(cmdline), "\x00", " "))
	}
	return found
}

// TestServerKilledDuringPreReceive kills the server (SIGKILL) while a
// push waits in pre-receive: within 10s no git process of the push is
// left, and the next server removes the push's quarantine directory.
func TestServerKilledDuringPreReceive(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	repo, state := filepath.Join(root, "repo.git"), filepath.Join(root, "state")
	if err := githttp.Init(repo, "main"); err != nil {
		t.Fatal(err)
	}
	server := startTestServer(t, repo, state)

	a := newClient(t, "a")
	a.git("init", "-q", a.dir)
	a.commit("one", map[string]string{"x": "1"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pushed := make(chan error, 1)
	go func() {
		_, _, err := a.runContext(ctx, "push", server.url, "main")
		pushed <- err
	}()
	if line := server.next(t); line != "waiting" {
		t.Fatalf("test server said %q, want waiting", line)
	}
	quarantines, _ := filepath.Glob(filepath.Join(repo, "objects", "tmp_objdir-incoming-*"))
	if len(quarantines) != 1 {
		t.Fatalf("quarantine directories during pre-receive: %v", quarantines)
	}
	server.kill()

	marker := "GIT_PROJECT_ROOT=" + repo
	testwait.For(t, "the git processes of the push to end after the server was killed", func() error {
		if left := processesWithEnv(marker); len(left) > 0 {
			return fmt.Errorf("alive:\n%s", strings.Join(left, "\n"))
		}
		return nil
	})
	if err := <-pushed; err == nil {
		t.Error("the push succeeded")
	}

	next := startTestServer(t, repo, state)
	if next.removed != "1" {
		t.Errorf("the next server removed %s quarantine directories, want 1", next.removed)
	}
	if left, _ := filepath.Glob(filepath.Join(repo, "objects", "tmp_objdir-incoming-*")); len(left) != 0 {
		t.Errorf("quarantine directories left: %v", left)
	}
	if notes, _ := os.ReadDir(state); len(notes) != 0 {
		t.Errorf("push notes left: %v", notes)
	}
}

// TestHookRejectsWhenServerGone runs the installed pre-receive hook as git
// runs it for a push whose server died before the hook started (the
// server's ends of the hook channel closed with it): the hook rejects the
// push at once instead of waiting for a server that will never answer.
func TestHookRejectsWhenServerGone(t *testing.T) {
	t.Parallel()
	repo := filepath.Join(t.TempDir(), "repo.git")
	if err := githttp.Init(repo, "main"); err != nil {
		t.Fatal(err)
	}
	callR, callW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	verdictR, verdictW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	callR.Close() // the dead server's ends
	verdictW.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	hook := exec.CommandContext(ctx, filepath.Join(repo, "hooks", "pre-receive"))
	hook.Env = append(os.Environ(), "FORGEAPI_HOOK_FDS=3,4")
	hook.ExtraFiles = []*os.File{callW, verdictR}
	hook.Stdin = strings.NewReader(zeroSHA + " " + strings.Repeat("1", 40) + " refs/heads/main\n")
	err = hook.Run()
	callW.Close()
	verdictR.Close()
	if ctx.Err() != nil {
		t.Fatal("the hook still waits 10s after its server is gone")
	}
	if err == nil {
		t.Error("the hook accepted a push its server never checked")
	}
}

package app_test

import (
	"bufio"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"forgeapi/internal/app"
	"forgeapi/internal/apptest"
)

// closedWithin reports whether the server closes conn (after any answer)
// within d, reading and dropping what it sends.
func closedWithin(conn net.Conn, d time.Duration) bool {
	_ = conn.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, conn)
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}

// TestSlowHeaderConnectionClosed sends half a request header and stops:
// the server closes the connection once the header timeout has passed.
func TestSlowHeaderConnectionClosed(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, func(c *app.Config) { c.HeaderTimeout = 500 * time.Millisecond })
	conn, err := net.Dial("tcp", strings.TrimPrefix(env.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "GET /octocat HTTP/1.1\r\nHost: x\r\n"); err != nil {
		t.Fatal(err)
	}
	if !closedWithin(conn, 15*time.Second) {
		t.Error("a connection that stopped in the middle of its header is still open after 15s")
	}
}

// TestStalledBodyConnectionClosed sends part of an authenticated request's
// body and stops: the server drops the request once the idle timeout has
// passed, rather than holding it for as long as the client likes.
func TestStalledBodyConnectionClosed(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, func(c *app.Config) { c.IdleTimeout = 500 * time.Millisecond })
	token := env.Token(env.User("octocat"), "repo")
	conn, err := net.Dial("tcp", strings.TrimPrefix(env.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "POST /user/repos HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+token+
		"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"name\":"); err != nil {
		t.Fatal(err)
	}
	if !closedWithin(conn, 15*time.Second) {
		t.Error("a request whose body stalled is still open after 15s")
	}
}

// TestKeptAliveConnectionOutlastsIdleTimeout: a kept-alive connection
// idle for longer than a short idle timeout is still open, and answers
// the next request, as it must be while clients may still reuse it (Go's
// transport keeps idle connections 90 s; the server keeps them 2 minutes
// at least). Closed at the idle timeout, a request sent as it closes
// fails with EOF, which a client does not retry for a POST or a PATCH.
func TestKeptAliveConnectionOutlastsIdleTimeout(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, func(c *app.Config) { c.IdleTimeout = 300 * time.Millisecond })
	conn, err := net.Dial("tcp", strings.TrimPrefix(env.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	reader := bufio.NewReader(conn)
	for i := range 2 {
		if i > 0 {
			time.Sleep(time.Second) // idle: three idle timeouts
		}
		if _, err := io.WriteString(conn, "GET /meta HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
		resp, err := http.ReadResponse(reader, nil)
		if err != nil {
			t.Fatalf("request %d on the kept-alive connection: %v", i+1, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("request %d: %d", i+1, resp.StatusCode)
		}
	}
}

// TestLargePushAndCloneOutlastIdleTimeout pushes 20 MB of random data with
// git's default configuration through the server, with a 2s idle timeout,
// and clones it back: the timeouts are on stalls, not on the transfer.
func TestLargePushAndCloneOutlastIdleTimeout(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, func(c *app.Config) { c.IdleTimeout, c.HeaderTimeout = 2*time.Second, 2*time.Second })
	owner := env.User("octocat")
	env.Repo(owner, "big")
	token := env.Token(owner, "repo")
	work := apptest.WorkTree(t, nil)
	data := make([]byte, 20<<20)
	if _, err := rand.Read(data); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "big.bin"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	apptest.Git(t, work, "add", "big.bin")
	apptest.Git(t, work, "commit", "-q", "-m", "big")
	start := time.Now()
	apptest.Git(t, work, "push", env.GitURL("octocat", "big", "octocat", token), "main")
	clone := t.TempDir()
	apptest.Git(t, clone, "clone", "-q", env.GitURL("octocat", "big", "octocat", token), ".")
	t.Logf("push and clone of 20 MB took %s", time.Since(start))
	got, err := os.ReadFile(filepath.Join(clone, "big.bin"))
	if err != nil || string(got) != string(data) {
		t.Errorf("cloned big.bin differs (%v)", err)
	}
}

// TestServeRefusesBadLimitFlags checks that serve refuses malformed git
// and timeout limits before it starts.
func TestServeRefusesBadLimitFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ flag, want string }{
		{"--max-push-size=lots", "--max-push-size: want a positive size such as 2GiB"},
		{"--max-push-size=0", "--max-push-size: want a positive size"},
		{"--max-push-size=9000000TiB", "--max-push-size: want a positive size"},
		{"--max-git-processes=0", "--max-git-processes: want a positive number"},
		{"--header-timeout=soon", "--header-timeout: want a positive duration"},
		{"--idle-timeout=-1s", "--idle-timeout: want a positive duration"},
	} {
		data := filepath.Join(t.TempDir(), "data")
		code, _, stderr := cliRun(t, "serve", "--addr", "127.0.0.1:0", "--data", data, tc.flag)
		if code == 0 || !strings.Contains(stderr, tc.want) {
			t.Errorf("serve %s: exit %d, stderr %q, want %q", tc.flag, code, stderr, tc.want)
		}
	}
}

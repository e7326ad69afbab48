package app_test

import (
	"bufio"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/app"
	"forgeapi/internal/apptest"
	"forgeapi/internal/testwait"
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

// Metrics of the API request bodies being read into memory.
const (
	bodiesReading = "forgeapi_http_request_bodies_reading"
	bodyBytes     = "forgeapi_http_request_body_buffer_bytes"
)

// startTrickle opens a connection that posts a repository whose body
// declares 1 MiB and sends a byte every interval (never if interval is 0)
// until the connection fails or the test ends.
func startTrickle(t testing.TB, env *apptest.Env, token string, interval time.Duration) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(env.URL, "http://"))
	apptest.Must(t, "dial", err)
	t.Cleanup(func() { conn.Close() })
	_, err = fmt.Fprintf(conn, "POST /user/repos HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n{\"name\":\"slow", token, 1<<20)
	apptest.Must(t, "send the header", err)
	if interval > 0 {
		go func() {
			tick := time.NewTicker(interval)
			defer tick.Stop()
			for range tick.C {
				if _, err := conn.Write([]byte("w")); err != nil {
					return
				}
			}
		}()
	}
	return conn
}

// TestTricklingBodiesAreDropped opens hundreds of authenticated requests
// that declare a 1 MiB body and send a byte every 100 ms (never idle for
// the idle timeout). While they trickle, their buffers hold what arrived,
// not what they declared, and another client is served; once the body
// timeout has passed, each gets a 408 and its connection is closed.
func TestTricklingBodiesAreDropped(t *testing.T) {
	t.Parallel()
	const n = 300
	// The body timeout must outlast admitting all n: each request is
	// authenticated before its body is read, and under the race detector
	// on a loaded machine 300 admissions took over 5 s, so that the first
	// bodies timed out before the last were read.
	const bodyTimeout = 15 * time.Second
	env := apptest.Start(t, apptest.WithMetrics(), func(c *app.Config) { c.BodyTimeout = bodyTimeout })
	token := env.Token(env.User("octocat"), "repo")
	conns := make([]net.Conn, n)
	for i := range conns {
		conns[i] = startTrickle(t, env, token, 100*time.Millisecond)
	}
	testwait.Until(t, "every trickling body to be read", func() bool { return gauge(t, env, bodiesReading) >= n })
	// Declared, the bodies would take n MiB; each has sent a few bytes.
	if held := gauge(t, env, bodyBytes); held > n*16<<10 {
		t.Errorf("%d trickling bodies hold %.0f bytes of buffers, want at most 16 KiB each", n, held)
	}
	repo, _, err := env.Client(token).Repositories.Create(env.Context(), "", &github.Repository{Name: github.Ptr("fast")})
	if err != nil || repo.GetName() != "fast" {
		t.Fatalf("a client was not served while bodies trickled: %v", err)
	}
	for i, conn := range conns {
		apptest.Must(t, "deadline", conn.SetReadDeadline(time.Now().Add(30*time.Second)))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("trickling request %d: no answer: %v", i, err)
		}
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(body), "Timed out reading the request body.") {
			t.Fatalf("trickling request %d: %d %s, want 408", i, resp.StatusCode, body)
		}
		if !closedWithin(conn, 10*time.Second) {
			t.Fatalf("trickling request %d: the connection is still open after its 408", i)
		}
	}
	testwait.Until(t, "no body to be held", func() bool {
		return gauge(t, env, bodiesReading) == 0 && gauge(t, env, bodyBytes) == 0
	})
}

// TestSlowGitBodyOutlastsBodyTimeout sends the body of a git push (an
// empty command list) in two halves, further apart than the body timeout
// but within the idle timeout: git's bodies are streams, bound by the
// idle timeout alone, and the push is answered by git.
func TestSlowGitBodyOutlastsBodyTimeout(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, func(c *app.Config) { c.BodyTimeout = 200 * time.Millisecond })
	owner := env.User("octocat")
	env.Repo(owner, "hello")
	token := env.Token(owner, "repo")
	conn, err := net.Dial("tcp", strings.TrimPrefix(env.URL, "http://"))
	apptest.Must(t, "dial", err)
	defer conn.Close()
	_, err = fmt.Fprintf(conn, "POST /octocat/hello.git/git-receive-pack HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/x-git-receive-pack-request\r\nContent-Length: 4\r\n\r\n00", token)
	apptest.Must(t, "send the header", err)
	time.Sleep(time.Second) // the client's pause: five body timeouts
	_, err = io.WriteString(conn, "00")
	apptest.Must(t, "send the rest", err)
	apptest.Must(t, "deadline", conn.SetReadDeadline(time.Now().Add(30*time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	apptest.Must(t, "read the answer", err)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/x-git-receive-pack-result" {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("slow push body: %d %s %s, want git's 200", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
}

// BenchmarkTricklingBodies measures the memory a server gives to
// slowBodies requests that declared a 1 MiB body and sent a few bytes of
// it: KiB-per-body is the live heap with them in flight over the heap
// once they are gone (the server and its clients run in this process,
// so it counts both ends of each connection), buffer-KiB-per-body the
// body buffers alone (forgeapi_http_request_body_buffer_bytes).
func BenchmarkTricklingBodies(b *testing.B) {
	const slowBodies = 1000
	env := apptest.Start(b, apptest.WithMetrics())
	token := env.Token(env.User("octocat"), "repo")
	for range b.N {
		conns := make([]net.Conn, slowBodies)
		for i := range conns {
			conns[i] = startTrickle(b, env, token, 0)
		}
		testwait.Until(b, "every body to be read", func() bool { return gauge(b, env, bodiesReading) >= slowBodies })
		held, buffers := liveHeap(), gauge(b, env, bodyBytes)
		for _, conn := range conns {
			conn.Close()
		}
		testwait.Until(b, "the bodies to be dropped", func() bool { return gauge(b, env, bodiesReading) == 0 })
		idle := liveHeap()
		b.ReportMetric((float64(held)-float64(idle))/slowBodies/(1<<10), "KiB-per-body")
		b.ReportMetric(buffers/slowBodies/(1<<10), "buffer-KiB-per-body")
	}
}

// liveHeap is the heap's live bytes after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

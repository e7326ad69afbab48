package githttp_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"forgeapi/internal/git/githttp"
	"forgeapi/internal/testwait"
)

// holdPreReceive makes the harness's next push wait in pre-receive; it
// returns a channel closed once the push waits there, and the function
// that lets it go on.
func holdPreReceive(h *harness) (waiting <-chan struct{}, release func()) {
	entered, gate := make(chan struct{}), make(chan struct{})
	h.setHooks(func(ctx context.Context, _ []githttp.RefUpdate, _ githttp.Inspector) error {
		close(entered)
		select {
		case <-gate:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}, nil)
	return entered, func() { close(gate) }
}

// TestGitProcessBound holds the only git process slot with a push waiting
// in pre-receive: another request waits QueueWait, then gets 503 with
// Retry-After and a message git prints; once the push is done, requests
// are served again.
func TestGitProcessBound(t *testing.T) {
	t.Parallel()
	h := newHarnessConfig(t, githttp.Config{MaxProcesses: 1, QueueWait: 300 * time.Millisecond})
	a := newClient(t, "a")
	a.git("init", "-q", a.dir)
	sha := a.commit("one", map[string]string{"x": "1"})
	waiting, release := holdPreReceive(h)
	pushed := make(chan error, 1)
	go func() {
		_, stderr, err := a.run("push", h.url, "main")
		if err != nil {
			err = &gitError{err, stderr}
		}
		pushed <- err
	}()
	<-waiting

	resp, err := http.Get(h.url + "/info/refs?service=git-upload-pack")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "1" || !strings.Contains(string(body), "busy") {
		t.Errorf("request beyond the bound: %d, Retry-After %q, %q; want 503, 1 and a message", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	b := newClient(t, "b")
	_, stderr, err := b.run("clone", h.url, b.dir)
	if err == nil || !strings.Contains(stderr, "remote: the server is busy serving other git requests") {
		t.Errorf("clone beyond the bound: %v\n%s", err, stderr)
	}

	release()
	if err := <-pushed; err != nil {
		t.Fatalf("held push: %v", err)
	}
	b.git("clone", "-q", h.url, b.dir)
	if got := b.git("rev-parse", "HEAD"); got != sha {
		t.Errorf("clone after the push: HEAD %s, want %s", got, sha)
	}
}

type gitError struct {
	err    error
	stderr string
}

func (e *gitError) Error() string { return e.err.Error() + "\n" + e.stderr }

// TestSlowFetchBodyHoldsNoGitProcess sends the start of a fetch
// negotiation and stalls, with a bound of one git process: the stalled
// request holds no git process, so a clone meanwhile is served.
func TestSlowFetchBodyHoldsNoGitProcess(t *testing.T) {
	t.Parallel()
	h := newHarnessConfig(t, githttp.Config{MaxProcesses: 1, QueueWait: 300 * time.Millisecond})
	a := newClient(t, "a")
	a.git("init", "-q", a.dir)
	a.commit("one", map[string]string{"x": "1"})
	a.git("push", "-q", h.url, "main")

	conn, err := net.Dial("tcp", strings.TrimPrefix(h.srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	command := "0014command=ls-refs\n0001" + strings.Repeat("0009peel\n", 100) // 600+ bytes: past the body check
	fmt.Fprintf(conn, "POST /repo.git/git-upload-pack HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-git-upload-pack-request\r\n"+
		"Git-Protocol: version=2\r\nContent-Length: 100000\r\n\r\n%s", command)
	// The stalled request is in the server once the harness counted its protocol header.
	testwait.Until(t, "the stalled request to reach the server", func() bool { return h.sawRequests(3) })

	b := newClient(t, "b")
	if _, stderr, err := b.run("clone", h.url, b.dir); err != nil {
		t.Errorf("clone beside a stalled fetch: %v\n%s", err, stderr)
	}
}

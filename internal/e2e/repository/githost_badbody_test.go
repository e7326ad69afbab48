package repository_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"testing"
	"time"

	"forgeapi/internal/app"
	"forgeapi/internal/apptest"
)

// logBuffer collects the server's log; safe for its goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startLogged starts a server whose warnings (net/http's recovered
// panics among them) go to the returned buffer, with a user, a
// repository octocat/hello and a token that may push to it.
func startLogged(t *testing.T) (env *apptest.Env, token string, logs *logBuffer) {
	t.Helper()
	logs = &logBuffer{}
	env = apptest.Start(t, func(c *app.Config) {
		c.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	})
	owner := env.User("octocat")
	env.Repo(owner, "hello")
	return env, env.Token(owner, "repo"), logs
}

// gitPost is one POST to a git service of octocat/hello.
type gitPost struct {
	service, contentType string
	body                 []byte
	chunked              bool // sent without a length
}

func (p gitPost) String() string {
	return fmt.Sprintf("POST %s (%s, %d bytes, chunked %v)", p.service, p.contentType, len(p.body), p.chunked)
}

// send sends p with client and returns the answer, its text, and whether
// the request went over a connection used before.
func (p gitPost) send(t *testing.T, env *apptest.Env, token string, client *http.Client) (resp *http.Response, text string, reused bool) {
	t.Helper()
	var body io.Reader = bytes.NewReader(p.body)
	if p.chunked {
		body = io.MultiReader(body) // no length known: sent chunked
	}
	req, err := http.NewRequest("POST", env.URL+"/octocat/hello/"+p.service, body)
	apptest.Must(t, "request", err)
	req.SetBasicAuth("octocat", token)
	req.Header.Set("Content-Type", p.contentType)
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused },
	}))
	resp, err = client.Do(req)
	if err != nil {
		t.Fatalf("%v: %v", p, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	apptest.Must(t, "read answer", err)
	return resp, string(b), reused
}

// raw writes p's request by hand on a new connection and returns the
// connection's reader; the connection closes when the test ends.
func (p gitPost) raw(t *testing.T, env *apptest.Env, token string) *bufio.Reader {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(env.URL, "http://"))
	apptest.Must(t, "dial", err)
	t.Cleanup(func() { conn.Close() })
	apptest.Must(t, "deadline", conn.SetDeadline(time.Now().Add(30*time.Second)))
	req, err := http.NewRequest("POST", env.URL+"/octocat/hello/"+p.service, bytes.NewReader(p.body))
	apptest.Must(t, "request", err)
	req.SetBasicAuth("octocat", token)
	req.Header.Set("Content-Type", p.contentType)
	go func() { _ = req.Write(conn) }() // the server may stop reading: the write ends with the connection
	return bufio.NewReader(conn)
}

// garbagePack is a receive-pack request that updates main with a pack
// whose header git refuses: git answers 200 with "unpack protocol error"
// and leaves the rest of the body unread.
func garbagePack(size int) []byte {
	cmd := strings.Repeat("0", 40) + " " + strings.Repeat("1", 40) + " refs/heads/main\x00 report-status\n"
	head := fmt.Sprintf("%04x%s0000PACK", 4+len(cmd), cmd)
	return append([]byte(head), bytes.Repeat([]byte("x"), size-len(head))...)
}

// TestWrongContentTypeKeepsConnection posts git requests with
// Content-Type text/plain and bodies git leaves unread (it answers 415
// before reading) on one kept-alive connection: each gets git's 415
// text, nothing panics, and the connection serves the next request; a
// body with more than 256 KiB left is answered "Connection: close".
// Large unread bodies once panicked the server with "invalid concurrent
// Body.Read call" and dropped the connection.
func TestWrongContentTypeKeepsConnection(t *testing.T) {
	t.Parallel()
	env, token, logs := startLogged(t)
	transport := &http.Transport{MaxIdleConnsPerHost: 1}
	t.Cleanup(transport.CloseIdleConnections)
	client := &http.Client{Transport: transport}
	send := func(p gitPost) *http.Response {
		t.Helper()
		resp, text, reused := p.send(t, env, token, client)
		want := "Expected POST with Content-Type 'application/x-" + p.service + "-request', but received 'text/plain' instead.\n"
		if resp.StatusCode != http.StatusUnsupportedMediaType || text != want || resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" {
			t.Errorf("%v = %d %s %q, want 415 %q", p, resp.StatusCode, resp.Header.Get("Content-Type"), text, want)
		}
		if !reused && !strings.HasSuffix(string(p.body), "first") {
			t.Errorf("%v did not reuse the kept-alive connection", p)
		}
		return resp
	}
	plain := func(service string, size int, chunked bool) gitPost {
		return gitPost{service: service, contentType: "text/plain", body: bytes.Repeat([]byte("x"), size), chunked: chunked}
	}
	send(gitPost{service: "git-receive-pack", contentType: "text/plain", body: []byte("first")})
	for _, p := range []gitPost{
		plain("git-receive-pack", 70<<10, false),
		plain("git-receive-pack", 70<<10, false),
		plain("git-receive-pack", 200<<10, false),
		plain("git-receive-pack", 70<<10, true),
		plain("git-upload-pack", 70<<10, false),
		plain("git-upload-pack", 150<<10, true),
	} {
		if resp := send(p); resp.Close {
			t.Errorf("%v: the server closes the connection", p)
		}
	}
	for _, p := range []gitPost{plain("git-receive-pack", 2<<20, false), plain("git-receive-pack", 2<<20, true)} {
		p.body = append(p.body, "first"...) // the connection before was closed
		if resp := send(p); !resp.Close {
			t.Errorf("%v: no Connection: close for a rest over 256 KiB", p)
		}
	}
	if strings.Contains(logs.String(), "panic") {
		t.Fatalf("the server panicked:\n%s", logs.String())
	}
}

// TestRefusedPackLeavesConnectionUsable posts receive-pack requests whose
// pack git refuses after its 200 (full duplex: git reads the body while
// it answers) without reading the rest: with up to 256 KiB left the
// connection serves the next request, with more it closes after the
// answer, and what is left of the body is never read as a request.
func TestRefusedPackLeavesConnectionUsable(t *testing.T) {
	t.Parallel()
	env, token, logs := startLogged(t)
	transport := &http.Transport{MaxIdleConnsPerHost: 1}
	t.Cleanup(transport.CloseIdleConnections)
	client := &http.Client{Transport: transport}
	const refused = "0035unpack protocol error (pack version unsupported)\n0026ng refs/heads/main unpacker error\n0000"
	for i, size := range []int{230 << 10, 230 << 10, 100 << 10} {
		p := gitPost{service: "git-receive-pack", contentType: "application/x-git-receive-pack-request", body: garbagePack(size)}
		resp, text, reused := p.send(t, env, token, client)
		if resp.StatusCode != http.StatusOK || text != refused {
			t.Fatalf("%v = %d %q, want 200 %q", p, resp.StatusCode, text, refused)
		}
		if i > 0 && !reused {
			t.Errorf("%v did not reuse the kept-alive connection", p)
		}
	}

	p := gitPost{service: "git-receive-pack", contentType: "application/x-git-receive-pack-request", body: garbagePack(4 << 20)}
	conn := p.raw(t, env, token)
	resp, err := http.ReadResponse(conn, nil)
	apptest.Must(t, "read answer", err)
	text, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK || string(text) != refused {
		t.Fatalf("%v = %d %q %v, want 200 %q", p, resp.StatusCode, text, err, refused)
	}
	if next, err := http.ReadResponse(conn, nil); err == nil {
		t.Errorf("%v: the rest of the body was read as a request, answered %s", p, next.Status)
	} else if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("%v: after the answer: %v, want the connection closed", p, err)
	}
	if strings.Contains(logs.String(), "panic") {
		t.Fatalf("the server panicked:\n%s", logs.String())
	}
}

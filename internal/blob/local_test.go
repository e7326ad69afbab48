package blob_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"forgeapi/internal/blob"
)

// testClock is a settable clock for URL expiry.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func newTestClock() *testClock {
	return &testClock{now: time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)}
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

var testSigningKey = bytes.Repeat([]byte("k"), blob.MinSigningKeyLength)

func newLocal(t *testing.T, clock *testClock, baseURL string) *blob.Local {
	t.Helper()
	if clock == nil {
		clock = newTestClock()
	}
	if baseURL == "" {
		baseURL = "https://forge.example.com"
	}
	l, err := blob.NewLocal(blob.LocalConfig{
		Dir:        t.TempDir(),
		BaseURL:    baseURL,
		SigningKey: testSigningKey,
		Now:        clock.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func readAll(t *testing.T, s blob.Store, key string) []byte {
	t.Helper()
	rc, err := s.Open(context.Background(), key)
	if err != nil {
		t.Fatalf("Open(%q): %v", key, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestValidateKey(t *testing.T) {
	t.Parallel()
	valid := []string{"a", "migrations/42/archive.tar.gz", "A-b_c.d/e", strings.Repeat("x", blob.MaxKeyLength)}
	invalid := []string{
		"", "/abs", "a//b", "a/", "../x", "a/../b", "..", ".", ".tmp/x", "a/.hidden",
		`a\b`, "a b", "a?b", "a%2fb", "é", "a\x00b", strings.Repeat("x", blob.MaxKeyLength+1),
	}
	for _, key := range valid {
		if err := blob.ValidateKey(key); err != nil {
			t.Errorf("ValidateKey(%q) = %v, want nil", key, err)
		}
	}
	for _, key := range invalid {
		if err := blob.ValidateKey(key); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("ValidateKey(%q) = %v, want ErrInvalidKey", key, err)
		}
	}
}

func TestNewLocalRefusesWeakConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, cfg := range map[string]blob.LocalConfig{
		"no dir":        {BaseURL: "https://x", SigningKey: testSigningKey},
		"short key":     {Dir: dir, BaseURL: "https://x", SigningKey: []byte("short")},
		"relative base": {Dir: dir, BaseURL: "/api", SigningKey: testSigningKey},
		"ftp base":      {Dir: dir, BaseURL: "ftp://x", SigningKey: testSigningKey},
	} {
		if _, err := blob.NewLocal(cfg); err == nil {
			t.Errorf("%s: NewLocal succeeded, want error", name)
		}
	}
}

func TestLocalPutOpenDelete(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := newLocal(t, nil, "")
	data := make([]byte, 3<<20+17)
	rand.Read(data)

	size, err := l.Put(ctx, "migrations/1/a.tar.gz", bytes.NewReader(data))
	if err != nil || size != int64(len(data)) {
		t.Fatalf("Put = %d, %v; want %d, nil", size, err, len(data))
	}
	if got := readAll(t, l, "migrations/1/a.tar.gz"); !bytes.Equal(got, data) {
		t.Fatal("Open returned different bytes than Put stored")
	}
	if _, err := l.Put(ctx, "migrations/1/a.tar.gz", strings.NewReader("v2")); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, l, "migrations/1/a.tar.gz"); string(got) != "v2" {
		t.Fatalf("after replacing Put, Open = %q, want v2", got)
	}
	for range 2 { // Delete is idempotent.
		if err := l.Delete(ctx, "migrations/1/a.tar.gz"); err != nil {
			t.Fatalf("Delete: %v", err)
		}
	}
	if _, err := l.Open(ctx, "migrations/1/a.tar.gz"); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("Open after Delete = %v, want ErrNotFound", err)
	}
	if _, err := l.Open(ctx, "migrations"); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("Open of a directory = %v, want ErrNotFound", err)
	}
}

func TestLocalRejectsInvalidKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := newLocal(t, nil, "")
	outside := filepath.Join(filepath.Dir(l.Dir()), "escaped")
	for _, key := range []string{"../escaped", "/etc/passwd", "a/../../escaped", ".tmp/x", ""} {
		if _, err := l.Put(ctx, key, strings.NewReader("x")); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("Put(%q) = %v, want ErrInvalidKey", key, err)
		}
		if _, err := l.Open(ctx, key); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("Open(%q) = %v, want ErrInvalidKey", key, err)
		}
		if err := l.Delete(ctx, key); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("Delete(%q) = %v, want ErrInvalidKey", key, err)
		}
		if _, err := l.URL(ctx, key, time.Hour); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("URL(%q) = %v, want ErrInvalidKey", key, err)
		}
	}
	if _, err := os.Stat(outside); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a file was written outside the store: %v", err)
	}
}

// gatedReader yields first, signals reached, waits for release, then fails
// with failure (or ends if failure is nil).
type gatedReader struct {
	first   []byte
	reached chan struct{}
	release chan struct{}
	failure error
	state   int
}

func (g *gatedReader) Read(p []byte) (int, error) {
	switch g.state {
	case 0:
		g.state = 1
		return copy(p, g.first), nil
	case 1:
		g.state = 2
		close(g.reached)
		<-g.release
	}
	if g.failure != nil {
		return 0, g.failure
	}
	return 0, io.EOF
}

func TestLocalPutIsAtomic(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := newLocal(t, nil, "")
	const key = "m/archive.tar.gz"
	if _, err := l.Put(ctx, key, strings.NewReader("old")); err != nil {
		t.Fatal(err)
	}

	for _, failure := range []error{nil, errors.New("source broke")} {
		reader := &gatedReader{first: []byte("new partial"), reached: make(chan struct{}), release: make(chan struct{}), failure: failure}
		done := make(chan error, 1)
		go func() {
			_, err := l.Put(ctx, key, reader)
			done <- err
		}()
		<-reader.reached
		if got := readAll(t, l, key); string(got) != "old" {
			t.Fatalf("during Put, Open = %q, want the old object", got)
		}
		close(reader.release)
		err := <-done
		want := "old"
		if failure == nil {
			want = "new partial"
		}
		if (err != nil) != (failure != nil) {
			t.Fatalf("Put = %v, want error %v", err, failure)
		}
		if got := readAll(t, l, key); string(got) != want {
			t.Fatalf("after Put (failure %v), Open = %q, want %q", failure, got, want)
		}
		// Reset for the failing round.
		if _, err := l.Put(ctx, key, strings.NewReader("old")); err != nil {
			t.Fatal(err)
		}
	}
	leftovers, err := os.ReadDir(filepath.Join(l.Dir(), ".tmp"))
	if err != nil || len(leftovers) != 0 {
		t.Fatalf("temporary files left behind: %v, %v", leftovers, err)
	}
}

func TestLocalPutStopsOnCanceledContext(t *testing.T) {
	t.Parallel()
	l := newLocal(t, nil, "")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := l.Put(ctx, "k", strings.NewReader("data")); !errors.Is(err, context.Canceled) {
		t.Fatalf("Put = %v, want context.Canceled", err)
	}
	if _, err := l.Open(context.Background(), "k"); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("Open = %v, want ErrNotFound", err)
	}
}

func TestLocalCheck(t *testing.T) {
	t.Parallel()
	l := newLocal(t, nil, "")
	if err := l.Check(context.Background()); err != nil {
		t.Fatalf("Check = %v", err)
	}
	// A file where the temp directory should be makes the store unusable,
	// even for root, who ignores permission bits.
	if err := os.RemoveAll(filepath.Join(l.Dir(), ".tmp")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(l.Dir(), ".tmp"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := l.Check(context.Background()); !errors.Is(err, blob.ErrUnavailable) {
		t.Fatalf("Check = %v, want ErrUnavailable", err)
	}
}

// startLocalServer returns a Local store whose base URL is a test server
// serving its Handler at blob.URLPathPrefix.
func startLocalServer(t *testing.T, clock *testClock) *blob.Local {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	l := newLocal(t, clock, "http://"+srv.Listener.Addr().String())
	mux := http.NewServeMux()
	mux.Handle(blob.URLPathPrefix, l.Handler())
	srv.Config.Handler = mux
	srv.Start()
	t.Cleanup(srv.Close)
	return l
}

type httpResult struct {
	status  int
	header  http.Header
	body    []byte
	message string
}

func get(t *testing.T, method, rawURL string) httpResult {
	t.Helper()
	req, err := http.NewRequest(method, rawURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	result := httpResult{status: resp.StatusCode, header: resp.Header, body: body}
	if resp.StatusCode >= 400 {
		var e struct{ Message string }
		if err := json.Unmarshal(body, &e); err != nil || e.Message == "" {
			t.Fatalf("error body %q is not JSON with a message: %v", body, err)
		}
		result.message = e.Message
	}
	return result
}

func TestLocalSignedURL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := newTestClock()
	l := startLocalServer(t, clock)
	data := make([]byte, 1<<20)
	rand.Read(data)
	if _, err := l.Put(ctx, "migrations/7/archive.tar.gz", bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	signed, err := l.URL(ctx, "migrations/7/archive.tar.gz", 10*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(signed, "/_blobs/migrations/7/archive.tar.gz?") {
		t.Fatalf("URL %s does not point at the handler", signed)
	}

	res := get(t, http.MethodGet, signed)
	if res.status != http.StatusOK || !bytes.Equal(res.body, data) {
		t.Fatalf("GET signed URL: status %d, %d bytes; want 200 and the object", res.status, len(res.body))
	}
	if ct := res.header.Get("Content-Type"); ct != "application/gzip" {
		t.Errorf("Content-Type = %q, want application/gzip", ct)
	}
	if head := get(t, http.MethodHead, signed); head.status != http.StatusOK || head.header.Get("Content-Length") != "1048576" {
		t.Errorf("HEAD: status %d, Content-Length %q", head.status, head.header.Get("Content-Length"))
	}
	if post := get(t, http.MethodPost, signed); post.status != http.StatusMethodNotAllowed {
		t.Errorf("POST: status %d, want 405", post.status)
	}

	clock.Advance(10 * time.Minute) // the last valid second
	if res := get(t, http.MethodGet, signed); res.status != http.StatusOK {
		t.Fatalf("GET at expiry: status %d, want 200", res.status)
	}
	clock.Advance(time.Second)
	if res := get(t, http.MethodGet, signed); res.status != http.StatusForbidden || !strings.Contains(res.message, "expired") {
		t.Fatalf("GET after expiry: %d %q, want 403 expired", res.status, res.message)
	}
}

func TestLocalSignedURLRefusesTampering(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := startLocalServer(t, nil)
	for _, key := range []string{"a.tar.gz", "b.tar.gz"} {
		if _, err := l.Put(ctx, key, strings.NewReader(key)); err != nil {
			t.Fatal(err)
		}
	}
	signed, err := l.URL(ctx, "a.tar.gz", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(signed)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	signature, expires := q.Get("signature"), q.Get("expires")
	flipped := "0"
	if signature[0] == '0' {
		flipped = "1"
	}
	tamper := map[string]func(u *url.URL, q url.Values){
		"other key":          func(u *url.URL, q url.Values) { u.Path = "/_blobs/b.tar.gz" },
		"changed signature":  func(u *url.URL, q url.Values) { q.Set("signature", flipped+signature[1:]) },
		"truncated":          func(u *url.URL, q url.Values) { q.Set("signature", signature[:32]) },
		"not hex":            func(u *url.URL, q url.Values) { q.Set("signature", "zz"+signature[2:]) },
		"no signature":       func(u *url.URL, q url.Values) { q.Del("signature") },
		"later expiry":       func(u *url.URL, q url.Values) { q.Set("expires", expires+"0") },
		"no expiry":          func(u *url.URL, q url.Values) { q.Del("expires") },
		"non-numeric expiry": func(u *url.URL, q url.Values) { q.Set("expires", "soon") },
	}
	for name, change := range tamper {
		changed := *u
		changedQuery := url.Values{"signature": {signature}, "expires": {expires}}
		change(&changed, changedQuery)
		changed.RawQuery = changedQuery.Encode()
		if res := get(t, http.MethodGet, changed.String()); res.status != http.StatusForbidden {
			t.Errorf("%s: status %d, want 403", name, res.status)
		}
	}
	if err := l.Delete(ctx, "a.tar.gz"); err != nil {
		t.Fatal(err)
	}
	if res := get(t, http.MethodGet, signed); res.status != http.StatusNotFound {
		t.Errorf("deleted object: status %d, want 404", res.status)
	}
	bad := *u
	bad.Path = "/_blobs/../a.tar.gz"
	bad.RawPath = "/_blobs/%2E%2E/a.tar.gz"
	if res := get(t, http.MethodGet, bad.String()); res.status != http.StatusNotFound {
		t.Errorf("invalid key: status %d, want 404", res.status)
	}
}

func TestLocalURLValidatesTTL(t *testing.T) {
	t.Parallel()
	l := newLocal(t, nil, "")
	for _, ttl := range []time.Duration{0, -time.Second, blob.MaxURLTTL + time.Second} {
		if _, err := l.URL(context.Background(), "k", ttl); err == nil {
			t.Errorf("URL with ttl %v succeeded, want error", ttl)
		}
	}
}

// TestLocalPutStreams is not parallel: it measures allocations of the whole
// process, which parallel tests would disturb.
func TestLocalPutStreams(t *testing.T) {
	l := newLocal(t, nil, "")
	const size = 64 << 20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	n, err := l.Put(context.Background(), "big", streamOnly{pseudoRandom(3, size)})
	runtime.ReadMemStats(&after)
	if err != nil || n != size {
		t.Fatalf("Put = %d, %v", n, err)
	}
	if allocated := after.TotalAlloc - before.TotalAlloc; allocated > size/8 {
		t.Fatalf("Put of %d bytes allocated %d bytes; it should stream", size, allocated)
	}
}

package githttp_test

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"forgeapi/internal/git/githttp"
)

// writeRandomFile writes size bytes of incompressible data to dir/name.
func writeRandomFile(t testing.TB, dir, name string, size int) {
	t.Helper()
	data := make([]byte, size)
	if _, err := rand.Read(data); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestLargePushesAndClones pushes commits holding 5 MB and 50 MB of
// random data with git's default configuration (http.postBuffer of 1 MiB,
// so git sends the pack with chunked transfer encoding) and clones them
// back.
func TestLargePushesAndClones(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := newClient(t, "a")
	a.git("init", "-q", a.dir)
	for _, size := range []int{5 << 20, 50 << 20} {
		writeRandomFile(t, a.dir, "blob.bin", size)
		a.git("add", "blob.bin")
		a.git("commit", "-q", "-m", "blob")
		sha := a.git("rev-parse", "HEAD")
		start := time.Now()
		if _, stderr, err := a.run("push", h.url, "main"); err != nil {
			t.Fatalf("push of %d bytes: %v\n%s", size, err, stderr)
		}
		if got := h.serverRef("refs/heads/main"); got != sha {
			t.Fatalf("after the push of %d bytes main = %q, want %s", size, got, sha)
		}
		pushed := time.Since(start)
		b := newClient(t, "b")
		start = time.Now()
		b.git("clone", "-q", h.url, b.dir)
		t.Logf("%d MB: push %s, clone %s", size>>20, pushed.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
		if got := b.git("rev-parse", "HEAD:blob.bin"); got != a.git("rev-parse", "HEAD:blob.bin") {
			t.Fatalf("cloned blob %s differs", got)
		}
	}
}

// TestPushOverLimitRefused pushes more than a small MaxPushSize: git
// refuses it and the client sees the limit.
func TestPushOverLimitRefused(t *testing.T) {
	t.Parallel()
	h := newHarnessConfig(t, githttp.Config{MaxPushSize: 1 << 20})
	a := newClient(t, "a")
	a.git("init", "-q", a.dir)
	writeRandomFile(t, a.dir, "small.bin", 100<<10)
	a.git("add", "small.bin")
	a.git("commit", "-q", "-m", "small")
	a.git("push", "-q", h.url, "main")
	small := h.serverRef("refs/heads/main")

	writeRandomFile(t, a.dir, "big.bin", 3<<20)
	a.git("add", "big.bin")
	a.git("commit", "-q", "-m", "big")
	_, stderr, err := a.run("push", h.url, "main")
	if err == nil {
		t.Fatal("push over the limit succeeded")
	}
	if !strings.Contains(stderr, "remote: ") || !strings.Contains(stderr, "1.00 MiB") {
		t.Errorf("push over the limit printed:\n%s\nwant a remote: line with the limit", stderr)
	}
	if got := h.serverRef("refs/heads/main"); got != small {
		t.Errorf("main moved to %s", got)
	}
}

package apptest

import (
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// TestLogger is a server's logger in a test: its warnings and errors go
// to the test's log, which go test prints when the test fails (and
// under -v), so that a failure shows what the server saw. It stops
// writing when the test's cleanups run: a server's goroutines may still
// log while the test ends, and a test's log is closed by then.
func TestLogger(t testing.TB) *slog.Logger {
	w := &testLogWriter{t: t}
	t.Cleanup(w.close)
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// testLogWriter writes each line to a test's log until closed.
type testLogWriter struct {
	mu     sync.Mutex
	t      testing.TB
	closed bool
}

func (w *testLogWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		w.t.Log("server: " + strings.TrimSuffix(string(p), "\n"))
	}
	return len(p), nil
}

func (w *testLogWriter) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
}

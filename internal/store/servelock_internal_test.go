//go:build unix

package store

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestLockSoonOutwaitsAForkedCopy: a stopped server's lock is still held
// by a copy of its descriptor (what a process forked before the stop
// holds until it execs); the next server's claim waits for the copy to
// close instead of failing.
func TestLockSoonOutwaitsAForkedCopy(t *testing.T) {
	name := filepath.Join(t.TempDir(), "serve.lock")
	stopped, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if locked, _, err := lockExclusive(stopped); !locked || err != nil {
		t.Fatalf("first lock: %v %v", locked, err)
	}
	forkedCopy, err := syscall.Dup(int(stopped.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	stopped.Close()
	time.AfterFunc(200*time.Millisecond, func() { syscall.Close(forkedCopy) })

	next, err := os.OpenFile(name, os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	if locked, _, err := lockSoon(next); !locked || err != nil {
		t.Fatalf("claim after the copy closed: locked %v, err %v", locked, err)
	}
}

// Package testwait is how tests wait for work done in the background (a
// delivery, a worker's pass, a server coming up): by checking at growing
// intervals until it holds, never with a fixed sleep. It imports nothing
// of forgeapi, so every package's tests can use it, the store's too.
package testwait

import (
	"errors"
	"testing"
	"time"
)

// Timeout is how long Until and For wait: long enough for a background
// worker on a loaded machine under the race detector.
const Timeout = time.Minute

// errNotYet is what Until's condition reports while it does not hold.
var errNotYet = errors.New("not yet")

// Until waits until cond holds, checking it at once and then at growing
// intervals (10 ms to 100 ms), and fails the test naming what it waited
// for when Timeout passes first.
func Until(t testing.TB, what string, cond func() bool) {
	t.Helper()
	For(t, what, func() error {
		if cond() {
			return nil
		}
		return errNotYet
	})
}

// For waits until check returns nil, as Until does. check's error says
// what it saw instead ("2 of 3 deliveries, the last pending"); when
// Timeout passes, the test fails with the last one, so a failure shows
// the state it stopped in.
func For(t testing.TB, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(Timeout)
	for wait := 10 * time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			if errors.Is(err, errNotYet) {
				t.Fatalf("timed out after %v waiting for %s", Timeout, what)
			}
			t.Fatalf("timed out after %v waiting for %s: %v", Timeout, what, err)
		}
		time.Sleep(wait)
	}
}

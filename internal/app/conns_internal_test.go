package app

import (
	"net"
	"net/http"
	"testing"
	"time"
)

// TestQuietConnsClosesOnlyQuietOnes: at shutdown a connection that has
// sent no request for quietGrace is closed, a younger one is left until
// its time comes, and one serving a request is never touched.
func TestQuietConnsClosesOnlyQuietOnes(t *testing.T) {
	t.Parallel()
	q := newQuietConns()
	old, oldPeer := net.Pipe()
	young, youngPeer := net.Pipe()
	busy, busyPeer := net.Pipe()
	for _, c := range []net.Conn{old, young, busy, oldPeer, youngPeer, busyPeer} {
		t.Cleanup(func() { c.Close() })
	}
	now := time.Now()
	q.track(old, http.StateNew)
	q.track(young, http.StateNew)
	q.track(busy, http.StateNew)
	q.track(busy, http.StateActive)
	q.since[old] = now.Add(-2 * quietGrace)
	q.since[young] = now.Add(-quietGrace / 2)

	if next := q.closeOld(now); next != quietGrace/2 {
		t.Fatalf("next due in %s, want %s", next, quietGrace/2)
	}
	if !closed(oldPeer) {
		t.Fatal("the quiet connection is open")
	}
	if closed(youngPeer) || closed(busyPeer) {
		t.Fatal("a young or busy connection was closed")
	}
	if next := q.closeOld(now.Add(quietGrace)); next != 0 || !closed(youngPeer) {
		t.Fatalf("after its grace the young connection: next %s, closed %v", next, closed(youngPeer))
	}
	if closed(busyPeer) {
		t.Fatal("the busy connection was closed")
	}
}

// closed reports whether the pipe's other end was closed.
func closed(peer net.Conn) bool {
	_ = peer.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
	_, err := peer.Read(make([]byte, 1))
	return err != nil && !isTimeout(err)
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

package hookshot

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
)

// TestKeepsAsManyConnectionsAsConcurrentSends sends two bursts of
// concurrent deliveries to one receiver (many hooks pointing at one
// service), each burst held at the receiver until all of it arrived: the
// second burst reuses the first burst's connections instead of dialing
// again (with 64 idle connections per host kept, it dialed 136 more).
func TestKeepsAsManyConnectionsAsConcurrentSends(t *testing.T) {
	const burst = 200 // at most MaxIdleConnsPerHost
	var dialed atomic.Int64
	var arrived sync.WaitGroup
	var release atomic.Pointer[chan struct{}]
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived.Done()
		<-*release.Load()
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			dialed.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	s := loopbackSender(t, Config{})
	for round := 1; round <= 2; round++ {
		arrived.Add(burst)
		ch := make(chan struct{})
		release.Store(&ch)
		var done sync.WaitGroup
		for range burst {
			done.Add(1)
			go func() {
				defer done.Done()
				res := s.Send(context.Background(), Request{URL: srv.URL, ContentType: ContentJSON, Secret: testSecret,
					Event: "push", DeliveryGUID: "g", Payload: testPayload})
				if !res.OK() {
					t.Errorf("round %d: %s %v", round, res.Status, res.Err)
				}
			}()
		}
		arrived.Wait()
		close(ch)
		done.Wait()
		if got := dialed.Load(); got != burst {
			t.Fatalf("after round %d: %d connections dialed, want %d (the first round's, reused)", round, got, burst)
		}
	}
}

package main

import (
	"context"
	"crypto/sha1"
	"encoding/json"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

// The same-bytes message is the kept delivery with the key swapped in,
// a new delivery GUID and both signatures right for the new body; the
// receiver takes it, and the flat message, without a bad signature.
func TestBareMessagesPassTheReceiver(t *testing.T) {
	testStart := time.Now()
	secret := []byte("bench-secret")
	sample := &keptDelivery{
		key:  "sample-1",
		body: []byte(`{"action":"edited","changes":{"description":{"from":"round-7"}},"repository":{"id":1,"description":"sample-1","owner":{"login":"bench"}}}`),
		header: http.Header{
			"Content-Type":       {"application/json"},
			"X-Service-Event":    {"repository"},
			"X-Github-Event":     {"repository"},
			"X-Service-Delivery": {"old"},
			"X-Github-Delivery":  {"old"},
		},
	}
	msg := sameMessage(secret, sample)
	body, header := msg("bare-42")
	var got struct {
		Changes struct {
			Description struct{ From string }
		}
		Repository struct{ Description string }
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if got.Repository.Description != "bare-42" || got.Changes.Description.From != "round-7" {
		t.Errorf("body %s: want the description bare-42 and the rest kept", body)
	}
	if want := "sha1=" + hexHMAC(sha1.New, secret, body); header.Get("X-Hub-Signature") != want {
		t.Errorf("X-Hub-Signature %q, want %q", header.Get("X-Hub-Signature"), want)
	}
	_, again := msg("bare-43")
	guid := header.Get("X-Service-Delivery")
	if guid == "old" || guid != header.Get("X-Github-Delivery") || again.Get("X-Service-Delivery") == guid {
		t.Errorf("delivery GUIDs %q, %q, then %q: want a new one per message, the same in both names",
			guid, header.Get("X-Github-Delivery"), again.Get("X-Service-Delivery"))
	}
	if sample.header.Get("X-Service-Delivery") != "old" {
		t.Error("the message changed the kept delivery's headers")
	}

	rcv := newReceiver(string(secret))
	hookURL, stop, err := serveReceiver(rcv)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stop() }()
	rcv.sent("round-1", time.Now()) // an event of forgeapi's, not yet delivered
	b := &webhooksBench{bareSenders: 2, round: 200 * time.Millisecond}
	var seq atomic.Int64
	cpu := processCPU()
	for name, m := range map[string]bareMessage{"flat": flatMessage(secret), "same": msg} {
		var sum rateSum
		rate := b.bareRound(context.Background(), rcv, hookURL, &seq, m, &sum, &cpu)
		if rate <= 0 || sum.n <= 0 || rcv.badSignatures.Load() != 0 {
			t.Errorf("%s: %.0f/s, %.0f received, %d bad signatures", name, rate, sum.n, rcv.badSignatures.Load())
		}
		// The loop's deliveries are counted, their bookkeeping forgotten.
		rcv.mu.Lock()
		if _, ok := rcv.sentAt["round-1"]; !ok || len(rcv.sentAt) != 1 || len(rcv.seen) != 0 {
			t.Errorf("%s: the receiver keeps %d events sent and %d seen after the round, want round-1 alone and none seen",
				name, len(rcv.sentAt), len(rcv.seen))
		}
		rcv.mu.Unlock()
	}
	// Every bare delivery is counted, its receipt time read back within
	// the test's span (kept as a duration from the receiver's start).
	receipts := rcv.receiptsSince(0)
	if len(receipts) == 0 {
		t.Error("no bare delivery counted")
	}
	for _, rc := range receipts {
		if rc.at.Before(testStart) || rc.at.After(time.Now()) {
			t.Fatalf("a receipt at %s, outside the test's span from %s", rc.at, testStart)
		}
	}
}

// A round's CPU a delivery is the process's CPU time in the round over
// its deliveries, and the total is over all rounds of the kind.
func TestRateSumCountsCPUADelivery(t *testing.T) {
	spin := func(d time.Duration) {
		start, deadline := processCPU(), time.Now().Add(5*time.Second)
		for processCPU()-start < d {
			if time.Now().After(deadline) {
				t.Fatalf("the process's CPU time did not advance by %s in 5 s of spinning", d)
			}
		}
	}
	var s rateSum
	since := processCPU()
	spin(20 * time.Millisecond)
	s.addRound(1000, time.Second, &since)
	spin(20 * time.Millisecond)
	s.addRound(0, time.Second, &since)
	if got := s.roundCPU[0]; got < 20 || got > 1000 {
		t.Errorf("round 1: %.1f µs a delivery, want 20 (20 ms over 1,000) or a little more", got)
	}
	if s.roundCPU[1] != 0 {
		t.Errorf("round 2, no deliveries: %.1f µs a delivery, want 0", s.roundCPU[1])
	}
	if got := s.cpuPerDelivery(); got < 40 || got > 2000 {
		t.Errorf("all rounds: %.1f µs a delivery, want 40 (40 ms over 1,000) or a little more", got)
	}
}

package apptest

import (
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"
)

// receiverWait is how long a Receiver's waits last before they fail.
const receiverWait = 30 * time.Second

// Delivery is a webhook delivery a Receiver accepted.
type Delivery struct {
	Event  string      // the X-GitHub-Event header
	Header http.Header // the request's headers
	Body   []byte      // the payload, as sent
	// Parsed is go-github's parse of the payload (github.ParseWebHook): a
	// *github.IssuesEvent, *github.PushEvent, ...; nil for an event
	// go-github does not know.
	Parsed any
}

// Describer names a delivery for a test's expectations ("issues opened",
// "#3 labeled", ...), or returns "" to leave the delivery out.
type Describer func(Delivery) string

// Receiver is a webhook receiver as an integration has one: an
// httptest server that checks each delivery's signature with the hook's
// secret (a bad one is a test error and a 400), validates the body against
// the platform's webhook schema (CheckWebhook), parses it with go-github
// and keeps it. Its waits poll until the deliveries a test expects have
// arrived, so tests do not depend on the dispatcher's timing.
type Receiver struct {
	URL    string // where the server listens; the hook's config.url
	t      testing.TB
	secret []byte
	// closing is set when the test ends, before the server closes: a
	// delivery still arriving then (the server under test keeps sending
	// until its own cleanup, which runs later) is cut off by the close,
	// which is not a failure of the delivery.
	closing atomic.Bool
	mu      sync.Mutex
	got     []Delivery
}

// NewReceiver starts a Receiver for hooks whose secret is secret; it
// stops when the test ends.
func NewReceiver(t testing.TB, secret string) *Receiver {
	rc := &Receiver{t: t, secret: []byte(secret)}
	srv := httptest.NewServer(rc)
	t.Cleanup(func() {
		rc.closing.Store(true)
		srv.Close()
	})
	rc.URL = srv.URL
	return rc
}

// ServeHTTP accepts one delivery.
func (rc *Receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	payload, err := github.ValidatePayload(r, rc.secret)
	if err != nil && rc.closing.Load() && errors.Is(err, net.ErrClosed) {
		return // read while the test's cleanup closed the server
	}
	if err != nil {
		rc.t.Errorf("webhook delivery %s: %v", r.Header.Get("X-GitHub-Delivery"), err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	event := github.WebHookType(r)
	CheckWebhook(rc.t, event, payload)
	parsed, err := github.ParseWebHook(event, payload)
	if err != nil {
		parsed = nil // an event go-github has no type for; tests read Body
	}
	rc.mu.Lock()
	rc.got = append(rc.got, Delivery{Event: event, Header: r.Header.Clone(), Body: payload, Parsed: parsed})
	rc.mu.Unlock()
}

// Deliveries returns the deliveries accepted so far, in arrival order.
func (rc *Receiver) Deliveries() []Delivery {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.got)
}

// Described returns describe's names of the deliveries accepted so far,
// in arrival order, without the deliveries it leaves out.
func (rc *Receiver) Described(describe Describer) []string {
	var out []string
	for _, d := range rc.Deliveries() {
		if s := describe(d); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// WaitFor waits until every name in want is among describe's names of the
// deliveries (a name listed twice must arrive twice) and returns all the
// names; the test fails if they do not arrive in time.
func (rc *Receiver) WaitFor(t testing.TB, describe Describer, want ...string) []string {
	t.Helper()
	return rc.wait(t, describe, func(got []string) bool { return containsAll(got, want) }, want)
}

// WaitCount waits until describe names at least n deliveries and returns
// the names; the test fails if they do not arrive in time.
func (rc *Receiver) WaitCount(t testing.TB, describe Describer, n int) []string {
	t.Helper()
	return rc.wait(t, describe, func(got []string) bool { return len(got) >= n }, n)
}

func (rc *Receiver) wait(t testing.TB, describe Describer, done func([]string) bool, want any) []string {
	t.Helper()
	for deadline := time.Now().Add(receiverWait); ; time.Sleep(10 * time.Millisecond) {
		got := rc.Described(describe)
		if done(got) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("received %q, want %v", got, want)
			return nil
		}
	}
}

// containsAll reports whether got holds every element of want, as many
// times as want lists it.
func containsAll(got, want []string) bool {
	left := slices.Clone(got)
	for _, w := range want {
		i := slices.Index(left, w)
		if i < 0 {
			return false
		}
		left = slices.Delete(left, i, i+1)
	}
	return true
}

// EventAction names a delivery "event action" (the payload's action; an
// event without one is "event "), and leaves pings out.
func EventAction(d Delivery) string {
	if d.Event == "ping" {
		return ""
	}
	var payload struct {
		Action string `json:"action"`
	}
	_ = json.Unmarshal(d.Body, &payload)
	return d.Event + " " + payload.Action
}

package webhooks_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/testwait"
)

// received is one delivery as a receiver saw it.
type received struct {
	Event   string
	GUID    string
	HookID  string
	Header  http.Header
	Raw     []byte // the request body as sent
	Payload map[string]any
}

// receiver is a webhook receiver on 127.0.0.1. It verifies every
// delivery's signatures with github.ValidatePayload (and fails the test
// when they do not match the secret) and keeps what it received.
type receiver struct {
	t      testing.TB
	secret string
	srv    *httptest.Server
	// Status is the status it answers with; 0 means 200.
	Status atomic.Int32
	// Delay holds each answer back this long (a time.Duration).
	Delay atomic.Int64
	// Started counts the requests that arrived, answered or not.
	Started atomic.Int32

	mu  sync.Mutex
	got []received
}

func newReceiver(t testing.TB, secret string) *receiver {
	rc := &receiver{t: t, secret: secret}
	rc.srv = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) URL() string { return rc.srv.URL + "/hook" }

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body) // read first: the server notices a closed connection only once the body is read
	rc.Started.Add(1)
	if delay := time.Duration(rc.Delay.Load()); delay > 0 {
		select { // a delivery counts only when its sender waits for the answer
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
	}
	r.Body = io.NopCloser(bytes.NewReader(raw))
	body, err := github.ValidatePayload(r, []byte(rc.secret))
	if err != nil {
		rc.t.Errorf("delivery %s: %v", r.Header.Get("X-Service-Delivery"), err)
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	if rc.secret != "" && r.Header.Get("X-Hub-Signature") == "" {
		rc.t.Errorf("delivery %s has no X-Hub-Signature", r.Header.Get("X-Service-Delivery"))
	}
	var payload map[string]any
	if err := json.Unmarshal(body, &payload); err != nil {
		rc.t.Errorf("delivery payload: %v", err)
	}
	apptest.CheckWebhook(rc.t, r.Header.Get("X-Service-Event"), body)
	rc.mu.Lock()
	rc.got = append(rc.got, received{Event: r.Header.Get("X-Service-Event"), GUID: r.Header.Get("X-Service-Delivery"),
		HookID: r.Header.Get("X-Service-Hook-ID"), Header: r.Header.Clone(), Raw: raw, Payload: payload})
	rc.mu.Unlock()
	status := int(rc.Status.Load())
	if status == 0 {
		status = http.StatusOK
	}
	w.Header().Set("X-Receiver", "test")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, "thanks")
}

// all returns what was received so far.
func (rc *receiver) all() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...)
}

// events returns the deliveries of one event received so far.
func (rc *receiver) events(event string) []received {
	var out []received
	for _, r := range rc.all() {
		if r.Event == event {
			out = append(out, r)
		}
	}
	return out
}

// waitFor waits until cond holds for what was received.
func (rc *receiver) waitFor(what string, cond func([]received) bool) []received {
	rc.t.Helper()
	var got []received
	testwait.For(rc.t, what, func() error {
		if got = rc.all(); !cond(got) {
			return fmt.Errorf("received %d deliveries: %v", len(got), eventNames(got))
		}
		return nil
	})
	return got
}

// waitEvents waits until n deliveries of the event arrived and returns them.
func (rc *receiver) waitEvents(event string, n int) []received {
	rc.t.Helper()
	rc.waitFor(event, func([]received) bool { return len(rc.events(event)) >= n })
	return rc.events(event)
}

func eventNames(got []received) []string {
	out := make([]string, len(got))
	for i, r := range got {
		out[i] = r.Event
	}
	return out
}

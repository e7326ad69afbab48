package apptest

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"forgeapi/internal/events"
	"forgeapi/internal/store"
)

// Recorder is an events.Sink that keeps the events of committed
// transactions, for tests of event sources (subscribe it with
// WithEventSink). With Fail set it refuses every event, which rolls the
// change back.
type Recorder struct {
	mu     sync.Mutex
	events []*events.Event
	fail   atomic.Bool
}

// ErrRecorderRefused is what a failing Recorder returns.
var ErrRecorderRefused = errors.New("apptest: recorder refuses events")

// HandleEvent records e once its transaction commits.
func (r *Recorder) HandleEvent(_ context.Context, tx *store.Tx, e *events.Event) error {
	if r.fail.Load() {
		return ErrRecorderRefused
	}
	tx.AfterCommit(func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.events = append(r.events, e)
	})
	return nil
}

// Fail makes the recorder refuse (true) or accept (false) events.
func (r *Recorder) Fail(fail bool) { r.fail.Store(fail) }

// Hook returns the recorded events with the webhook event name, oldest
// first.
func (r *Recorder) Hook(name string) []*events.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*events.Event
	for _, e := range r.events {
		if e.HookEvent == name {
			out = append(out, e)
		}
	}
	return out
}

// Feed returns the recorded events with the feed type, oldest first.
func (r *Recorder) Feed(typ string) []*events.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*events.Event
	for _, e := range r.events {
		if e.FeedType == typ {
			out = append(out, e)
		}
	}
	return out
}

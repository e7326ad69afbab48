package webhooks

import (
	"context"
	"math/rand/v2"
	"time"
)

// Admission and throttling: per-hook send slots (perHookInFlight), the
// deliveries waiting in memory for one, the per-hook rate limit (a token
// bucket) and the automatic retries' backoff. The hand-off's contract is
// Dispatcher's.

// admit splits a claimed batch into the deliveries to send now and the
// ones to put back: those over their hook's rate limit (which reserve a
// later send slot), and those of hooks already at perHookInFlight beyond
// the perHookWaiting that wait in memory for a send slot of their hook.
func (d *Dispatcher) admit(batch []job, now time.Time) (admitted []job, putBack []putBackItem) {
	admitted = make([]job, 0, len(batch))
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, c := range batch {
		if d.inFlight[c.HookID] >= perHookInFlight {
			if len(d.waiting[c.HookID]) < d.waitLimit(c.HookID) {
				d.waiting[c.HookID] = append(d.waiting[c.HookID], waitingJob{job: c, claimedAt: now})
				d.total++
				continue
			}
			putBack = append(putBack, putBackOf(c.claimed, c.hook, now.Add(busyHookDelay)))
			continue
		}
		if pb, ok := d.throttle(c, now); !ok {
			putBack = append(putBack, pb)
			continue
		}
		d.inFlight[c.HookID]++
		d.total++
		admitted = append(admitted, c)
	}
	return admitted, putBack
}

// throttle takes a send slot of c's hook's rate limit at now; when there
// is none, ok is false and pb puts c back until its reserved slot. d.mu
// is held.
func (d *Dispatcher) throttle(c job, now time.Time) (pb putBackItem, ok bool) {
	if d.reserved[c.ID] {
		delete(d.reserved, c.ID)
		return pb, true
	}
	if c.skip != "" {
		return pb, true
	}
	at := d.bucket(c.HookID, now).reserve(now)
	if !at.After(now) {
		return pb, true
	}
	if c.ID != 0 { // an unwritten one's reservation is its row's, once written (Dispatcher.putBack)
		d.reserve(c.ID)
	}
	pb = putBackOf(c.claimed, c.hook, at)
	pb.Throttled = true
	return pb, false
}

// reserve marks the delivery id as holding a reserved send slot; d.mu is
// held.
func (d *Dispatcher) reserve(id int64) {
	if len(d.reserved) >= 1<<16 { // rows claimed elsewhere since: forget them
		clear(d.reserved)
	}
	d.reserved[id] = true
}

// finish frees a send slot: it starts the next delivery waiting for the
// hook (puts back those that waited too long or are over the rate
// limit), and wakes a claim loop that waits for a slot.
func (d *Dispatcher) finish(hookID int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.inFlight[hookID]--; d.inFlight[hookID] <= 0 {
		delete(d.inFlight, hookID)
	}
	d.pace(hookID).finished(time.Now())
	d.total--
	d.startWaiting(hookID)
	if d.starved && maxInFlight-d.total >= claimRefill {
		d.starved = false
		select {
		case d.freed <- struct{}{}:
		default:
		}
	}
}

// startWaiting starts the first delivery waiting for hookID that may be
// sent now; d.mu is held. Deliveries that waited longer than maxWait, or
// are over the hook's rate limit, are put back (in a goroutine counted
// in d.sends, so that Run waits for it).
func (d *Dispatcher) startWaiting(hookID int64) {
	if d.closing || d.inFlight[hookID] >= perHookInFlight {
		return
	}
	now := d.svc.now()
	var putBack []putBackItem
	for len(d.waiting[hookID]) > 0 {
		w := d.waiting[hookID][0]
		if d.waiting[hookID] = d.waiting[hookID][1:]; len(d.waiting[hookID]) == 0 {
			delete(d.waiting, hookID)
		}
		if now.Sub(w.claimedAt) > d.maxWait {
			putBack = append(putBack, putBackOf(w.claimed, w.hook, now))
			d.total--
			continue
		}
		pb, ok := d.throttle(w.job, now)
		if !ok {
			putBack = append(putBack, pb)
			d.total--
			continue
		}
		d.inFlight[hookID]++
		d.startSend(w.job)
		break
	}
	if len(putBack) > 0 {
		d.sends.Add(1)
		go func() {
			defer d.sends.Done()
			d.release(context.Background(), putBack)
			d.svc.Wake()
		}()
	}
}

// close stops starting waiting deliveries and returns them, to be put
// back due now.
func (d *Dispatcher) close() []putBackItem {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closing = true
	var items []putBackItem
	now := d.svc.now()
	for hookID, list := range d.waiting {
		for _, w := range list {
			items = append(items, putBackOf(w.claimed, w.hook, now))
			d.total--
		}
		delete(d.waiting, hookID)
	}
	return items
}

// backoff is the delay before automatic retry number attempt (from 0):
// the base doubled per attempt, at most an hour, times a jitter in [0.5, 1.5).
func (d *Dispatcher) backoff(attempt int) time.Duration {
	base := d.svc.Config.RetryBackoff
	if base <= 0 {
		base = DefaultRetryBackoff
	}
	delay := base
	for i := 0; i < attempt && delay < maxRetryBackoff; i++ {
		delay *= 2
	}
	delay = min(delay, maxRetryBackoff)
	return time.Duration(float64(delay) * (0.5 + rand.Float64()))
}

// pace is how fast a hook's sends finish: a moving average of the sends
// finished per second, taken over windows of paceWindow.
type pace struct {
	start time.Time // of the current window
	sends int       // sends finished in it
	rate  float64   // per second; 0 until a window ends
}

const paceWindow = 100 * time.Millisecond

// finished counts a send that finished at now.
func (p *pace) finished(now time.Time) {
	p.sends++
	if el := now.Sub(p.start); el >= paceWindow {
		r := float64(p.sends) / el.Seconds()
		if p.rate > 0 {
			r = (p.rate + r) / 2
		}
		p.rate, p.start, p.sends = r, now, 0
	}
}

// pace returns the pace of a hook; d.mu is held.
func (d *Dispatcher) pace(hookID int64) *pace {
	p, ok := d.paces[hookID]
	if !ok {
		if len(d.paces) >= 65536 {
			clear(d.paces)
		}
		p = &pace{start: time.Now()}
		d.paces[hookID] = p
	}
	return p
}

// waitLimit is how many claimed deliveries to a hook at perHookInFlight
// may wait in memory: as many as the hook sends in waitSpan, between
// perHookWaiting and maxPerHookWaiting. A hook that stopped answering keeps its last pace
// until a send finishes; its waiting deliveries go back to the table
// after maxWait. d.mu is held.
func (d *Dispatcher) waitLimit(hookID int64) int {
	n := int(d.pace(hookID).rate * waitSpan.Seconds())
	return min(max(n, perHookWaiting), maxPerHookWaiting)
}

// bucket is a hook's token bucket: rate tokens per second, at most one
// second's worth saved. Tokens may go negative: each reservation past the
// saved ones takes the next free slot.
type bucket struct {
	rate   float64
	tokens float64
	last   time.Time
}

func (d *Dispatcher) bucket(hookID int64, now time.Time) *bucket {
	b, ok := d.buckets[hookID]
	if !ok {
		if len(d.buckets) >= 65536 {
			clear(d.buckets)
		}
		b = &bucket{rate: d.rate, tokens: max(d.rate, 1), last: now}
		d.buckets[hookID] = b
	}
	return b
}

// reserve takes a token and returns when it may be used: now when one
// was saved, later otherwise. A zero rate never throttles.
func (b *bucket) reserve(now time.Time) time.Time {
	if b.rate <= 0 {
		return now
	}
	b.tokens = min(b.tokens+now.Sub(b.last).Seconds()*b.rate, max(b.rate, 1))
	b.last = now
	b.tokens--
	if b.tokens >= 0 {
		return now
	}
	return now.Add(time.Duration(-b.tokens / b.rate * float64(time.Second)))
}

package webhooks

import (
	"testing"
	"time"
)

// TestWaitLimitFollowsTheHooksPace: a hook keeps in memory as many
// claimed deliveries as it sends in waitSpan, within
// [perHookWaiting, maxPerHookWaiting]; a new or slow hook the least.
func TestWaitLimitFollowsTheHooksPace(t *testing.T) {
	d := &Dispatcher{paces: map[int64]*pace{}}
	t0 := time.Now()
	finish := func(hookID int64, perSecond int, d2 time.Duration) {
		p := d.pace(hookID)
		p.start = t0
		for i := range int(float64(perSecond) * d2.Seconds()) {
			p.finished(t0.Add(time.Duration(i+1) * time.Second / time.Duration(perSecond)))
		}
	}
	finish(1, 500, time.Second)   // 500 in waitSpan
	finish(2, 10, time.Second)    // 10
	finish(3, 50000, time.Second) // 50,000
	for _, c := range []struct {
		hookID int64
		want   int
	}{{1, 500}, {2, perHookWaiting}, {3, maxPerHookWaiting}, {4, perHookWaiting}} {
		if got := d.waitLimit(c.hookID); got < c.want*9/10 || got > c.want*11/10 {
			t.Errorf("hook %d may keep %d waiting, want %d", c.hookID, got, c.want)
		}
	}
}

package webhooks

import (
	"testing"
	"time"
)

// TestNextDueRemembersPutBacks: the claim loop keeps the due time of
// deliveries put back by one claim until a later claim starts after it,
// whatever the claims in between put back.
func TestNextDueRemembersPutBacks(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	var zero time.Time
	steps := []struct {
		name               string
		due, started, next time.Time
		want               time.Time
	}{
		{"first put-back", zero, ms(0), ms(100), ms(100)},
		{"a claim woken by an event puts nothing back", ms(100), ms(10), zero, ms(100)},
		{"a later put-back does not hide an earlier one", ms(100), ms(20), ms(120), ms(100)},
		{"an earlier put-back comes first", ms(100), ms(30), ms(50), ms(50)},
		{"a claim after the due time took them", ms(100), ms(101), zero, zero},
		{"and what it put back is next", ms(100), ms(101), ms(201), ms(201)},
		{"nothing put back, nothing remembered", zero, ms(0), zero, zero},
	}
	for _, s := range steps {
		if got := nextDue(s.due, s.started, s.next); !got.Equal(s.want) {
			t.Errorf("%s: nextDue(%v, %v, %v) = %v, want %v", s.name, s.due, s.started, s.next, got, s.want)
		}
	}
}

package feeds

import (
	"math"
	"sync"
	"time"
)

// PollConfig configures X-Poll-Interval.
//
// The rule: the meter counts feed requests (304s included) in the
// last Window (ten one-second buckets by default) and derives the request
// rate R per second. With Base the default interval and Capacity the rate
// one Base interval is meant to absorb,
//
//	interval = min(Max, Base × max(1, ceil(R / Capacity)))
//
// so the interval doubles when the feeds get twice their capacity, and
// falls back to Base once the window no longer holds the load (after at
// most Window without it).
type PollConfig struct {
	// Base is the interval without load; default 60 s.
	Base time.Duration
	// Max caps the interval; default 10 minutes.
	Max time.Duration
	// Capacity is the feed request rate per second (per server process)
	// served at Base; default 200.
	Capacity float64
	// Window is the span the rate is measured over, in whole seconds;
	// default 10 s.
	Window time.Duration
}

func (c *PollConfig) setDefaults() {
	if c.Base <= 0 {
		c.Base = 60 * time.Second
	}
	if c.Max < c.Base {
		c.Max = max(10*time.Minute, c.Base)
	}
	if c.Capacity <= 0 {
		c.Capacity = 200
	}
	if c.Window < time.Second {
		c.Window = 10 * time.Second
	}
}

// PollMeter measures the feed request rate and turns it into the poll
// interval. It is safe for concurrent use.
type PollMeter struct {
	cfg     PollConfig
	now     func() time.Time
	mu      sync.Mutex
	buckets []bucket
}

type bucket struct {
	second int64
	count  int64
}

// NewPollMeter returns a meter reading time from now.
func NewPollMeter(cfg PollConfig, now func() time.Time) *PollMeter {
	cfg.setDefaults()
	return &PollMeter{cfg: cfg, now: now, buckets: make([]bucket, int(cfg.Window/time.Second))}
}

// Observe counts one feed request and returns the poll interval in whole
// seconds, including that request in the rate.
func (m *PollMeter) Observe() int {
	sec := m.now().Unix()
	m.mu.Lock()
	b := &m.buckets[int(sec%int64(len(m.buckets)))]
	if b.second != sec {
		*b = bucket{second: sec}
	}
	b.count++
	total := m.total(sec)
	m.mu.Unlock()
	return m.interval(total)
}

// Interval returns the current poll interval in seconds without counting
// a request.
func (m *PollMeter) Interval() int {
	sec := m.now().Unix()
	m.mu.Lock()
	total := m.total(sec)
	m.mu.Unlock()
	return m.interval(total)
}

// total sums the buckets of the window ending at sec; callers hold mu.
func (m *PollMeter) total(sec int64) int64 {
	var n int64
	oldest := sec - int64(len(m.buckets)) + 1
	for _, b := range m.buckets {
		if b.second >= oldest && b.second <= sec {
			n += b.count
		}
	}
	return n
}

func (m *PollMeter) interval(total int64) int {
	rate := float64(total) / float64(len(m.buckets))
	factor := max(1, math.Ceil(rate/m.cfg.Capacity))
	d := time.Duration(math.Min(float64(m.cfg.Max), float64(m.cfg.Base)*factor))
	return int(d / time.Second)
}

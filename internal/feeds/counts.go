package feeds

import (
	"sync"
	"time"
)

// countCache remembers how many events a feed holds (up to MaxEvents),
// for the Link header of its first page, so that a feed polled again
// without change is not counted again. An entry is valid while the
// feed's newest event and the window's floor are the ones it was
// counted with, and for at most countTTL (bounding staleness from a
// repository turning private).
type countCache struct {
	mu      sync.Mutex
	entries map[string]countEntry
}

type countEntry struct {
	newest, floor int64
	n             int
	at            time.Time
}

const (
	countTTL        = time.Minute
	maxCountEntries = 10000
)

func newCountCache() *countCache { return &countCache{entries: map[string]countEntry{}} }

// get returns the cached count of the feed, if still valid.
func (c *countCache) get(key string, newest, floor int64, now time.Time) (int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || e.newest != newest || e.floor != floor || now.Sub(e.at) > countTTL || now.Before(e.at) {
		return 0, false
	}
	return e.n, true
}

// put stores a count; when the cache is full it starts over.
func (c *countCache) put(key string, newest, floor int64, n int, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= maxCountEntries {
		c.entries = map[string]countEntry{}
	}
	c.entries[key] = countEntry{newest: newest, floor: floor, n: n, at: now}
}

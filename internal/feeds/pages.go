package feeds

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"forgeapi/internal/events"
	"forgeapi/internal/store"
)

// pageCache remembers the ids on recently served feed pages, so that a
// conditional poll of a feed that has not changed is answered 304 without
// a query. An entry is used only while
//
//   - no change that feeds show has committed in this process since it
//     was stored (the version: every event through the bus, follows and
//     subscriptions, pruning), and
//   - it is younger than Config.CacheTTL, which bounds how long a change
//     committed by another server process sharing the database can go
//     unnoticed by a conditional poll here.
//
// Responses with a body always query the ids afresh.
type pageCache struct {
	ttl     time.Duration
	version atomic.Int64
	mu      sync.Mutex
	entries map[pageID]pageEntry
}

// pageID names a cached page: the feed and viewer (the key serve is
// given), the page number and its size.
type pageID struct {
	feed          string
	page, perPage int
}

type pageEntry struct {
	version, floor int64
	at             time.Time
	ids            []int64
}

const maxPageEntries = 10000

func newPageCache(ttl time.Duration) *pageCache {
	return &pageCache{ttl: ttl, entries: map[pageID]pageEntry{}}
}

func (c *pageCache) get(key pageID, floor int64, now time.Time) ([]int64, bool) {
	v := c.version.Load()
	c.mu.Lock()
	e, ok := c.entries[key]
	c.mu.Unlock()
	if !ok || e.version != v || e.floor != floor || now.Sub(e.at) >= c.ttl || now.Before(e.at) {
		return nil, false
	}
	return e.ids, true
}

// put stores ids read at version v (read before the query, so that a
// change committed meanwhile leaves the entry stale, never wrong).
func (c *pageCache) put(key pageID, v, floor int64, ids []int64, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= maxPageEntries {
		c.entries = map[pageID]pageEntry{}
	}
	c.entries[key] = pageEntry{version: v, floor: floor, at: now, ids: ids}
}

// Invalidate makes every cached page stale. Call it after a change that
// feeds show commits without passing through the events bus.
func (h *Handler) Invalidate() { h.pages.version.Add(1) }

// HandleEvent makes the feeds a sink of the events bus: once the event's
// transaction commits, cached pages are stale.
func (h *Handler) HandleEvent(_ context.Context, tx store.Q, _ *events.Event) error {
	store.AfterCommit(tx, h.Invalidate)
	return nil
}

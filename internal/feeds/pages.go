package feeds

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"forgeapi/internal/events"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/store"
)

// pageCache remembers recently served feed pages (their ids, as the version
// string their ETag digests), so that a conditional poll of a feed that has
// not changed is answered 304 without a query. An entry is used only while
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
	entries map[pageID]*pageEntry
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
	tag            string // the page's version string (pageVersion): what its ETag digests
	// last is the ETag computed last from tag, with the caller it was
	// computed for: a poller asks again and again for the same one.
	last atomic.Pointer[callerETag]
}

type callerETag struct{ caller, etag string }

// etag returns the page's ETag for caller (httpapi.ETag of its version).
func (e *pageEntry) etag(caller string) string {
	if c := e.last.Load(); c != nil && c.caller == caller {
		return c.etag
	}
	etag := httpapi.ETag(caller, e.tag)
	e.last.Store(&callerETag{caller, etag})
	return etag
}

const maxPageEntries = 10000

func newPageCache(ttl time.Duration) *pageCache {
	return &pageCache{ttl: ttl, entries: map[pageID]*pageEntry{}}
}

// get returns the entry of a page that is still current: stored at the
// cache's version, over the same window floor, younger than the TTL.
func (c *pageCache) get(key pageID, floor int64, now time.Time) (*pageEntry, bool) {
	v := c.version.Load()
	c.mu.Lock()
	e, ok := c.entries[key]
	c.mu.Unlock()
	if !ok || e.version != v || e.floor != floor || now.Sub(e.at) >= c.ttl || now.Before(e.at) {
		return nil, false
	}
	return e, true
}

// put stores the page of ids read at version v (read before the query, so that a
// change committed meanwhile leaves the entry stale, never wrong), and
// returns the entry.
func (c *pageCache) put(key pageID, v, floor int64, ids []int64, now time.Time) *pageEntry {
	e := &pageEntry{version: v, floor: floor, at: now, tag: pageVersion(key.feed, key.page, key.perPage, ids)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= maxPageEntries {
		c.entries = map[pageID]*pageEntry{}
	}
	c.entries[key] = e
	return e
}

// Invalidate makes every cached page stale. Call it after a change that
// feeds show commits without passing through the events bus.
func (h *Handler) Invalidate() { h.pages.version.Add(1) }

// HandleEvent makes the feeds a sink of the events bus: once the event's
// transaction commits, cached pages are stale.
func (h *Handler) HandleEvent(_ context.Context, tx *store.Tx, _ *events.Event) error {
	tx.AfterCommit(h.Invalidate)
	return nil
}

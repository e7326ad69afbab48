package api

import (
	"container/list"
	"sync"

	"forgeapi/internal/depreview"
)

// manifestKey names a parsed manifest: its format (the same bytes parse
// differently as package.json and as package-lock.json) and its blob SHA.
type manifestKey struct {
	format depreview.Format
	blob   string
}

// manifestCache is a least-recently-used cache of parsed manifests,
// bounded by the total number of dependencies it holds. A nil
// *manifestCache caches nothing. The cached slices are shared: callers
// must not modify them (depreview.Diff does not).
type manifestCache struct {
	mu      sync.Mutex
	limit   int // most dependencies held
	size    int // dependencies held
	order   *list.List
	entries map[manifestKey]*list.Element
}

type cacheEntry struct {
	key  manifestKey
	deps []depreview.Dependency
	cost int
}

// newManifestCache returns a cache holding at most limit dependencies, or
// nil (no cache) when limit is not positive.
func newManifestCache(limit int) *manifestCache {
	if limit <= 0 {
		return nil
	}
	return &manifestCache{limit: limit, order: list.New(), entries: make(map[manifestKey]*list.Element)}
}

// get returns the cached dependencies of key and marks them recently used.
func (c *manifestCache) get(key manifestKey) ([]depreview.Dependency, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*cacheEntry).deps, true
}

// put stores deps under key, evicting the least recently used entries to
// stay within the limit. A manifest larger than the whole limit is not
// cached.
func (c *manifestCache) put(key manifestKey, deps []depreview.Dependency) {
	if c == nil {
		return
	}
	cost := len(deps) + 1
	if cost > c.limit {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		c.order.MoveToFront(el)
		return
	}
	c.entries[key] = c.order.PushFront(&cacheEntry{key: key, deps: deps, cost: cost})
	c.size += cost
	for c.size > c.limit {
		oldest := c.order.Back()
		e := oldest.Value.(*cacheEntry)
		c.order.Remove(oldest)
		delete(c.entries, e.key)
		c.size -= e.cost
	}
}

// len returns the number of cached manifests.
func (c *manifestCache) len() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

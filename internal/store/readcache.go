package store

import (
	"sync"
	"sync/atomic"
	"time"
)

// DefaultReadCacheTTL is how long a ReadCache keeps a value at most.
const DefaultReadCacheTTL = time.Second

// maxReadCacheEntries bounds a ReadCache; a full cache starts over.
const maxReadCacheEntries = 100_000

// ReadCache keeps values read from the database, found by key, for hot
// lookups (the credentials and accounts of every request). It is exact
// for this process's writes: every committed write to one of its tables
// (see DB.Watch) drops all its values before the writer's call returns,
// and a value read while such a write committed is not kept. Writes of
// other processes drop the values when their notification arrives
// (PostgreSQL), and in any case a value is kept for at most the TTL.
//
// Only values that were found are cached: a lookup that fails (not found
// included) always reaches the database, so a row just inserted is
// seen at once. It is safe for concurrent use.
type ReadCache[K comparable, V any] struct {
	ttl time.Duration
	// generation counts the invalidations; a value is valid only in the
	// generation it was read in.
	generation atomic.Uint64
	mu         sync.RWMutex
	entries    map[K]readEntry[V]
}

type readEntry[V any] struct {
	value      V
	generation uint64
	expires    time.Time
}

// NewReadCache returns a cache of values read from the tables of db,
// kept for at most ttl (DefaultReadCacheTTL when 0). List every table
// the values are read from, and the tables whose deletes cascade into
// them.
func NewReadCache[K comparable, V any](db *DB, ttl time.Duration, tables ...string) *ReadCache[K, V] {
	if ttl <= 0 {
		ttl = DefaultReadCacheTTL
	}
	c := &ReadCache[K, V]{ttl: ttl, entries: map[K]readEntry[V]{}}
	db.Watch(c.Invalidate, tables...)
	return c
}

// Get returns the value of the key, from the cache when it holds a valid
// one and otherwise from load (whose value it then keeps, unless load
// failed or the tables changed while it ran).
func (c *ReadCache[K, V]) Get(key K, load func() (V, error)) (V, error) {
	generation := c.generation.Load()
	now := time.Now()
	c.mu.RLock()
	e, ok := c.entries[key]
	c.mu.RUnlock()
	if ok && e.generation == generation && now.Before(e.expires) {
		return e.value, nil
	}
	v, err := load()
	if err != nil {
		return v, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.generation.Load() != generation {
		return v, nil // read while a write committed: it may predate it
	}
	if len(c.entries) >= maxReadCacheEntries {
		clear(c.entries)
	}
	c.entries[key] = readEntry[V]{value: v, generation: generation, expires: now.Add(c.ttl)}
	return v, nil
}

// Invalidate drops every value.
func (c *ReadCache[K, V]) Invalidate() {
	c.generation.Add(1)
	c.mu.Lock()
	clear(c.entries)
	c.mu.Unlock()
}

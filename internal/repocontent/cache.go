package repocontent

import (
	"container/list"
	"sync"
	"time"

	"forgeapi/internal/git/gitread"
	"forgeapi/internal/repos"
)

// openCacheSize is how many open repositories a Handler keeps.
const openCacheSize = 32

// openCache keeps repositories open between requests: opening one with
// go-git builds its pack index's offset table, which costs milliseconds
// on a long history. An entry is keyed by the repository and its last
// push, so a push (which moves pushed_at) makes the next request open the
// repository again and see the new objects; git gc after it leaves the
// old pack files readable through the descriptors the entry keeps; the
// new opening shares the blob sizes the old one learnt (gitread.Sizes:
// blobs never change), so that listing a directory after a push looks up
// only the sizes of the blobs the push added. A
// gitread.Repository is not safe for concurrent use: each entry has its
// lock, held for one request.
type openCache struct {
	mu      sync.Mutex
	entries map[openKey]*list.Element // of *openEntry
	lru     list.List                 // front: most recently used
}

type openKey struct {
	repoID   int64
	pushedAt time.Time
}

type openEntry struct {
	key  openKey
	mu   sync.Mutex
	repo *gitread.Repository
}

// acquire returns the open repository of r, locked for the caller, and
// the function that unlocks it. dir is its git directory.
func (c *openCache) acquire(r *repos.Repository, dir string) (*gitread.Repository, func(), error) {
	key := openKey{repoID: r.ID}
	if r.PushedAt != nil {
		key.pushedAt = *r.PushedAt
	}
	e, err := c.entry(key, dir)
	if err != nil {
		return nil, nil, err
	}
	e.mu.Lock()
	return e.repo, e.mu.Unlock, nil
}

// entry finds or opens the entry of key, evicting the least recently
// used one (and older versions of the same repository) beyond the size.
func (c *openCache) entry(key openKey, dir string) (*openEntry, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[openKey]*list.Element{}
	}
	if el, ok := c.entries[key]; ok {
		c.lru.MoveToFront(el)
		return el.Value.(*openEntry), nil
	}
	sizes := gitread.NewSizes()
	for k, el := range c.entries {
		if k.repoID == key.repoID {
			sizes = el.Value.(*openEntry).repo.Sizes()
		}
	}
	g, err := gitread.OpenShared(dir, sizes)
	if err != nil {
		return nil, err
	}
	for k, el := range c.entries {
		if k.repoID == key.repoID {
			c.remove(el)
		}
	}
	e := &openEntry{key: key, repo: g}
	c.entries[key] = c.lru.PushFront(e)
	for c.lru.Len() > openCacheSize {
		c.remove(c.lru.Back())
	}
	return e, nil
}

// remove drops an entry and closes its repository once no request uses
// it.
func (c *openCache) remove(el *list.Element) {
	e := c.lru.Remove(el).(*openEntry)
	delete(c.entries, e.key)
	go func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		_ = e.repo.Close()
	}()
}

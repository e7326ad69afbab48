package repocontent

import (
	"bytes"
	"container/list"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"hash/crc32"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"forgeapi/internal/git/gitread"
	"forgeapi/internal/wire"
)

// A directory listing (GET .../contents/{dir}) is a pure function of the
// directory's tree SHA (git trees are content-addressed: the entries,
// their types, SHAs and blob sizes), its path, the ref as the request
// wrote it (or the default branch) and the URLs of the repository (base
// URL and full name). Nothing in it depends on the caller or on the
// media type. The handler keeps recent listings rendered, keyed by
// exactly those, so that a client polling a directory costs a tree
// lookup and a copy; a push that changes the directory gives it a new
// tree SHA, hence a new key, and a rename or a new default branch new
// URLs or ref: no entry is ever stale, and none needs invalidating.

// Bounds of the listing cache: the bytes of the bodies it holds (with
// their keys) and the largest body it keeps. A 1,000-entry directory
// renders to about 740 KB: the cache holds some twenty of them.
const (
	listingCacheBytes = 16 << 20
	maxCachedListing  = 4 << 20
)

// listingKey is what a rendered listing is a function of.
type listingKey struct {
	api, web, rawBase, ref string // the place (URLs and the ref as written)
	path                   string // the directory's clean path ("" for the root)
	tree                   string // its tree SHA
}

// listing is a rendered directory: the JSON body as httpapi.WriteJSON
// writes it (trailing newline included) and its digest, the version the
// ETag is made of. body is shared by every request that reads it and
// never modified.
type listing struct {
	key    listingKey
	body   []byte
	digest string
	cost   int // bytes charged against listingCacheBytes
}

// newListing renders entries (in the order given) at pl.
func newListing(key listingKey, pl place, entries []gitread.Entry) *listing {
	body := pl.appendListing(make([]byte, 0, pl.listingSize(entries)), entries)
	body = append(body, '\n')
	cost := len(body) + len(key.api) + len(key.web) + len(key.rawBase) + len(key.ref) + len(key.path) + len(key.tree) + 256
	return &listing{key: key, body: body, digest: listingDigest(key, body), cost: cost}
}

// listingDigest is the hex of the first 16 bytes of SHA-256 over the
// key's fields (length-prefixed) and the body's length and CRC-32s
// (IEEE and Castagnoli): it differs for two bodies of a URL as a digest
// of the bodies would. The key pins the URLs and, by its tree SHA, the
// entries, so whatever anyone can push changes the digest as SHA-256 of
// the body would; what the key does not pin, the rendering code (another
// version of the server renders the same key), the 64 bits of CRC catch.
// SHA-256 of the body itself (740 KB for 1,000 entries) would cost more
// than rendering it; the CRCs cost far less.
func listingDigest(key listingKey, body []byte) string {
	var b []byte
	for _, f := range [...]string{key.api, key.web, key.rawBase, key.ref, key.path, key.tree} {
		b = binary.AppendUvarint(b, uint64(len(f)))
		b = append(b, f...)
	}
	b = binary.AppendUvarint(b, uint64(len(body)))
	b = binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(body))
	b = binary.BigEndian.AppendUint32(b, crc32.Checksum(body, castagnoli))
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// listingCache is a bounded LRU of rendered listings, safe for
// concurrent use.
type listingCache struct {
	mu      sync.Mutex
	entries map[listingKey]*list.Element // of *listing
	lru     list.List                    // front: most recently used
	bytes   int                          // sum of the entries' cost
}

// get returns the listing of key, if kept.
func (c *listingCache) get(key listingKey) (*listing, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		return nil, false
	}
	c.lru.MoveToFront(el)
	return el.Value.(*listing), true
}

// add keeps l unless its body is over maxCachedListing, evicting the
// least recently used listings beyond listingCacheBytes.
func (c *listingCache) add(l *listing) {
	if len(l.body) > maxCachedListing {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[listingKey]*list.Element{}
	}
	if el, ok := c.entries[l.key]; ok { // rendered by a concurrent request too
		c.lru.MoveToFront(el)
		return
	}
	c.entries[l.key] = c.lru.PushFront(l)
	c.bytes += l.cost
	for c.bytes > listingCacheBytes {
		old := c.lru.Remove(c.lru.Back()).(*listing)
		delete(c.entries, old.key)
		c.bytes -= old.cost
	}
}

// appendListing appends the JSON array of entries at pl exactly as
// encoding/json's Encoder (SetEscapeHTML(false), as httpapi.WriteJSON
// uses it) renders the []contentJSON that toContentJSON gives for them,
// without the trailing newline and without reflection
// (TestAppendListingMatchesEncoder compares the two). The URLs are
// written piece by piece: escaped paths, refs and SHAs are plain ASCII;
// a place whose own URLs would need JSON escaping is rendered through
// encoding/json.
func (pl place) appendListing(b []byte, entries []gitread.Entry) []byte {
	if !jsonPlain(pl.api) || !jsonPlain(pl.web) || !jsonPlain(pl.rawBase) {
		out := make([]contentJSON, 0, len(entries))
		for _, e := range entries {
			out = append(out, pl.toContentJSON(e))
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(out) // contentJSON always encodes
		return append(b, bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})...)
	}
	queryRef := url.QueryEscape(pl.ref)
	pathRef := escapePath(pl.ref)
	var esc []byte // the entry's escaped path
	b = append(b, '[')
	for i, e := range entries {
		if i > 0 {
			b = append(b, ',')
		}
		esc = appendEscapedPath(esc[:0], e.Path)
		b = append(b, `{"type":`...)
		b = wire.AppendString(b, string(e.Type))
		b = append(b, `,"size":`...)
		b = strconv.AppendInt(b, e.Size, 10)
		b = append(b, `,"name":`...)
		b = wire.AppendString(b, e.Name)
		b = append(b, `,"path":`...)
		b = wire.AppendString(b, e.Path)
		b = append(b, `,"sha":`...)
		b = wire.AppendString(b, e.SHA)

		b = append(b, `,"url":`...)
		self := len(b)
		b = append(b, '"')
		b = append(b, pl.api...)
		b = append(b, "/contents/"...)
		b = append(b, esc...)
		b = append(b, "?ref="...)
		b = append(b, queryRef...)
		b = append(b, '"')
		selfEnd := len(b)

		kind, gitKind := "blob", "blobs"
		if e.Type == gitread.EntryDir || e.Type == gitread.EntrySubmodule {
			kind, gitKind = "tree", "trees"
		}
		b = append(b, `,"git_url":`...)
		git := len(b)
		b = append(b, '"')
		b = append(b, pl.api...)
		b = append(b, "/git/"...)
		b = append(b, gitKind...)
		b = append(b, '/')
		b = appendPlain(b, e.SHA)
		b = append(b, '"')
		gitEnd := len(b)

		b = append(b, `,"html_url":`...)
		html := len(b)
		b = append(b, '"')
		b = append(b, pl.web...)
		b = append(b, '/')
		b = append(b, kind...)
		b = append(b, '/')
		b = append(b, pathRef...)
		b = append(b, '/')
		b = append(b, esc...)
		b = append(b, '"')
		htmlEnd := len(b)

		b = append(b, `,"download_url":`...)
		if e.Type == gitread.EntryFile || e.Type == gitread.EntrySymlink {
			b = append(b, '"')
			b = append(b, pl.rawBase...)
			b = append(b, '/')
			b = append(b, pathRef...)
			b = append(b, '/')
			b = append(b, esc...)
			b = append(b, '"')
		} else {
			b = append(b, "null"...)
		}
		b = append(b, `,"_links":{"self":`...)
		b = append(b, b[self:selfEnd]...)
		b = append(b, `,"git":`...)
		b = append(b, b[git:gitEnd]...)
		b = append(b, `,"html":`...)
		b = append(b, b[html:htmlEnd]...)
		b = append(b, "}}"...)
	}
	return append(b, ']')
}

// listingSize is the size of the listing of entries at pl, newline
// included, when names need no escaping (a little more, to spare
// appendListing a copy of the whole body as it grows).
func (pl place) listingSize(entries []gitread.Entry) int {
	// Per entry: the keys and punctuation, the SHA three times, the URLs
	// (url and self, git_url and git, html_url and html, download_url).
	per := 280 + 3*40 + 4*len(pl.api) + 2*len(pl.web) + len(pl.rawBase) + 2*len(url.QueryEscape(pl.ref)) + 3*len(escapePath(pl.ref))
	n := 3
	for _, e := range entries {
		n += per + len(e.Name) + 6*len(e.Path) // path, and escaped in 5 URLs
	}
	return n
}

// appendPlain appends s, which is plain for JSON when it is a SHA from
// git; anything else is escaped as in a JSON string (without quotes).
func appendPlain(b []byte, s string) []byte {
	if jsonPlain(s) {
		return append(b, s...)
	}
	q := wire.AppendString(nil, s)
	return append(b, q[1:len(q)-1]...)
}

// jsonPlain reports whether s is written as itself inside a JSON string:
// printable ASCII without quotes or backslashes. Every piece of a URL
// that is plain keeps the whole URL plain.
func jsonPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// appendEscapedPath appends escapePath(p) without allocating for
// segments that need no escaping. url.PathEscape leaves only plain ASCII.
func appendEscapedPath(b []byte, p string) []byte {
	for {
		seg, rest, more := strings.Cut(p, "/")
		b = append(b, url.PathEscape(seg)...)
		if !more {
			return b
		}
		b = append(b, '/')
		p = rest
	}
}

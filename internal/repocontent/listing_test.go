package repocontent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"testing"

	"forgeapi/internal/accounts"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/repos"
)

// TestAppendListingMatchesEncoder checks that appendListing writes, byte
// for byte, what encoding/json writes for the toContentJSON of the same
// entries (as the handler wrote listings before), for every entry type,
// names and refs that need URL or JSON escaping, the root and nested
// directories, and base URLs that are plain or need JSON escaping (the
// encoding/json fallback).
func TestAppendListingMatchesEncoder(t *testing.T) {
	t.Parallel()
	names := []string{"README.md", "with space", "é.txt", "日本語", `quo"te`, `back\slash`, "tab\tname",
		"ctl\x01\x7f", "bad\xffutf8", "<html>&amp;", "100%", "q?x=1#frag", "a+b", "semi;colon,comma", "\u2028sep",
		"emoji 🎉", "", ".hidden", "trailing.", "@at:=$"}
	types := []gitread.EntryType{gitread.EntryFile, gitread.EntryDir, gitread.EntrySymlink, gitread.EntrySubmodule}
	owner := &accounts.Account{ID: 1, Type: accounts.TypeUser, Login: "octo"}
	repo := &repos.Repository{ID: 2, Owner: owner, Name: "hello.world", DefaultBranch: "main"}
	bases := []string{"http://127.0.0.1:8080", "https://forge.example/api/v3", `https://bad"host\x`, "https://ünïcode.example"}
	refs := []string{"main", "feature/x", "v1.0", "ref with space", "a&b=c", "é/ü", strings.Repeat("f", 40)}
	for _, base := range bases {
		for _, ref := range refs {
			pl := newPlace(base, repo, ref)
			for _, dir := range []string{"", "docs", "with space/é", `deep/"q"/x`} {
				var entries []gitread.Entry
				for i, name := range names {
					typ := types[i%len(types)]
					size := int64(0)
					if typ == gitread.EntryFile || typ == gitread.EntrySymlink {
						size = int64(i * 1000)
					}
					entries = append(entries, gitread.Entry{Name: name, Path: path.Join(dir, name), Type: typ,
						SHA: fmt.Sprintf("%040x", i+1), Size: size})
				}
				for _, list := range [][]gitread.Entry{nil, entries[:1], entries} {
					out := make([]contentJSON, 0, len(list))
					for _, e := range list {
						out = append(out, pl.toContentJSON(e))
					}
					var want bytes.Buffer
					enc := json.NewEncoder(&want)
					enc.SetEscapeHTML(false)
					if err := enc.Encode(out); err != nil {
						t.Fatal(err)
					}
					got := append(pl.appendListing([]byte("prefix"), list), '\n')
					if !bytes.Equal(got, append([]byte("prefix"), want.Bytes()...)) {
						t.Fatalf("base %q ref %q dir %q, %d entries:\n got %s\nwant prefix%s", base, ref, dir, len(list), got, want.Bytes())
					}
				}
			}
		}
	}
}

// TestAppendEscapedPath checks appendEscapedPath against escapePath.
func TestAppendEscapedPath(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"", "a", "a/b", "/lead", "trail/", "a//b", "with space/é.txt", "q?#%/x;y,z", "\xff/ok"} {
		if got, want := string(appendEscapedPath([]byte("x"), p)), "x"+escapePath(p); got != want {
			t.Errorf("appendEscapedPath(%q) = %q, want %q", p, got, want)
		}
	}
}

// TestListingCacheBounded checks that the cache keeps at most
// listingCacheBytes of listings, evicts the least recently used first,
// and keeps no listing over maxCachedListing.
func TestListingCacheBounded(t *testing.T) {
	t.Parallel()
	var c listingCache
	mk := func(i, size int) *listing {
		key := listingKey{api: "a", web: "w", rawBase: "r", ref: "main", path: "d", tree: fmt.Sprint(i)}
		return &listing{key: key, body: make([]byte, size), cost: size + 256}
	}
	const size = 1 << 20
	n := listingCacheBytes / (size + 256)
	for i := range n {
		c.add(mk(i, size))
	}
	if _, ok := c.get(mk(0, 0).key); !ok { // 0 is now the most recently used
		t.Fatal("listing 0 evicted before the cache was full")
	}
	c.add(mk(n, size))
	if _, ok := c.get(mk(1, 0).key); ok {
		t.Error("the least recently used listing was kept beyond the bound")
	}
	for _, i := range []int{0, n} {
		if _, ok := c.get(mk(i, 0).key); !ok {
			t.Errorf("listing %d evicted", i)
		}
	}
	if c.bytes > listingCacheBytes || c.lru.Len() != len(c.entries) || len(c.entries) != n {
		t.Errorf("cache holds %d bytes in %d listings (%d in the map), bound %d", c.bytes, c.lru.Len(), len(c.entries), listingCacheBytes)
	}
	c.add(mk(n+1, maxCachedListing+1))
	if _, ok := c.get(mk(n+1, 0).key); ok {
		t.Error("a listing over maxCachedListing was kept")
	}
	for i := range 10 * n { // many small listings: the bytes stay bounded
		c.add(mk(2*n+i, 10))
	}
	if c.bytes > listingCacheBytes {
		t.Errorf("cache holds %d bytes, bound %d", c.bytes, listingCacheBytes)
	}
}

// TestListingSize checks that listingSize leaves room for the body of
// plain names, so that appendListing renders without growing it.
func TestListingSize(t *testing.T) {
	t.Parallel()
	owner := &accounts.Account{ID: 1, Type: accounts.TypeUser, Login: "octo"}
	repo := &repos.Repository{ID: 2, Owner: owner, Name: "big", DefaultBranch: "main"}
	for _, ref := range []string{"main", "feature/x", strings.Repeat("f", 40)} {
		pl := newPlace("http://127.0.0.1:45207", repo, ref)
		for _, dir := range []string{"", "big-dir", "a/b/c"} {
			var entries []gitread.Entry
			for i := range 1000 {
				name := fmt.Sprintf("file-%04d.txt", i)
				entries = append(entries, gitread.Entry{Name: name, Path: path.Join(dir, name), Type: gitread.EntryFile,
					SHA: fmt.Sprintf("%040x", i), Size: int64(i)})
			}
			size := pl.listingSize(entries)
			if body := append(pl.appendListing(nil, entries), '\n'); len(body) > size || len(body) < size*3/4 {
				t.Errorf("ref %q dir %q: listingSize %d, body %d bytes", ref, dir, size, len(body))
			}
		}
	}
}

// TestListingDigest checks that the digest changes with any field of
// the key and with any byte of the body, and only with them.
func TestListingDigest(t *testing.T) {
	t.Parallel()
	key := listingKey{api: "http://x/repos/o/r", web: "http://x/o/r", rawBase: "http://x/raw/o/r", ref: "main", path: "d", tree: strings.Repeat("a", 40)}
	body := []byte(strings.Repeat(`[{"type":"file"}]`, 1000) + "\n")
	d := listingDigest(key, body)
	if listingDigest(key, bytes.Clone(body)) != d || len(d) != 32 {
		t.Fatalf("digest %q is not a function of the key and body", d)
	}
	seen := map[string]string{d: "original"}
	note := func(what, digest string) {
		t.Helper()
		if prev, ok := seen[digest]; ok {
			t.Errorf("%s: same digest as %s", what, prev)
		}
		seen[digest] = what
	}
	for i, f := range []*string{&key.api, &key.web, &key.rawBase, &key.ref, &key.path, &key.tree} {
		k := key
		kf := []*string{&k.api, &k.web, &k.rawBase, &k.ref, &k.path, &k.tree}[i]
		*kf = *f + "x"
		note(fmt.Sprintf("key field %d", i), listingDigest(k, body))
	}
	k := key // the same bytes split differently between fields
	k.ref, k.path = "mai", "nd"
	note("fields split differently", listingDigest(k, body))
	for _, i := range []int{0, 1, len(body) / 2, len(body) - 2, len(body) - 1} {
		b := bytes.Clone(body)
		b[i] ^= 0x20
		note(fmt.Sprintf("body byte %d", i), listingDigest(key, b))
	}
	note("body one byte shorter", listingDigest(key, body[:len(body)-1]))
	note("body swapped halves", listingDigest(key, append(bytes.Clone(body[len(body)/2:]), body[:len(body)/2]...)))
}

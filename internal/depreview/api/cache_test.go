package api

import (
	"fmt"
	"sync"
	"testing"

	"forgeapi/internal/depreview"
)

func deps(n int) []depreview.Dependency {
	out := make([]depreview.Dependency, n)
	for i := range out {
		out[i].Name = fmt.Sprint(i)
	}
	return out
}

func TestManifestCacheEvictsLeastRecentlyUsed(t *testing.T) {
	t.Parallel()
	c := newManifestCache(30) // each entry below costs 10 + 1
	a, b, d := manifestKey{depreview.FormatPackageLock, "a"}, manifestKey{depreview.FormatPackageLock, "b"}, manifestKey{depreview.FormatPackageLock, "d"}
	c.put(a, deps(10))
	c.put(b, deps(10))
	if _, ok := c.get(a); !ok { // a is now the most recently used
		t.Fatal("a missing")
	}
	c.put(d, deps(10)) // 33 > 30: evicts b, the least recently used
	if _, ok := c.get(b); ok {
		t.Error("b survived eviction")
	}
	for _, k := range []manifestKey{a, d} {
		if got, ok := c.get(k); !ok || len(got) != 10 {
			t.Errorf("%v: %d deps, %v", k, len(got), ok)
		}
	}
	if c.size != 22 || c.len() != 2 {
		t.Errorf("size %d, %d entries; want 22, 2", c.size, c.len())
	}
	// The same blob as another format is another entry.
	if _, ok := c.get(manifestKey{depreview.FormatPackageJSON, "a"}); ok {
		t.Error("format ignored in the key")
	}
	c.put(manifestKey{depreview.FormatPackageLock, "huge"}, deps(30)) // larger than the whole cache
	if c.len() != 2 {
		t.Errorf("a manifest larger than the cache was stored")
	}
}

func TestManifestCacheOff(t *testing.T) {
	t.Parallel()
	c := newManifestCache(-1)
	c.put(manifestKey{blob: "a"}, deps(1))
	if _, ok := c.get(manifestKey{blob: "a"}); ok || c.len() != 0 {
		t.Error("a disabled cache stored something")
	}
}

func TestManifestCacheConcurrentUse(t *testing.T) {
	t.Parallel()
	c := newManifestCache(100)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 200 {
				k := manifestKey{blob: fmt.Sprint((g*7 + i) % 50)}
				if _, ok := c.get(k); !ok {
					c.put(k, deps(i%5))
				}
			}
		})
	}
	wg.Wait()
	if c.size > 100 {
		t.Errorf("size %d above the limit", c.size)
	}
}

func TestParseBasehead(t *testing.T) {
	t.Parallel()
	for in, want := range map[string][2]string{
		"main...feature/x":       {"main", "feature/x"},
		"a.b...c.d":              {"a.b", "c.d"},
		"v1.0...release/2.x/y.z": {"v1.0", "release/2.x/y.z"},
		"a...b...c":              {"a", "b...c"},
		"main....x":              {"main", ".x"},
	} {
		base, head, err := parseBasehead(in)
		if err != nil || base != want[0] || head != want[1] {
			t.Errorf("parseBasehead(%q) = %q, %q, %v", in, base, head, err)
		}
	}
	for _, bad := range []string{"", "main", "a..b", "...b", "a...", "..."} {
		if _, _, err := parseBasehead(bad); err == nil {
			t.Errorf("parseBasehead(%q) accepted", bad)
		}
	}
}

package depreview

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"forgeapi/internal/depreview/advisory"
)

// benchLockfiles returns two package-lock.json (v3) documents with n packages
// each, of which changed differ in version between base and head.
func benchLockfiles(tb testing.TB, n, changed int) (base, head []byte) {
	tb.Helper()
	build := func(bump bool) []byte {
		packages := map[string]any{"": map[string]any{"name": "bench", "version": "1.0.0"}}
		for i := range n {
			version := fmt.Sprintf("1.%d.0", i%50)
			if bump && i < changed {
				version = fmt.Sprintf("2.%d.0", i%50)
			}
			name := fmt.Sprintf("pkg-%05d", i)
			if i%10 == 0 {
				name = fmt.Sprintf("@scope%d/%s", i%7, name)
			}
			packages["node_modules/"+name] = map[string]any{
				"version":   version,
				"resolved":  "https://registry.npmjs.org/" + name + "/-/" + name + "-" + version + ".tgz",
				"integrity": "sha512-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==",
				"license":   "MIT",
				"dev":       i%3 == 0,
			}
		}
		data, err := json.Marshal(map[string]any{"name": "bench", "lockfileVersion": 3, "requires": true, "packages": packages})
		if err != nil {
			tb.Fatal(err)
		}
		return data
	}
	return build(false), build(true)
}

// benchIndex returns an index with one advisory per 25 packages.
func benchIndex(n int) *advisory.Index {
	var advs []advisory.Advisory
	for i := 0; i < n; i += 25 {
		name := fmt.Sprintf("pkg-%05d", i)
		if i%10 == 0 {
			name = fmt.Sprintf("@scope%d/%s", i%7, name)
		}
		advs = append(advs, advisory.Advisory{
			ID: fmt.Sprintf("GHSA-%04d", i), Severity: "high",
			Affected: []advisory.Affected{{OSVEcosystem: "npm", Ecosystem: "npm", Name: name,
				Ranges: []advisory.Range{{Type: "SEMVER", Events: []advisory.Event{{Introduced: "0"}, {Fixed: "1.30.0"}}}}}},
		})
	}
	return advisory.NewIndex(advs)
}

// BenchmarkParsePackageLock measures parsing both 5,000-package lockfiles.
func BenchmarkParsePackageLock(b *testing.B) {
	base, head := benchLockfiles(b, 5000, 200)
	ex := NewExtractor()
	ctx := context.Background()
	b.SetBytes(int64(len(base) + len(head)))
	b.ResetTimer()
	for b.Loop() {
		if _, err := ex.Extract(ctx, "package-lock.json", base); err != nil {
			b.Fatal(err)
		}
		if _, err := ex.Extract(ctx, "package-lock.json", head); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDiffAndMatch measures diffing the parsed lockfiles (200 upgrades:
// 400 change items) and matching every change against the advisory index.
func BenchmarkDiffAndMatch(b *testing.B) {
	base, head := benchLockfiles(b, 5000, 200)
	ex := NewExtractor()
	ctx := context.Background()
	baseDeps, err := ex.Extract(ctx, "package-lock.json", base)
	if err != nil {
		b.Fatal(err)
	}
	headDeps, err := ex.Extract(ctx, "package-lock.json", head)
	if err != nil {
		b.Fatal(err)
	}
	idx := benchIndex(5000)
	b.ResetTimer()
	for b.Loop() {
		changes := Diff([]ManifestChange{{Path: "package-lock.json", Base: baseDeps, Head: headDeps}})
		AttachVulnerabilities(changes, idx)
		if len(changes) != 400 {
			b.Fatalf("%d changes, want 400", len(changes))
		}
	}
}

// BenchmarkCompareEndToEnd is parse of both files plus diff and match, with
// the parse share reported as parse-ms/op.
func BenchmarkCompareEndToEnd(b *testing.B) {
	base, head := benchLockfiles(b, 5000, 200)
	ex := NewExtractor()
	ctx := context.Background()
	idx := benchIndex(5000)
	var parseNanos int64
	b.ResetTimer()
	for b.Loop() {
		start := time.Now().UnixNano()
		baseDeps, _ := ex.Extract(ctx, "package-lock.json", base)
		headDeps, _ := ex.Extract(ctx, "package-lock.json", head)
		parseNanos += time.Now().UnixNano() - start
		changes := Diff([]ManifestChange{{Path: "package-lock.json", Base: baseDeps, Head: headDeps}})
		AttachVulnerabilities(changes, idx)
	}
	b.ReportMetric(float64(parseNanos)/float64(b.N)/1e6, "parse-ms/op")
}

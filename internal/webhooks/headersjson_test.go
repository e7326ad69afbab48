package webhooks

import (
	"encoding/json"
	"maps"
	"testing"
)

// TestHeadersJSONReadsBackAsJSONMarshalWrites: the delivery log's header
// objects, written without reflection, decode to the same map as
// json.Marshal's (escapes, non-ASCII, invalid UTF-8, nil).
func TestHeadersJSONReadsBackAsJSONMarshalWrites(t *testing.T) {
	for _, m := range []map[string]string{
		nil,
		{},
		{"Accept": "*/*", "X-Hub-Signature-256": "sha256=ab", "content-type": "application/json"},
		{"x-quote": `a "b" \c`, "x-ctl": "a\tb\nc\x01", "x-html": "<a>&</a>", "x-utf8": "héllo ☃", "x-bad": "a\xffb"},
	} {
		got := headersJSON(m)
		var back map[string]string
		if err := json.Unmarshal([]byte(got), &back); err != nil {
			t.Fatalf("headersJSON(%q) = %s: %v", m, got, err)
		}
		want := map[string]string{}
		raw, _ := json.Marshal(m)
		if m != nil {
			if err := json.Unmarshal(raw, &want); err != nil {
				t.Fatal(err)
			}
		}
		if !maps.Equal(back, want) {
			t.Errorf("headersJSON(%q) reads back as %q, json.Marshal's as %q", m, back, want)
		}
	}
}

// BenchmarkHeadersJSON is the encoding of one delivery's request headers.
func BenchmarkHeadersJSON(b *testing.B) {
	m := map[string]string{"Accept": "*/*", "User-Agent": "Service-Hookshot/1", "X-Service-Delivery": "0f2c1e40-6c1b-11ef-9f3a-5b1d1e0c9a11",
		"X-Service-Event": "repository", "X-Service-Hook-ID": "12", "X-Service-Hook-Installation-Target-ID": "3",
		"X-Service-Hook-Installation-Target-Type": "repository", "X-GitHub-Delivery": "0f2c1e40-6c1b-11ef-9f3a-5b1d1e0c9a11",
		"X-GitHub-Event": "repository", "X-GitHub-Hook-ID": "12", "X-GitHub-Hook-Installation-Target-ID": "3",
		"X-GitHub-Hook-Installation-Target-Type": "repository", "content-type": "application/json",
		"X-Hub-Signature":     "sha1=0123456789abcdef0123456789abcdef01234567",
		"X-Hub-Signature-256": "sha256=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}
	b.Run("json.Marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = json.Marshal(m)
		}
	})
	b.Run("headersJSON", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = headersJSON(m)
		}
	})
}

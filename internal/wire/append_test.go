package wire

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// TestAppendMatchesEncoder checks the appenders against encoding/json's
// Encoder with SetEscapeHTML(false), as httpapi.WriteJSON configures it.
func TestAppendMatchesEncoder(t *testing.T) {
	t.Parallel()
	encode := func(v any) string {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		return string(bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}))
	}
	for _, s := range []string{"", "plain/url{?x}", "q\"b\\s", "<&>", "tab\there\n", "\x00\x1f\x7f",
		"é ü 日本", "\u2028\u2029", "bad \xff utf-8", "\xed\xa0\x80"} {
		if got, want := string(AppendString(nil, s)), encode(s); got != want {
			t.Errorf("AppendString(%q) = %s, want %s", s, got, want)
		}
	}
	for _, tm := range []Time{{}, T(time.Date(2026, 1, 2, 3, 4, 5, 999, time.FixedZone("X", -7200)))} {
		if got, want := string(tm.AppendJSON(nil)), encode(tm); got != want {
			t.Errorf("Time.AppendJSON = %s, want %s", got, want)
		}
	}
	o := Begin(nil)
	o.Strings("none", nil)
	o.Strings("empty", []string{})
	o.Strings("two", []string{"a", "<b>"})
	o.Value("map", map[string]int{"k": 1})
	want := `{"none":null,"empty":[],"two":["a","<b>"],"map":{"k":1}}`
	if got := string(o.End()); got != want {
		t.Errorf("object = %s, want %s", got, want)
	}
}

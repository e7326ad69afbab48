package webhooks

import (
	"encoding/json"
	"maps"
	"net/http"
	"strings"
	"testing"

	"forgeapi/internal/webhooks/hookshot"
)

// TestResponseHeadersJSONReadsBackAsJSONMarshalWrites: the delivery log's
// response.headers object, written without reflection, decodes to the
// map json.Marshal would have written (names lower-cased, a repeated
// header's values joined with ", ") through escapes, non-ASCII, invalid
// UTF-8 and nil; two spellings of one name join their values.
func TestResponseHeadersJSONReadsBackAsJSONMarshalWrites(t *testing.T) {
	for _, h := range []http.Header{
		nil,
		{},
		{"Content-Type": {"application/json"}, "Set-Cookie": {"a=1", "b=2"}, "X-Hub": {""}},
		{"X-Quote": {`a "b" \c`}, "X-Ctl": {"a\tb\nc\x01"}, "X-Html": {"<a>&</a>"}, "X-Utf8": {"héllo ☃"}, "X-Bad": {"a\xffb"}},
	} {
		got := responseHeadersJSON(h)
		want := map[string]string{}
		for k, v := range h {
			want[strings.ToLower(k)] = strings.Join(v, ", ")
		}
		checkReadsBack(t, got, want)
	}
	got := responseHeadersJSON(http.Header{"X_Dup": {"a"}, "x_dup": {"b", "c"}})
	var back map[string]string
	if err := json.Unmarshal([]byte(got), &back); err != nil || len(back) != 1 ||
		(back["x_dup"] != "a, b, c" && back["x_dup"] != "b, c, a") {
		t.Errorf("two spellings of one name: %s (%v)", got, err)
	}
}

// TestRequestHeadersJSONReadsBackAsJSONMarshalWrites: the request.headers
// object, with no identity headers left out, is json.Marshal's of the
// log's map, credentials masked, names in the same order.
func TestRequestHeadersJSONReadsBackAsJSONMarshalWrites(t *testing.T) {
	h, _ := requestHeadersForTest(t)
	b, implied := h.AppendStoredJSON(nil, hookshot.Identity{})
	got := string(b)
	want, err := json.Marshal(h.Map())
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) || implied != 0 {
		t.Errorf("AppendStoredJSON = %s (implied %d)\njson.Marshal = %s", got, implied, want)
	}
	if !strings.Contains(got, `"Authorization":"********"`) {
		t.Errorf("credentials not masked: %s", got)
	}
}

// requestHeadersForTest sends a delivery with a secret and credentials to
// an address no server listens on, and returns its recorded headers and
// its identity.
func requestHeadersForTest(t testing.TB) (hookshot.Headers, hookshot.Identity) {
	allow, err := hookshot.ParseAllowList("loopback")
	if err != nil {
		t.Fatal(err)
	}
	s := hookshot.NewSender(hookshot.Config{Allow: allow, Version: "1"})
	defer s.Close()
	req := hookshot.Request{URL: "http://127.0.0.1:9/hook", ContentType: hookshot.ContentJSON,
		Secret: "s", Username: "u", Password: "p", Event: "repository", DeliveryGUID: "0f2c1e40-6c1b-11ef-9f3a-5b1d1e0c9a11",
		HookID: 12, TargetID: 3, TargetType: hookshot.TargetRepository, Payload: []byte(`{"a":"\u00e9"}`)}
	res := s.Send(t.Context(), req)
	if len(res.RequestHeaders) < 10 {
		t.Fatalf("recorded headers %v", res.RequestHeaders.Map())
	}
	return res.RequestHeaders, hookshot.Identity{DeliveryGUID: req.DeliveryGUID, Event: req.Event, HookID: req.HookID,
		TargetID: req.TargetID, TargetType: req.TargetType}
}

func checkReadsBack(t *testing.T, got string, want map[string]string) {
	t.Helper()
	var back map[string]string
	if err := json.Unmarshal([]byte(got), &back); err != nil {
		t.Fatalf("%s: %v", got, err)
	}
	raw, _ := json.Marshal(want)
	wantBack := map[string]string{}
	if err := json.Unmarshal(raw, &wantBack); err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(back, wantBack) {
		t.Errorf("%s reads back as %q, json.Marshal's as %q", got, back, wantBack)
	}
}

// BenchmarkHeadersJSON is the encoding of one delivery's request headers
// as the log stores them and of a typical response's.
func BenchmarkHeadersJSON(b *testing.B) {
	h, id := requestHeadersForTest(b)
	resp := http.Header{"Content-Type": {"text/plain; charset=utf-8"}, "Date": {"Fri, 27 Nov 2026 11:00:00 GMT"},
		"Content-Length": {"2"}}
	b.Run("request", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = h.AppendStoredJSON(make([]byte, 0, 512), id)
		}
	})
	b.Run("response", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = responseHeadersJSON(resp)
		}
	})
}

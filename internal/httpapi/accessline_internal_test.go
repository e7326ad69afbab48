package httpapi

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"time"
)

// TestAccessLineIsWhatSlogWrites checks that a line written directly is
// byte for byte what slog's text and JSON handlers write for the record
// logRequest would otherwise give them, over strings that need quoting or
// escaping, durations of every unit and times in other zones.
func TestAccessLineIsWhatSlogWrites(t *testing.T) {
	zone := time.FixedZone("x", -(3*3600 + 30*60))
	strs := []string{"", "GET", "GET /repos/{owner}/{repo}", "a=b", `q"t`, `back\slash`, "tab\there", "nl\n",
		"\x00\x1f\x7f", "caf\u00e9", "\u2028\u2029", "\xff\xfe", "non\u00a0break", "<&>", "::1", "2001:db8::1",
		"emoji \U0001F600", "\u200b", "back\\slash and space", "a b\"c", "~ del\x7f", "GET /users/{username}/events"}
	durations := []time.Duration{0, 1, 999, 1500, 2*time.Millisecond + 345, 3 * time.Second, 2*time.Hour + time.Nanosecond, -5}
	times := []time.Time{
		time.Date(2026, 11, 27, 14, 49, 36, 0, time.UTC),
		time.Date(2026, 11, 27, 14, 49, 36, 123456789, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 100_000, zone),
		time.Date(1999, 12, 31, 23, 59, 59, 999_999_999, zone),
		time.Now(), // with a monotonic reading, which neither writes
	}
	n := 0
	for i, s := range strs {
		for j, d := range durations {
			tm := times[(i+j)%len(times)]
			l := accessLine{end: tm, method: s, route: strs[(i+1)%len(strs)], status: 200 + i, bytes: int64(j) << 40,
				elapsed: d, requestID: strs[(i+2)%len(strs)], kind: s, accountID: int64(i*j) - 3, tokenID: 1 << 62,
				client: strs[(i+3)%len(strs)]}
			for _, json := range []bool{false, true} {
				want := slogLine(t, &l, json)
				if got := appendAccessLine([]byte("prefix"), &l, json)[len("prefix"):]; !bytes.Equal(got, want) {
					t.Fatalf("json=%v:\n got %q\nwant %q", json, got, want)
				}
				n++
			}
		}
	}
	t.Logf("%d lines compared", n)
}

// slogLine returns what slog's handler writes for l's record.
func slogLine(t *testing.T, l *accessLine, json bool) []byte {
	var buf bytes.Buffer
	var h slog.Handler = slog.NewTextHandler(&buf, nil)
	if json {
		h = slog.NewJSONHandler(&buf, nil)
	}
	r := slog.NewRecord(l.end, slog.LevelInfo, "request", 0)
	r.AddAttrs(slog.String("method", l.method), slog.String("route", l.route), slog.Int("status", l.status),
		slog.Int64("bytes", l.bytes), slog.Duration("duration", l.elapsed), slog.String("request_id", l.requestID),
		slog.String("principal", l.kind), slog.Int64("principal_id", l.accountID), slog.Int64("token_id", l.tokenID),
		slog.String("client", l.client))
	if err := h.Handle(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

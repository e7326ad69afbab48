package main

import (
	"strings"
	"testing"
	"time"
)

// The timeline puts each receipt in the window of its receipt time and
// reports each window's count and latencies, an empty window included.
func TestPrintTimeline(t *testing.T) {
	start := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	receipts := []receipt{
		{at(10), 2 * time.Millisecond}, {at(20), 4 * time.Millisecond}, {at(90), 6 * time.Millisecond},
		{at(250), 40 * time.Millisecond},
	}
	var out strings.Builder
	printTimeline(&out, start, 100*time.Millisecond, receipts)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := [][]string{
		{"0.00s", "3", "4.0", "6.0", "6.0"},
		{"0.10s", "0"},
		{"0.20s", "1", "40.0", "40.0", "40.0"},
	}
	if len(lines) != 1+len(want) {
		t.Fatalf("got %d lines, want %d:\n%s", len(lines), 1+len(want), out.String())
	}
	for i, w := range want {
		if got := strings.Fields(lines[i+1]); strings.Join(got, " ") != strings.Join(w, " ") {
			t.Errorf("window %d: %q, want %q", i, got, w)
		}
	}
}

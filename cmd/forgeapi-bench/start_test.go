package main

import (
	"context"
	"os"
	"testing"
)

// The start measurement works end to end on the bare reference: it is
// built, logs its address, answers, and its peak RSS is read.
func TestMeasureStartOfTheBareServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a Go program")
	}
	ctx := context.Background()
	bin, cleanup, err := buildBare(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	r, err := measureStart(ctx, bin, nil, "/healthz", 0)
	if err != nil {
		t.Fatal(err)
	}
	if r.first <= 0 || r.first < r.listening {
		t.Errorf("first answer %s, listening %s: want the answer after the line", r.first, r.listening)
	}
	if r.rssFirst <= 0 || r.rssSettled < r.rssFirst {
		t.Errorf("peak RSS %d KB then %d KB", r.rssFirst, r.rssSettled)
	}
}

func TestPeakRSSOfThisProcess(t *testing.T) {
	if kb := peakRSS(os.Getpid()); kb <= 0 {
		t.Errorf("peakRSS(self) = %d KB", kb)
	}
	if kb := peakRSS(-1); kb != 0 {
		t.Errorf("peakRSS(-1) = %d, want 0", kb)
	}
}

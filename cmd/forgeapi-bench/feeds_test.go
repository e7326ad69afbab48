package main

import (
	"context"
	"strings"
	"testing"
)

// The first-page line states the bound for the database measured.
func TestFirstPageTarget(t *testing.T) {
	if got := firstPageTargetMS(""); got != 5 {
		t.Errorf("SQLite: %d ms, want 5", got)
	}
	if got := firstPageTargetMS("postgres://postgres@127.0.0.1:5432/test"); got != 10 {
		t.Errorf("PostgreSQL: %d ms, want 10", got)
	}
}

// With -rate-limit the polls run against a server whose rate limits are
// on, as forgeapi serve's are by default: each feed's 304 carries the
// budget's five header lines (13 for the anonymous /events, 16 for a
// token's feeds, Date included) and spends none of the budget. Were the
// polls charged, those of the first token feed would spend the token's
// 5,000 and the next feed's first read would be refused (403), which fails
// the run (checked).
func TestFeedsPollsWithRateLimits(t *testing.T) {
	b, err := parseFeedsFlags([]string{"-events", "500", "-users", "60", "-orgs", "2", "-repos", "40",
		"-first-pages=false", "-rate-limit", "-duration", "500ms", "-poll-workers", "2", "-data", t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	b.out = &out
	if err := b.run(context.Background()); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{"rate limits on", "/events (304, 13 lines)", "/users/u0/events (304, 16 lines)",
		"/users/u0/received_events (304, 16 lines)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in:\n%s", want, out.String())
		}
	}
}

// The first pages would spend the budget at once: -rate-limit asks for
// the polls alone.
func TestRateLimitNeedsThePollsAlone(t *testing.T) {
	if _, err := parseFeedsFlags([]string{"-rate-limit"}); err == nil || !strings.Contains(err.Error(), "-first-pages=false") {
		t.Errorf("-rate-limit with the first pages: %v, want an error naming -first-pages=false", err)
	}
}

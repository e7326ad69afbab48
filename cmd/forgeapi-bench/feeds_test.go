package main

import (
	"context"
	"strings"
	"testing"

	"forgeapi/internal/store/storetest"
)

// The first-page line states the target bound for the database measured.
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

// The fixture's bulk load drops the events' indexes and builds them
// again while the server's workers use other connections of the pool.
// A SQLite connection keeps the schema it last read, and one whose copy
// predates the drop refused to build the index ("index events_public
// already exists"): here a connection reads the schema, stays busy
// while the indexes are dropped, and is the pool's next connection when
// they are built again. The indexes come back as they were.
func TestIndexesRestoredPastAStaleConnection(t *testing.T) {
	ctx := context.Background()
	db := storetest.OpenSQLite(t)
	indexes := func() string {
		var defs []string
		rows, err := db.QueryContext(ctx, `SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'events' AND sql IS NOT NULL ORDER BY name`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var def string
			if err := rows.Scan(&def); err != nil {
				t.Fatal(err)
			}
			defs = append(defs, def)
		}
		return strings.Join(defs, "\n")
	}
	before := indexes()
	stale, err := db.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := stale.QueryRowContext(ctx, `SELECT count(*) FROM events WHERE public`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	restore, err := dropIndexes(ctx, db, "events")
	if err != nil {
		t.Fatal(err)
	}
	stale.Close() // back to the pool: the next connection it hands out
	if err := restore(); err != nil {
		t.Fatalf("restore the indexes: %v", err)
	}
	if after := indexes(); after != before || !strings.Contains(after, "events_public") {
		t.Errorf("indexes after the bulk load:\n%s\nwant:\n%s", after, before)
	}
}

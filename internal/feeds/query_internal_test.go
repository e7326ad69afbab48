package feeds

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"forgeapi/internal/store"
	"forgeapi/internal/store/storetest"
)

// TestUnionPagesMatchAScan checks the galloping union against a plain
// reading of the table, on events where the sources are dense, sparse
// and absent in the newest ids.
func TestUnionPagesMatchAScan(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.OpenSQLite(t)
	const n = 30000
	now := time.Now().UTC()
	err := db.Tx(ctx, func(tx *store.Tx) error {
		for start := 0; start < n; start += 500 {
			var sb strings.Builder
			sb.WriteString("INSERT INTO events (type, actor_id, actor_login, repo_id, public, payload, created_at) VALUES ")
			for i := start; i < start+500; i++ {
				if i > start {
					sb.WriteString(", ")
				}
				actor := i % 97 // actor 5 is everywhere; actor 1000 only among the oldest ids
				if i < 40 {
					actor = 1000
				}
				fmt.Fprintf(&sb, "('WatchEvent', %d, 'a', %d, %v, '{}', '%s')", actor, i%13, i%3 != 0, now.Format("2006-01-02 15:04:05"))
			}
			if _, err := tx.ExecContext(ctx, sb.String()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ id, actor, repo int64 }
	var all []row
	rows, err := db.QueryContext(ctx, `SELECT id, actor_id, repo_id FROM events ORDER BY id DESC`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.actor, &r.repo); err != nil {
			t.Fatal(err)
		}
		all = append(all, r)
	}
	rows.Close()

	for _, c := range []struct {
		name          string
		actors, repos []int64
	}{{"dense", []int64{5}, []int64{7}}, {"sparse", []int64{1000}, nil}, {"absent", []int64{4242}, []int64{99}}, {"mixed", []int64{1000, 5}, []int64{3}}} {
		var b sqlBuilder
		f := filter{key: c.name}
		for _, a := range c.actors {
			f.parts = append(f.parts, "actor_id = "+b.arg(a))
		}
		for _, r := range c.repos {
			f.parts = append(f.parts, "repo_id = "+b.arg(r))
		}
		f.args = b.args
		var want []int64
		for _, r := range all {
			if slices.Contains(c.actors, r.actor) || slices.Contains(c.repos, r.repo) {
				want = append(want, r.id)
			}
		}
		h := New(db, nil, Config{})
		for _, pg := range []struct{ offset, limit int }{{0, 30}, {30, 30}, {270, 30}, {0, 100}} {
			exp := want[min(pg.offset, len(want)):min(pg.offset+pg.limit, len(want))]
			// Without a hint, with the hint the first answer left, and
			// with one that falls short (a range of the newest id alone).
			for _, try := range []string{"fresh", "hinted", "short hint"} {
				if try == "short hint" {
					h.hints.put(c.name+"|"+strconv.Itoa(pg.offset+pg.limit), n)
				}
				got, err := pageIDs(ctx, h, c.name, f, 1, pg.offset, pg.limit)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, exp) {
					t.Errorf("%s offset %d (%s): got %v, want %v", c.name, pg.offset, try, got, exp)
				}
			}
		}
		if n, err := countUpTo(ctx, h, c.name, f, 1, 300); err != nil || n != min(300, len(want)) {
			t.Errorf("%s count: %d %v, want %d", c.name, n, err, min(300, len(want)))
		}
	}
}

// TestParseStoredTime checks the SQLite time reader against time.Parse
// with the driver's layouts, on the layout the driver writes and others.
func TestParseStoredTime(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"2026-11-23 13:30:55.806134081+00:00", "2026-11-23 13:30:55+00:00", "2026-11-23 13:30:55.5-07:30",
		"2024-02-29 23:59:59.000001+05:45", "2026-01-02T03:04:05.1+01:00", "2026-01-02 03:04:05.123",
		"2026-01-02T03:04", "2026-01-02", "2026-01-02 03:04:05Z", "2026-02-30 01:02:03+00:00", "2026-13-01 01:02:03+00:00", "garbage",
	} {
		var want time.Time
		var wantErr error = fmt.Errorf("no layout")
		for _, layout := range storedTimeLayouts {
			if v, err := time.Parse(layout, strings.TrimSuffix(s, "Z")); err == nil {
				want, wantErr = v, nil
				break
			}
		}
		got, err := parseStoredTime(s)
		if (err != nil) != (wantErr != nil) || !got.Equal(want) {
			t.Errorf("%q: got %v, %v; want %v, %v", s, got, err, want, wantErr)
		}
	}
}

// TestPostgresUnionTextIsOneForAnySources checks that on PostgreSQL a
// union feed's query has one text whatever its sources: a text per
// number of sources was planned afresh on every call (a custom plan of
// the whole union, longer to make than to run), since its generic plan
// never looked cheaper.
func TestPostgresUnionTextIsOneForAnySources(t *testing.T) {
	t.Parallel()
	var u0 int64 = 7
	few := sources{repos: []int64{1, 2}, readable: map[int64]bool{2: true}, followees: []int64{3}, viewer: viewer{user: u0}}
	many := sources{readable: map[int64]bool{}, viewer: viewer{user: u0}}
	for i := range int64(40) {
		many.repos = append(many.repos, 100+i)
		many.readable[100+i] = i%3 == 0
		many.followees = append(many.followees, 200+i)
	}
	for _, v := range []viewer{{user: u0}, {}} {
		few.viewer, many.viewer = v, v
		a, _ := selectIDs(store.Postgres, receivedFeed(u0, few, 200), 1, 30)
		b, _ := selectIDs(store.Postgres, receivedFeed(u0, many, 200), 1, 30)
		c, _ := selectIDs(store.Postgres, receivedFeed(u0, many, 10), 1, 30)
		if a != b || a != c {
			t.Errorf("viewer %+v: the received feed's texts differ:\n%s\n%s\n%s", v, a, b, c)
		}
	}
	a, _ := selectIDs(store.Postgres, networkFeed([]int64{1}, 200), 1, 30)
	b, _ := selectIDs(store.Postgres, networkFeed([]int64{1, 2, 3, 4, 5, 6}, 200), 1, 30)
	if a != b {
		t.Errorf("the network feed's texts differ:\n%s\n%s", a, b)
	}
}

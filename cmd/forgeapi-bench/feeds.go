package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"forgeapi/internal/app"
	"forgeapi/internal/auth"
	"forgeapi/internal/store"
)

// feedsBench is the feeds scenario's configuration.
type feedsBench struct {
	events, users, orgs, repos int
	duration                   time.Duration
	workers, pollWorkers       int
	database, dataDir          string
	cpuProfile                 string
	firstPages                 bool
	rateLimit                  bool
	out                        io.Writer // where the results are printed
}

// runFeeds stores a large activity history, then measures (a) the first
// page of each of the nine feeds and (b) conditional polls answered 304,
// beside a bare net/http handler that answers a fixed 304, with the same
// client in the same run.
func runFeeds(ctx context.Context, args []string) error {
	b, err := parseFeedsFlags(args)
	if err != nil {
		return err
	}
	return b.run(ctx)
}

// parseFeedsFlags is the feeds scenario's configuration from its
// command-line flags, printing to standard output.
func parseFeedsFlags(args []string) (*feedsBench, error) {
	b := &feedsBench{out: os.Stdout}
	fs := flag.NewFlagSet("feeds", flag.ContinueOnError)
	fs.IntVar(&b.events, "events", 1_000_000, "events to store")
	fs.IntVar(&b.users, "users", 2000, "users")
	fs.IntVar(&b.orgs, "orgs", 20, "organizations")
	fs.IntVar(&b.repos, "repos", 4000, "repositories (a fifth private, half in organizations)")
	fs.DurationVar(&b.duration, "duration", 3*time.Second, "how long each measurement runs")
	fs.IntVar(&b.workers, "workers", 2, "concurrent clients for the first-page measurements")
	fs.IntVar(&b.pollWorkers, "poll-workers", 8, "concurrent clients for the 304 measurements")
	fs.StringVar(&b.database, "database", "", "postgres://... (default SQLite in -data)")
	fs.StringVar(&b.dataDir, "data", "", "data directory (default a temporary one, removed after)")
	fs.BoolVar(&b.firstPages, "first-pages", true, "measure (a), the first pages; false measures the 304 polls alone")
	fs.StringVar(&b.cpuProfile, "cpuprofile", "", "write a CPU profile of the measurements to this file")
	fs.BoolVar(&b.rateLimit, "rate-limit", false, "run the server with its rate limits on, as forgeapi serve does by default: "+
		"a 304 then carries the budget's five header lines (and costs none of it); needs -first-pages=false, "+
		"as the first pages would spend the budget in a moment")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if b.rateLimit && b.firstPages {
		return nil, fmt.Errorf("-rate-limit measures the 304 polls alone: add -first-pages=false")
	}
	return b, nil
}

// run stores the history (or reuses the one in b.dataDir) and measures.
func (b *feedsBench) run(ctx context.Context) error {
	if b.dataDir == "" {
		dir, err := os.MkdirTemp("", "forgeapi-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		b.dataDir = dir
	}
	m, err := app.Start(ctx, app.Config{Addr: "127.0.0.1:0", DataDir: b.dataDir, DatabaseURL: b.database,
		Logger: discardLogger(), RateLimit: b.rateLimit})
	if err != nil {
		return err
	}
	defer m.Close()
	db := m.App.DB
	fmt.Fprintf(b.out, "database: %s; %d events, %d users, %d organizations, %d repositories\n", db.Dialect, b.events, b.users, b.orgs, b.repos)
	start := time.Now()
	fx, err := b.fixture(ctx, db)
	if err != nil {
		return fmt.Errorf("fixture: %w", err)
	}
	fmt.Fprintf(b.out, "stored in %s\n\n", time.Since(start).Round(time.Second))
	stopProfile, err := startCPUProfile(b.cpuProfile)
	if err != nil {
		return err
	}
	defer stopProfile()
	return b.measure(ctx, m.URL(), fx)
}

// fixture is what the measurements address.
type fixture struct {
	user, org, repo string // u0, its organization, a public repository of it with forks
	token           string // u0's classic token with the repo scope
}

func (b *feedsBench) fixture(ctx context.Context, db *store.DB) (*fixture, error) {
	if fx, err := b.reuse(ctx, db); fx != nil || err != nil {
		return fx, err
	}
	now := time.Now().UTC()
	rng := rand.New(rand.NewPCG(1, 2))
	var rows [][]any
	for i := range b.users {
		rows = append(rows, []any{"User", "u" + strconv.Itoa(i), now, now})
	}
	for i := range b.orgs {
		rows = append(rows, []any{"Organization", "o" + strconv.Itoa(i), now, now})
	}
	if err := insertRows(ctx, db, "accounts", []string{"type", "login", "created_at", "updated_at"}, rows); err != nil {
		return nil, err
	}
	ids, err := idsByLogin(ctx, db)
	if err != nil {
		return nil, err
	}
	user := func(i int) int64 { return ids["u"+strconv.Itoa(i)] }
	org := func(i int) int64 { return ids["o"+strconv.Itoa(i)] }

	rows = rows[:0]
	for o := range b.orgs {
		rows = append(rows, []any{org(o), user(o), "owner", now})
		for _, u := range rng.Perm(b.users)[:50] {
			if u != o {
				rows = append(rows, []any{org(o), user(u), "member", now})
			}
		}
	}
	if err := insertRows(ctx, db, "org_members", []string{"org_id", "user_id", "role", "created_at"}, dedupe(rows, 2)); err != nil {
		return nil, err
	}

	// Repositories: even ones in organizations, every fifth private; the
	// first is o0/repo-0 (public) and the next five are its forks.
	type repo struct {
		id, owner int64
		org       bool
		private   bool
		name      string
	}
	repos := make([]repo, b.repos)
	rows = rows[:0]
	for i := range repos {
		r := repo{name: "repo-" + strconv.Itoa(i), private: i%5 == 4}
		if i%2 == 0 {
			r.owner, r.org = org(i/2%b.orgs), true
		} else {
			r.owner = user(i / 2 % b.users)
		}
		repos[i] = r
		var forkOf any
		rows = append(rows, []any{r.owner, r.name, r.private, forkOf, now, now})
	}
	if err := insertRows(ctx, db, "repositories", []string{"owner_id", "name", "private", "fork_of_id", "created_at", "updated_at"}, rows); err != nil {
		return nil, err
	}
	repoIDs, err := column(ctx, db, `SELECT id FROM repositories ORDER BY id`)
	if err != nil {
		return nil, err
	}
	for i := range repos {
		repos[i].id = repoIDs[i]
	}
	if _, err := db.ExecContext(ctx, `UPDATE repositories SET fork_of_id = $1 WHERE id IN ($2, $3, $4, $5, $6) AND NOT private`,
		repos[0].id, repos[1].id, repos[3].id, repos[5].id, repos[7].id, repos[11].id); err != nil {
		return nil, err
	}

	// u0 follows 20 users, stars 20 repositories and watches 10.
	var follows, stars, subs [][]any
	for _, u := range rng.Perm(b.users - 1)[:20] {
		follows = append(follows, []any{user(0), user(u + 1), now})
	}
	for k, i := range rng.Perm(len(repos))[:30] {
		if repos[i].private && repos[i].owner != org(0) {
			continue // u0 could not have starred it
		}
		if k < 20 {
			stars = append(stars, []any{user(0), repos[i].id, now})
		} else {
			subs = append(subs, []any{user(0), repos[i].id, now})
		}
	}
	if err := insertRows(ctx, db, "follows", []string{"follower_id", "followee_id", "created_at"}, follows); err != nil {
		return nil, err
	}
	if err := insertRows(ctx, db, "stars", []string{"user_id", "repository_id", "created_at"}, stars); err != nil {
		return nil, err
	}
	if err := insertRows(ctx, db, "subscriptions", []string{"user_id", "repository_id", "created_at"}, subs); err != nil {
		return nil, err
	}

	// The events: over the last 29 days, oldest first, by random users
	// on random repositories.
	logins := map[int64]string{}
	for login, id := range ids {
		logins[id] = login
	}
	cols := []string{"type", "actor_id", "actor_login", "repo_id", "repo_name", "org_id", "org_login", "public", "payload", "created_at"}
	span := 29 * 24 * time.Hour
	first := now.Add(-span)
	types := []struct{ typ, payload string }{
		{"WatchEvent", `{"action":"started"}`},
		{"PushEvent", `{"repository_id":1,"push_id":1,"size":1,"distinct_size":1,"ref":"refs/heads/main","head":"2f1b9c0e6d0a8f4e1a7d5c3b9e8f7a6b5c4d3e2f","before":"0000000000000000000000000000000000000000","commits":[]}`},
		{"CreateEvent", `{"ref":"feature","ref_type":"branch","master_branch":"main","description":null,"pusher_type":"user"}`},
	}
	restore, err := dropIndexes(ctx, db, "events")
	if err != nil {
		return nil, err
	}
	const batch = 50_000
	for done := 0; done < b.events; done += batch {
		rows = rows[:0]
		for k := done; k < min(done+batch, b.events); k++ {
			actor := user(rng.IntN(b.users))
			r := repos[rng.IntN(len(repos))]
			var orgID any
			orgLogin := ""
			if r.org {
				orgID, orgLogin = r.owner, logins[r.owner]
			}
			t := types[k%len(types)]
			at := first.Add(time.Duration(float64(span) * float64(k) / float64(b.events)))
			rows = append(rows, []any{t.typ, actor, logins[actor], r.id, logins[r.owner] + "/" + r.name, orgID, orgLogin, !r.private, t.payload, at})
		}
		if err := insertRows(ctx, db, "events", cols, rows); err != nil {
			return nil, err
		}
	}
	if err := restore(); err != nil {
		return nil, err
	}
	if db.Dialect == store.Postgres { // autovacuum would; SQLite servers never run ANALYZE
		if _, err := db.ExecContext(ctx, `ANALYZE`); err != nil {
			return nil, err
		}
	}
	tok, err := auth.CreateToken(ctx, db, auth.TokenSpec{Kind: auth.KindClassic, UserID: user(0), Scopes: auth.Scopes{"repo"}})
	if err != nil {
		return nil, err
	}
	return &fixture{user: "u0", org: "o0", repo: "o0/repo-0", token: tok.Value}, nil
}

// reuse returns the fixture already stored in -data by an earlier run,
// or nil when there is none.
func (b *feedsBench) reuse(ctx context.Context, db *store.DB) (*fixture, error) {
	var u0 int64
	var events int
	if err := db.QueryRowContext(ctx, `SELECT COALESCE((SELECT id FROM accounts WHERE login = 'u0'), 0), (SELECT count(*) FROM events)`).Scan(&u0, &events); err != nil {
		return nil, err
	}
	if u0 == 0 {
		return nil, nil
	}
	if events != b.events {
		return nil, fmt.Errorf("-data holds %d events, not %d: use another directory", events, b.events)
	}
	tok, err := auth.CreateToken(ctx, db, auth.TokenSpec{Kind: auth.KindClassic, UserID: u0, Scopes: auth.Scopes{"repo"}})
	if err != nil {
		return nil, err
	}
	return &fixture{user: "u0", org: "o0", repo: "o0/repo-0", token: tok.Value}, nil
}

// dropIndexes drops the secondary indexes of a table for a bulk insert
// and returns the function that builds them again from their stored
// definitions (building an index once is much faster than growing it row
// by row). Both change the schema through execDDL.
func dropIndexes(ctx context.Context, db *store.DB, table string) (restore func() error, err error) {
	query := `SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = $1 AND sql IS NOT NULL`
	if db.Dialect == store.Postgres {
		query = `SELECT indexname, indexdef FROM pg_indexes WHERE tablename = $1 AND schemaname = current_schema() AND indexname NOT LIKE '%_pkey'`
	}
	rows, err := db.QueryContext(ctx, query, table)
	if err != nil {
		return nil, err
	}
	var defs, drops []string
	for rows.Next() {
		var name, def string
		if err := rows.Scan(&name, &def); err != nil {
			rows.Close()
			return nil, err
		}
		drops, defs = append(drops, "DROP INDEX "+name), append(defs, def)
	}
	rows.Close()
	if err := execDDL(ctx, db, drops...); err != nil {
		return nil, err
	}
	return func() error { return execDDL(ctx, db, defs...) }, nil
}

// execDDL changes the schema in one transaction of the store, which on
// SQLite runs on the connection every write transaction runs on, never
// on another connection of the pool: a SQLite connection keeps a copy
// of the schema it last read, and one whose copy predates a change made
// on another connection refuses, when it prepares it, a CREATE of what
// that change dropped ("index events_public already exists"; the
// server's workers use the pool's connections meanwhile). The texts are
// store.Dynamic, so that the statement cache does not prepare them on
// such a connection either.
func execDDL(ctx context.Context, db *store.DB, stmts ...string) error {
	return db.Tx(ctx, func(tx *store.Tx) error {
		for _, s := range stmts {
			if _, err := tx.ExecContext(ctx, store.Dynamic+s); err != nil {
				return err
			}
		}
		return nil
	})
}

// insertRows inserts rows in transactions of multi-row INSERTs.
func insertRows(ctx context.Context, db *store.DB, table string, cols []string, rows [][]any) error {
	perStatement := max(1, 4000/len(cols))
	return db.Tx(ctx, func(tx *store.Tx) error {
		for start := 0; start < len(rows); start += perStatement {
			chunk := rows[start:min(start+perStatement, len(rows))]
			var sb strings.Builder
			sb.WriteString("INSERT INTO " + table + " (" + strings.Join(cols, ", ") + ") VALUES ")
			args := make([]any, 0, len(chunk)*len(cols))
			for i, r := range chunk {
				if i > 0 {
					sb.WriteString(", ")
				}
				sb.WriteString("(")
				for j, v := range r {
					if j > 0 {
						sb.WriteString(", ")
					}
					args = append(args, v)
					sb.WriteString("$" + strconv.Itoa(len(args)))
				}
				sb.WriteString(")")
			}
			if _, err := tx.ExecContext(ctx, sb.String(), args...); err != nil {
				return err
			}
		}
		return nil
	})
}

// dedupe drops rows whose first n values repeat an earlier row's.
func dedupe(rows [][]any, n int) [][]any {
	seen := map[string]bool{}
	var out [][]any
	for _, r := range rows {
		k := fmt.Sprint(r[:n]...)
		if !seen[k] {
			seen[k] = true
			out = append(out, r)
		}
	}
	return out
}

func idsByLogin(ctx context.Context, db *store.DB) (map[string]int64, error) {
	rows, err := db.QueryContext(ctx, `SELECT id, login FROM accounts`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var id int64
		var login string
		if err := rows.Scan(&id, &login); err != nil {
			return nil, err
		}
		out[login] = id
	}
	return out, rows.Err()
}

func column(ctx context.Context, db *store.DB, query string) ([]int64, error) {
	rows, err := db.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var v sql.NullInt64
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v.Int64)
	}
	return out, rows.Err()
}

// measure runs (a) and (b) and prints the results.
func (b *feedsBench) measure(ctx context.Context, base string, fx *fixture) error {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256, DisableCompression: true}}
	var get requestMaker = func(path, token string, headers ...string) func() *http.Request {
		return func() *http.Request {
			req, _ := http.NewRequest("GET", base+path, nil)
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			for i := 0; i+1 < len(headers); i += 2 {
				req.Header.Set(headers[i], headers[i+1])
			}
			return req
		}
	}
	feeds := []feedPath{
		{"/events", ""},
		{"/networks/" + fx.repo + "/events", ""},
		{"/orgs/" + fx.org + "/events", ""},
		{"/repos/" + fx.repo + "/events", ""},
		{"/users/" + fx.user + "/events", fx.token},
		{"/users/" + fx.user + "/events/orgs/" + fx.org, fx.token},
		{"/users/" + fx.user + "/events/public", ""},
		{"/users/" + fx.user + "/received_events", fx.token},
		{"/users/" + fx.user + "/received_events/public", ""},
	}
	if b.firstPages {
		b.measureFirstPages(ctx, client, get, feeds)
	}
	return b.measurePolls(ctx, client, get, feeds)
}

// measureFirstPages is (a): the first page of each feed.
func (b *feedsBench) measureFirstPages(ctx context.Context, client *http.Client, get requestMaker, feeds []feedPath) {
	fmt.Fprintf(b.out, "(a) first page (30 events) of each feed, %d concurrent clients, %s each:\n", b.workers, b.duration)
	worst := time.Duration(0)
	for _, f := range feeds {
		load(ctx, client, "warm-up", 1, 200*time.Millisecond, http.StatusOK, get(f.path, f.token))
		r := load(ctx, client, f.path, b.workers, b.duration, http.StatusOK, get(f.path, f.token))
		fmt.Fprintln(b.out, "  "+r.String())
		worst = max(worst, r.p99)
	}
	fmt.Fprintf(b.out, "  worst p99: %.2f ms (target < %d ms)\n\n", ms(worst), firstPageTargetMS(b.database))
}

// firstPageTargetMS is the target bound on a feed's first page p99: 5 ms
// on SQLite, 10 ms on PostgreSQL (database is its URL, "" for SQLite).
func firstPageTargetMS(database string) int {
	if database == "" {
		return 5
	}
	return 10
}

// measurePolls is (b): conditional polls of three feeds answered 304,
// against the bare handlers.
func (b *feedsBench) measurePolls(ctx context.Context, client *http.Client, get requestMaker, feeds []feedPath) error {
	bare, err := bareNotModified(func() http.Header { return http.Header{"Etag": {`W/"fixed"`}} })
	if err != nil {
		return err
	}
	defer bare.Close()
	var replayed atomic.Pointer[http.Header]
	same, err := bareNotModified(func() http.Header { return *replayed.Load() })
	if err != nil {
		return err
	}
	defer same.Close()
	limits := "off"
	if b.rateLimit {
		limits = "on"
	}
	fmt.Fprintf(b.out, "(b) conditional polls answered 304, %d concurrent clients, %s each, the server's rate limits %s:\n",
		b.pollWorkers, b.duration, limits)
	bareGet := func(ln net.Listener, etag string) func() *http.Request {
		url := "http://" + ln.Addr().String() + "/events"
		return func() *http.Request {
			req, _ := http.NewRequest("GET", url, nil)
			req.Header.Set("If-None-Match", etag)
			return req
		}
	}
	bareReq := bareGet(bare, `W/"fixed"`)
	load(ctx, client, "warm-up", b.pollWorkers, 300*time.Millisecond, http.StatusNotModified, bareReq)
	// The machine's load drifts by more than the difference measured, so
	// each feed is measured in short rounds alternating with the bare
	// handlers, and compared with them over the same span of time: one
	// answers a 304 with its ETag alone, the other the same header lines
	// as the feed's 304 (the platform's request ids and media types, a
	// token's scopes, with -rate-limit the budget's lines), so that the
	// client reads the same bytes from both.
	rounds := max(2, int(b.duration/pollRound))
	fmt.Fprintf(b.out, "  each line: %d rounds of %s alternating with the bare handlers\n", rounds, pollRound)
	for _, f := range []feedPath{feeds[0], feeds[4], feeds[7]} {
		resp, err := client.Do(get(f.path, f.token)())
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		etag := resp.Header.Get("ETag")
		poll := get(f.path, f.token, "If-None-Match", etag)
		resp, err = client.Do(poll())
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotModified {
			return fmt.Errorf("%s: conditional poll answered %d, not 304", f.path, resp.StatusCode)
		}
		lines := len(resp.Header)
		h := resp.Header.Clone()
		h.Del("Date") // the bare server adds its own
		replayed.Store(&h)
		sameReq := bareGet(same, etag)
		load(ctx, client, "warm-up", b.pollWorkers, 300*time.Millisecond, http.StatusNotModified, poll)
		load(ctx, client, "warm-up", b.pollWorkers, 300*time.Millisecond, http.StatusNotModified, sameReq)
		var bares, sames, feed []result
		for range rounds {
			bares = append(bares, load(ctx, client, "bare net/http handler answering 304", b.pollWorkers, pollRound, http.StatusNotModified, bareReq))
			sames = append(sames, load(ctx, client, "bare, the feed's 304 header lines", b.pollWorkers, pollRound, http.StatusNotModified, sameReq))
			feed = append(feed, load(ctx, client, fmt.Sprintf("%s (304, %d lines)", f.path, lines), b.pollWorkers, pollRound, http.StatusNotModified, poll))
		}
		fmt.Fprintf(b.out, "  %s\n  %s\n  %s   %s of bare, %s of bare with the same header lines\n",
			merge(bares).String(), merge(sames).String(), merge(feed).String(), shareOf(feed, bares), shareOf(feed, sames))
		if n := merge(feed).errors; n > 0 {
			// A poll answered otherwise (a spent budget's 403, say) makes
			// the rate meaningless.
			return fmt.Errorf("%s: %d polls not answered 304", f.path, n)
		}
	}
	return nil
}

// shareOf is the throughput of runs as a share of the reference runs of
// the same rounds: over all rounds, and the lowest and highest round.
func shareOf(runs, ref []result) string {
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := range runs {
		share := 100 * runs[i].rps() / ref[i].rps()
		lo, hi = min(lo, share), max(hi, share)
	}
	return fmt.Sprintf("%.0f%% (rounds %.0f%% to %.0f%%)", 100*merge(runs).rps()/merge(ref).rps(), lo, hi)
}

// requestMaker returns a maker of GET requests of path with the token
// (none when "") and the header name and value pairs.
type requestMaker func(path, token string, headers ...string) func() *http.Request

// feedPath is a feed's path and the token it is read with ("" for none).
type feedPath struct{ path, token string }

// pollRound is the length of one round of the 304 measurements.
const pollRound = 500 * time.Millisecond

// bareNotModified serves on 127.0.0.1 a 304 with the header lines
// headers returns (net/http adds Date), set into the response's header map
// one by one as a handler sets them: a yardstick of (b).
func bareNotModified(headers func() http.Header) (net.Listener, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		for k, v := range headers() {
			h[k] = v
		}
		w.WriteHeader(http.StatusNotModified)
	}))
	return ln, nil
}

package feeds

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/store"
)

// filter is one feed for one viewer: a condition on the events table, or
// a union of conditions (parts) each of which is a range of one index,
// and a key naming the feed and viewer in ETags.
//
// A union is how the feeds that gather several sources (a network of
// repositories, the repositories and accounts a user receives events
// from) stay fast: each part yields its newest ids from its own index
// and the union keeps the newest of those, instead of one scan that
// tests every event against every source.
type filter struct {
	key   string
	where string   // when parts is empty
	parts []string // OR-ed conditions, each index-friendly
	args  []any
	// src is a union feed's sources, which PostgreSQL reads instead of
	// parts or where (see unionSources); nil for the other feeds.
	src *unionSources
}

// unionSources are the sources of a union feed as PostgreSQL reads them:
// the ids go in as three array parameters, and one LATERAL join per
// kind of source runs an index scan per source (see lateralIDs). The
// query's text and plan are then the same whatever the number of
// sources, where a UNION of one part per source is planned afresh on
// every call: PostgreSQL keeps planning a custom plan for it (longer than
// the query runs, and longer still when several plan at once) because its
// generic plan never costs less, so planning would be nearly all of the
// feed's time.
type unionSources struct {
	all    []int64 // repositories whose events all show
	public []int64 // repositories whose public events show
	actors []int64 // accounts whose events show as vis may see them
	vis    viewer
}

// sqlBuilder numbers placeholders as it collects arguments.
type sqlBuilder struct {
	args     []any
	public   string // the placeholder of true that isPublic uses, once
	readable string // the condition accessible built, once
}

func (b *sqlBuilder) arg(v any) string {
	b.args = append(b.args, v)
	return "$" + strconv.Itoa(len(b.args))
}

// The conditions the feeds combine. Each is written against the indexes
// of migrations 00002 and 00009: (public, id), (repo_id, id),
// (repo_id, public, id), (actor_id, id), (actor_id, public, id),
// (org_id, id), (org_id, public, id).

// isPublic is the condition that the event is public; every part of a
// union shares one placeholder (fewer arguments to bind).
func (b *sqlBuilder) isPublic() string {
	if b.public == "" {
		b.public = b.arg(true)
	}
	return "public = " + b.public
}

// viewer is whose private events a feed may show: none (the zero
// value: public events only), or those of the repositories user can read,
// narrowed for a fine-grained token to the repositories it selects
// (scoped: those of owner, all of them or the ones in repos), and for a
// credential that organizations enforcing SAML single sign-on refuse
// (access.SAMLRefusal) to the repositories of other owners (noSAML).
type viewer struct {
	user   int64
	scoped bool
	owner  int64
	all    bool
	repos  []int64
	noSAML bool
}

// key names the viewer in cache keys and ETags: viewers that may see
// different events have different keys.
func (v viewer) key() string {
	k := id(v.user)
	if v.noSAML {
		k += "~nosaml"
	}
	if !v.scoped {
		return k
	}
	k += "/" + id(v.owner) + "/"
	if v.all {
		return k + "all"
	}
	for i, r := range v.repos {
		if i > 0 {
			k += ","
		}
		k += id(r)
	}
	return k
}

// selects reports whether the token lets the viewer see private events of
// the repository (ownerID owns it; samlOwner reports whether the owner is
// an organization that enforces SAML single sign-on).
func (v viewer) selects(repoID, ownerID int64, samlOwner bool) bool {
	if v.noSAML && samlOwner {
		return false
	}
	if !v.scoped {
		return true
	}
	return ownerID == v.owner && (v.all || slices.Contains(v.repos, repoID))
}

// memberReads is the SQL condition that the membership m of the
// organization o reads the organization's private repositories: owners
// do, members unless the organization's base repository permission is
// none (see access.BaseRole).
func memberReads(m, o string) string {
	return "(" + m + ".role = '" + accounts.RoleOwner + "' OR " + o + ".base_repo_permission <> '" + accounts.BaseNone + "')"
}

// accessible is the condition that the event's repository is one the
// viewer can read: the user's own, one of an organization they belong
// to (see memberReads), or one they collaborate on, within the token's
// selection. It is correlated with the event's
// row, so it costs two primary-key lookups for each private event a
// scan meets (public events short-circuit the OR of visibility) and
// nothing up front: a union of dozens of parts no longer builds the set
// of readable repositories once per part. The text is built once per
// builder and reused by every part, with the same placeholders.
func (b *sqlBuilder) accessible(v viewer) string {
	if b.readable == "" {
		u := b.arg(v.user)
		c := "EXISTS (SELECT 1 FROM repositories r WHERE r.id = events.repo_id AND (r.owner_id = " + u +
			" OR EXISTS (SELECT 1 FROM org_members m JOIN accounts mo ON mo.id = m.org_id WHERE m.org_id = r.owner_id AND m.user_id = " + u +
			" AND " + memberReads("m", "mo") + ")" +
			" OR EXISTS (SELECT 1 FROM repo_grants rc WHERE rc.repository_id = r.id AND rc.user_id = " + u + "))"
		if v.scoped {
			c += " AND r.owner_id = " + b.arg(v.owner)
			if !v.all {
				c += " AND " + b.in("r.id", append([]int64{0}, v.repos...))
			}
		}
		if v.noSAML {
			c += " AND NOT EXISTS (SELECT 1 FROM accounts o WHERE o.id = r.owner_id AND o.type = " + b.arg(accounts.TypeOrg) +
				" AND o.saml_enforced = " + b.arg(true) + ")"
		}
		b.readable = c + ")"
	}
	return b.readable
}

func (b *sqlBuilder) in(column string, ids []int64) string {
	ph := make([]string, len(ids))
	for i, id := range ids {
		ph[i] = b.arg(id)
	}
	return column + " IN (" + strings.Join(ph, ", ") + ")"
}

func id(v int64) string { return strconv.FormatInt(v, 10) }

// visibility is what a viewer may see: public events only (the zero
// viewer), or also private events of repositories the viewer can read.
func (b *sqlBuilder) visibility(v viewer) string {
	if v.user == 0 {
		return b.isPublic()
	}
	return "(" + b.isPublic() + " OR " + b.accessible(v) + ")"
}

func publicFeed() filter {
	var b sqlBuilder
	return filter{key: "public", where: b.isPublic(), args: b.args}
}

func repoFeed(repoID int64, withPrivate bool) filter {
	var b sqlBuilder
	where := "repo_id = " + b.arg(repoID)
	key := "repo:" + id(repoID)
	if !withPrivate {
		where += " AND " + b.isPublic()
		key += ":public"
	}
	return filter{key: key, where: where, args: b.args}
}

// networkFeed is the public events of the repositories.
func networkFeed(repoIDs []int64, maxParts int) filter {
	var b sqlBuilder
	f := filter{}
	if len(repoIDs) > maxParts {
		f.where = b.in("repo_id", repoIDs) + " AND " + b.isPublic()
	} else {
		for _, r := range repoIDs {
			f.parts = append(f.parts, "repo_id = "+b.arg(r)+" AND "+b.isPublic())
		}
	}
	f.args = b.args
	f.src = &unionSources{public: repoIDs}
	return f
}

func orgFeed(orgID int64, withPrivate bool) filter {
	var b sqlBuilder
	where := "org_id = " + b.arg(orgID)
	key := "org:" + id(orgID)
	if !withPrivate {
		where += " AND " + b.isPublic()
		key += ":public"
	}
	return filter{key: key, where: where, args: b.args}
}

// actorFeed is a user's own events; v is the user when they may see
// their private events, else the zero viewer.
func actorFeed(actorID int64, v viewer) filter {
	var b sqlBuilder
	where := "actor_id = " + b.arg(actorID) + " AND " + b.visibility(v)
	return filter{key: actorKey(actorID, v), where: where, args: b.args}
}

// actorKey is the key of actorFeed(actorID, v), known without building
// its SQL (a poll answered from the page cache needs only the key).
func actorKey(actorID int64, v viewer) string { return "actor:" + id(actorID) + ":" + v.key() }

func receivedKey(userID int64, v viewer) string {
	return "received:" + id(userID) + ":" + v.key()
}

// sources are what a user receives events from.
type sources struct {
	repos     []int64 // starred or watched (not ignored)
	readable  map[int64]bool
	followees []int64
	viewer    viewer
}

// receivedFeed is the events a user receives: events of the repositories
// they star or watch and of the accounts they follow, as the sources'
// viewer may see them (a repository's private events when it can read it).
func receivedFeed(userID int64, src sources, maxParts int) filter {
	var b sqlBuilder
	f := filter{key: receivedKey(userID, src.viewer), src: &unionSources{actors: src.followees, vis: src.viewer}}
	for _, r := range src.repos {
		if src.viewer.user != 0 && src.readable[r] {
			f.src.all = append(f.src.all, r)
		} else {
			f.src.public = append(f.src.public, r)
		}
	}
	if len(src.repos)+len(src.followees) > maxParts {
		// 0 is no id: it keeps both lists valid SQL when one is empty.
		repos, actors := append([]int64{0}, src.repos...), append([]int64{0}, src.followees...)
		f.where = "(" + b.in("repo_id", repos) + " OR " + b.in("actor_id", actors) + ") AND " + b.visibility(src.viewer)
		f.args = b.args
		return f
	}
	for _, r := range src.repos {
		part := "repo_id = " + b.arg(r)
		if src.viewer.user == 0 || !src.readable[r] {
			part += " AND " + b.isPublic()
		}
		f.parts = append(f.parts, part)
	}
	for _, a := range src.followees {
		f.parts = append(f.parts, "actor_id = "+b.arg(a)+" AND "+b.visibility(src.viewer))
	}
	if len(f.parts) == 0 {
		f.where = "1 = 0"
	}
	f.args = b.args
	return f
}

// receivedSources reads what the user receives events from; readable
// marks the repositories whose private events the viewer may see.
func receivedSources(ctx context.Context, q querier, userID int64, v viewer) (sources, error) {
	src := sources{readable: map[int64]bool{}, viewer: v}
	rows, err := q.QueryContext(ctx, `
		SELECT 'repo', s.repository_id,
		       r.owner_id = $2 OR r.owner_id IN (SELECT m.org_id FROM org_members m JOIN accounts mo ON mo.id = m.org_id
		                                        WHERE m.user_id = $2 AND `+memberReads("m", "mo")+`)
		                   OR r.id IN (SELECT repository_id FROM repo_grants WHERE user_id = $2), r.owner_id,
		       o.type = $4 AND o.saml_enforced
		FROM (SELECT repository_id FROM stars WHERE user_id = $1
		      UNION SELECT repository_id FROM subscriptions WHERE user_id = $1 AND NOT ignored) AS s
		JOIN repositories r ON r.id = s.repository_id
		JOIN accounts o ON o.id = r.owner_id
		UNION ALL
		SELECT 'actor', followee_id, $3, 0, $3 FROM follows WHERE follower_id = $1`, userID, v.user, false, accounts.TypeOrg)
	if err != nil {
		return src, err
	}
	defer rows.Close()
	for rows.Next() {
		var kind string
		var v, owner int64
		var readable, samlOwner bool
		if err := rows.Scan(&kind, &v, &readable, &owner, &samlOwner); err != nil {
			return src, err
		}
		if kind == "repo" {
			src.repos = append(src.repos, v)
			src.readable[v] = readable && src.viewer.selects(v, owner, samlOwner)
		} else {
			src.followees = append(src.followees, v)
		}
	}
	return src, rows.Err()
}

// querier is what the feed queries run on.
type querier = store.Q

// limitBuckets are the LIMITs the id queries use: a page's limit is
// rounded up to one of them and sliced in Go, so that each feed has a
// handful of query texts, all kept prepared by the store's statement
// cache. (LIMIT is a literal: SQLite re-prepares a statement whose LIMIT
// is a bound parameter each time it runs.)
var limitBuckets = [...]int{30, 100, 300}

func limitBucket(n int) int {
	for _, b := range limitBuckets {
		if n <= b {
			return b
		}
	}
	return n
}

// selectIDs is the query of the newest n ids of the filter's events from
// floor on, newest first, in the dialect's SQL.
func selectIDs(dialect store.Dialect, f filter, floor int64, n int) (string, []any) {
	if dialect == store.Postgres && f.src != nil {
		return lateralIDs(f.src, floor, n)
	}
	b := sqlBuilder{args: append([]any(nil), f.args...)}
	fl := b.arg(floor)
	limit := " LIMIT " + strconv.Itoa(n)
	if len(f.parts) == 0 {
		return "SELECT id FROM events WHERE id >= " + fl + " AND " + f.where + " ORDER BY id DESC" + limit, b.args
	}
	terms := make([]string, len(f.parts))
	for i, p := range f.parts {
		terms[i] = "SELECT id FROM (SELECT id FROM events WHERE id >= " + fl + " AND " + p +
			" ORDER BY id DESC" + limit + ") AS s" + strconv.Itoa(i)
	}
	return "SELECT id FROM (" + strings.Join(terms, " UNION ") + ") AS u ORDER BY id DESC" + limit, b.args
}

// lateralIDs is the PostgreSQL query of the newest n ids of the
// sources' events from floor on, newest first: for each source (an
// element of an array parameter) a backward scan of its index, at most
// n rows, then the newest n of all. Its text depends only on n and the
// viewer's kind, so the store's statement cache keeps it prepared.
func lateralIDs(src *unionSources, floor int64, n int) (string, []any) {
	var b sqlBuilder
	all, public, actors := b.arg(nonNil(src.all)), b.arg(nonNil(src.public)), b.arg(nonNil(src.actors))
	fl, limit := b.arg(floor), " ORDER BY id DESC LIMIT "+strconv.Itoa(n)
	scan := func(ids, cond string) string {
		return "SELECT e.id FROM unnest(" + ids + "::bigint[]) AS s(src) CROSS JOIN LATERAL (SELECT id FROM events WHERE id >= " + fl +
			" AND " + cond + limit + ") AS e"
	}
	return "SELECT id FROM (" + scan(all, "repo_id = s.src") +
		" UNION " + scan(public, "repo_id = s.src AND "+b.isPublic()) +
		" UNION " + scan(actors, "actor_id = s.src AND "+b.visibility(src.vis)) +
		") AS u" + limit, b.args
}

// nonNil makes a nil slice empty: pgx sends a nil slice as NULL, and
// unnest(NULL) is no rows too, but an empty array says what is meant.
func nonNil(ids []int64) []int64 {
	if ids == nil {
		return []int64{}
	}
	return ids
}

// gallopStart is the first span of ids a union reads (see gallop).
const gallopStart = 4096

// gallop runs query (which takes the lowest id to read) over growing
// ranges of the newest ids, floor at the bottom, until it yields want
// ids or reaches floor. If a range of the newest ids holds want
// matches, the newest want matches all lie in it, so the answer is
// exact whatever the range's lowest id; a union of many sources then
// reads a few rows per source instead of want rows from each.
//
// hint (0: none) is a lowest id to try first: the one that sufficed the
// last time (see loHints). When it yields want ids, that is the answer,
// with no look-up of the newest id and no failed smaller range.
func gallop(ctx context.Context, q querier, floor, hint int64, want int, query func(lo int64) ([]int64, error)) ([]int64, error) {
	if hint > 0 {
		lo := max(floor, hint)
		ids, err := query(lo)
		if err != nil || len(ids) >= want || lo == floor {
			return ids, err
		}
	}
	var newest int64
	if err := q.QueryRowContext(ctx, `SELECT COALESCE(max(id), 0) FROM events`).Scan(&newest); err != nil {
		return nil, err
	}
	for span := int64(gallopStart); ; span *= 8 {
		lo := max(floor, newest-span)
		if hint > 0 && lo >= hint && lo > floor {
			continue // no more than the hint's range, which fell short
		}
		ids, err := query(lo)
		if err != nil || len(ids) >= want || lo == floor {
			return ids, err
		}
	}
}

// loHints remembers, for each union feed and depth, the lowest id from
// which its last answer could be read: the want-th newest id, or the
// window's floor when the feed held fewer. It only steers gallop (any
// lowest id gives the exact answer); as events are added the hinted
// range holds more of them and still suffices, and each answer moves
// the hint up to what it needed.
type loHints struct {
	mu sync.Mutex
	lo map[string]int64
}

const maxHints = 10000

func newLoHints() *loHints { return &loHints{lo: map[string]int64{}} }

func (h *loHints) get(key string) int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lo[key]
}

func (h *loHints) put(key string, lo int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.lo) >= maxHints {
		clear(h.lo)
	}
	h.lo[key] = lo
}

// windowFloor caches the id of the first event inside the feed window,
// so that every feed query is a range scan of an (x, id) index from that
// id instead of a filter on created_at. The cached id is refreshed when
// the window's start has moved by more than a minute; a stale id is
// smaller than the true one, so the window reaches at most a minute
// further back than Config.Window, never less.
type windowFloor struct {
	mu     sync.Mutex
	cutoff time.Time
	id     int64
}

const floorRefresh = time.Minute

// get returns the smallest id of an event created at or after cutoff;
// when no event is that new, one more than the largest id.
func (f *windowFloor) get(ctx context.Context, q querier, cutoff time.Time) (int64, error) {
	f.mu.Lock()
	cached, cachedCutoff := f.id, f.cutoff
	f.mu.Unlock()
	if !cachedCutoff.IsZero() && !cutoff.Before(cachedCutoff) && cutoff.Sub(cachedCutoff) < floorRefresh {
		return cached, nil
	}
	floor, err := firstIDSince(ctx, q, cutoff)
	if err != nil {
		return 0, err
	}
	f.mu.Lock()
	f.cutoff, f.id = cutoff, floor
	f.mu.Unlock()
	return floor, nil
}

func firstIDSince(ctx context.Context, q querier, cutoff time.Time) (int64, error) {
	var floor int64
	err := q.QueryRowContext(ctx, `SELECT id FROM events WHERE created_at >= $1 ORDER BY created_at, id LIMIT 1`, cutoff).Scan(&floor)
	if err = store.Normalize(err); err == store.ErrNotFound {
		err = q.QueryRowContext(ctx, `SELECT COALESCE(max(id), 0) + 1 FROM events`).Scan(&floor)
	}
	return floor, err
}

// pageIDs returns the ids of the page's events, newest first. key names
// the feed and viewer (for the hints of a union's range).
func pageIDs(ctx context.Context, h *Handler, key string, f filter, floor int64, offset, limit int) ([]int64, error) {
	n, want := limitBucket(offset+limit), offset+limit
	var all []int64
	var err error
	lateral := h.db.Dialect == store.Postgres && f.src != nil
	if !lateral && len(f.parts) == 0 {
		query, args := selectIDs(h.db.Dialect, f, floor, n)
		all, err = scanIDs(ctx, h.db, n, query, args)
	} else {
		// A union's text depends on its number of sources: its own
		// statement cache keeps it out of the shared one. PostgreSQL's
		// form has one text whatever the sources: the store's statement
		// cache keeps it prepared.
		var q queryer = h.unions
		if lateral {
			q = h.db
		}
		hintKey := key + "|" + strconv.Itoa(want)
		all, err = gallop(ctx, h.db, floor, h.hints.get(hintKey), want, func(lo int64) ([]int64, error) {
			query, args := selectIDs(h.db.Dialect, f, lo, n)
			return scanIDs(ctx, q, n, query, args)
		})
		if err == nil {
			h.hints.put(hintKey, reached(all, want, floor))
		}
	}
	if err != nil {
		return nil, err
	}
	all = all[:min(len(all), want)]
	return all[min(offset, len(all)):], nil
}

// reached is the lowest id an answer of want ids needed: the want-th
// newest, or floor when the feed held fewer.
func reached(ids []int64, want int, floor int64) int64 {
	if len(ids) >= want {
		return ids[want-1]
	}
	return floor
}

// queryer runs queries: the store, or the unions' statement cache.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func scanIDs(ctx context.Context, q queryer, capacity int, query string, args []any) ([]int64, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	ids := make([]int64, 0, capacity)
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		ids = append(ids, v)
	}
	return ids, rows.Err()
}

// countUpTo counts the filter's events from floor on, stopping at limit.
func countUpTo(ctx context.Context, h *Handler, key string, f filter, floor int64, limit int) (int, error) {
	ids, err := pageIDs(ctx, h, key, f, floor, 0, limit)
	return len(ids), err
}

// row is one stored event.
type row struct {
	ID         int64
	Type       string
	ActorID    int64
	ActorLogin string
	RepoID     *int64
	RepoName   string
	OrgID      *int64
	OrgLogin   string
	Public     bool
	Payload    string
	CreatedAt  time.Time
}

// eventsByID loads the events with the ids, newest first.
func eventsByID(ctx context.Context, db *store.DB, ids []int64) ([]row, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	// Padded with 0 (no event's id) to a bucket size: a few query texts.
	padded := append(make([]int64, 0, limitBucket(len(ids))), ids...)
	for len(padded) < cap(padded) {
		padded = append(padded, 0)
	}
	// On SQLite, created_at is read as the stored text (+created_at has
	// no declared type, which the driver would parse, trying two layouts
	// per value through time.Parse) and parsed by scanTime.
	createdAt := "created_at"
	if db.Dialect == store.SQLite {
		createdAt = "+created_at"
	}
	var b sqlBuilder
	query := `SELECT id, type, actor_id, actor_login, repo_id, repo_name, org_id, org_login, public, payload, ` + createdAt + `
		FROM events WHERE ` + b.in("id", padded) + ` ORDER BY id DESC`
	rows, err := db.QueryContext(ctx, query, b.args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([]row, 0, len(ids))
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.ID, &r.Type, &r.ActorID, &r.ActorLogin, &r.RepoID, &r.RepoName, &r.OrgID, &r.OrgLogin,
			&r.Public, &r.Payload, scanTime{&r.CreatedAt}); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// scanTime scans a time: a time.Time (PostgreSQL), or the text that the
// SQLite driver stores times as.
type scanTime struct{ t *time.Time }

func (s scanTime) Scan(v any) error {
	var err error
	switch v := v.(type) {
	case time.Time:
		*s.t = v
	case string:
		*s.t, err = parseStoredTime(v)
	case []byte:
		*s.t, err = parseStoredTime(string(v))
	default:
		err = fmt.Errorf("created_at: unexpected %T", v)
	}
	return err
}

// storedTimeLayouts are the layouts the SQLite driver reads times in;
// the first is the one it writes (store opens it with _time_format=sqlite).
var storedTimeLayouts = [...]string{
	"2006-01-02 15:04:05.999999999-07:00",
	"2006-01-02T15:04:05.999999999-07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04",
	"2006-01-02T15:04",
	"2006-01-02",
}

// parseStoredTime reads a time as the SQLite driver would: the layout it
// writes, "2006-01-02 15:04:05.999999999-07:00", without time.Parse;
// anything else through the driver's layouts in turn.
func parseStoredTime(s string) (time.Time, error) {
	if t, ok := parseWrittenTime(s); ok {
		return t, nil
	}
	ts, _ := strings.CutSuffix(s, "Z")
	for _, layout := range storedTimeLayouts {
		if t, err := time.Parse(layout, ts); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("created_at: unreadable time %q", s)
}

// parseWrittenTime parses the layout the SQLite driver writes; ok is
// false for anything else (or a date time.Parse would refuse).
func parseWrittenTime(s string) (time.Time, bool) {
	if len(s) < 25 || s[4] != '-' || s[7] != '-' || s[10] != ' ' || s[13] != ':' || s[16] != ':' {
		return time.Time{}, false
	}
	num := func(from, to int) int {
		n := 0
		for _, c := range []byte(s[from:to]) {
			if c < '0' || c > '9' {
				return -1
			}
			n = n*10 + int(c-'0')
		}
		return n
	}
	year, month, day, hour, minute, sec := num(0, 4), num(5, 7), num(8, 10), num(11, 13), num(14, 16), num(17, 19)
	i, nsec := 19, 0
	if s[i] == '.' {
		i++
		digits := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' && digits < 9 {
			nsec = nsec*10 + int(s[i]-'0')
			i++
			digits++
		}
		if digits == 0 {
			return time.Time{}, false
		}
		for ; digits < 9; digits++ {
			nsec *= 10
		}
	}
	if len(s)-i != 6 || (s[i] != '+' && s[i] != '-') || s[i+3] != ':' {
		return time.Time{}, false
	}
	offHour, offMin := num(i+1, i+3), num(i+4, i+6)
	if year < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 || minute < 0 || minute > 59 ||
		sec < 0 || sec > 59 || offHour < 0 || offHour > 23 || offMin < 0 || offMin > 59 {
		return time.Time{}, false
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC)
	if t.Day() != day {
		return time.Time{}, false // past the month's end
	}
	offset := time.Duration(offHour)*time.Hour + time.Duration(offMin)*time.Minute
	if s[i] == '+' {
		offset = -offset
	}
	return t.Add(offset), true
}

package feeds

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"forgeapi/internal/store"
)

// filter is one feed for one viewer: a condition on the events table and
// a key naming it in ETags.
type filter struct {
	key   string
	where string
	args  []any
}

// sqlBuilder numbers placeholders as it collects arguments.
type sqlBuilder struct {
	args []any
}

func (b *sqlBuilder) arg(v any) string {
	b.args = append(b.args, v)
	return "$" + strconv.Itoa(len(b.args))
}

// The conditions the feeds combine. Each is written against the indexes
// of migrations 00002 and 00009: (public, id), (repo_id, id),
// (repo_id, public, id), (actor_id, id), (actor_id, public, id),
// (org_id, id), (org_id, public, id).

func (b *sqlBuilder) isPublic() string { return "public = " + b.arg(true) }

// accessible is the condition that the event's repository is one the user
// can read: their own, or one of an organization they belong to.
func (b *sqlBuilder) accessible(userID int64) string {
	u := b.arg(userID)
	return "repo_id IN (SELECT id FROM repositories WHERE owner_id = " + u +
		" OR owner_id IN (SELECT org_id FROM org_members WHERE user_id = " + u + "))"
}

// received is the condition that the user receives the event: it is on a
// repository the user stars or watches (not ignored), or by an account
// the user follows.
func (b *sqlBuilder) received(userID int64) string {
	u := b.arg(userID)
	return "(repo_id IN (SELECT repository_id FROM stars WHERE user_id = " + u +
		" UNION SELECT repository_id FROM subscriptions WHERE user_id = " + u + " AND NOT ignored)" +
		" OR actor_id IN (SELECT followee_id FROM follows WHERE follower_id = " + u + "))"
}

func (b *sqlBuilder) in(column string, ids []int64) string {
	ph := make([]string, len(ids))
	for i, id := range ids {
		ph[i] = b.arg(id)
	}
	return column + " IN (" + strings.Join(ph, ", ") + ")"
}

func id(v int64) string { return strconv.FormatInt(v, 10) }

// visibility combines a feed's scope with what the viewer may see:
// public events only, or also private events of repositories the viewer
// (userID) can read.
func (b *sqlBuilder) visibility(privateFor int64) string {
	if privateFor == 0 {
		return b.isPublic()
	}
	return "(" + b.isPublic() + " OR " + b.accessible(privateFor) + ")"
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

func networkFeed(rootID int64, repoIDs []int64) filter {
	var b sqlBuilder
	where := b.in("repo_id", repoIDs) + " AND " + b.isPublic()
	return filter{key: "network:" + id(rootID) + ":" + id(int64(len(repoIDs))), where: where, args: b.args}
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

// actorFeed is a user's own events; privateFor is the user when they may
// see their private events, else 0.
func actorFeed(actorID, privateFor int64) filter {
	var b sqlBuilder
	where := "actor_id = " + b.arg(actorID)
	if privateFor == 0 {
		where += " AND " + b.isPublic()
	} else {
		where += " AND " + b.visibility(privateFor)
	}
	return filter{key: "actor:" + id(actorID) + ":" + id(privateFor), where: where, args: b.args}
}

// receivedFeed is the events a user receives; privateFor as in actorFeed.
func receivedFeed(userID, privateFor int64) filter {
	var b sqlBuilder
	where := b.received(userID) + " AND " + b.visibility(privateFor)
	return filter{key: "received:" + id(userID) + ":" + id(privateFor), where: where, args: b.args}
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
func (f *windowFloor) get(ctx context.Context, q store.Q, cutoff time.Time) (int64, error) {
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

func firstIDSince(ctx context.Context, q store.Q, cutoff time.Time) (int64, error) {
	var floor int64
	err := q.QueryRowContext(ctx, `SELECT id FROM events WHERE created_at >= $1 ORDER BY created_at, id LIMIT 1`, cutoff).Scan(&floor)
	if err = store.Normalize(err); err == store.ErrNotFound {
		err = q.QueryRowContext(ctx, `SELECT COALESCE(max(id), 0) + 1 FROM events`).Scan(&floor)
	}
	return floor, err
}

// pageIDs returns the ids of the page's events, newest first.
func pageIDs(ctx context.Context, q store.Q, f filter, floor int64, offset, limit int) ([]int64, error) {
	b := sqlBuilder{args: append([]any(nil), f.args...)}
	query := "SELECT id FROM events WHERE id >= " + b.arg(floor) + " AND " + f.where +
		" ORDER BY id DESC LIMIT " + b.arg(limit) + " OFFSET " + b.arg(offset)
	rows, err := q.QueryContext(ctx, query, b.args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	ids := make([]int64, 0, limit)
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		ids = append(ids, v)
	}
	return ids, rows.Err()
}

// countUpTo counts the feed's events, stopping at limit.
func countUpTo(ctx context.Context, q store.Q, f filter, floor int64, limit int) (int, error) {
	b := sqlBuilder{args: append([]any(nil), f.args...)}
	query := "SELECT count(*) FROM (SELECT 1 FROM events WHERE id >= " + b.arg(floor) + " AND " + f.where +
		" LIMIT " + b.arg(limit) + ") AS capped"
	var n int
	err := q.QueryRowContext(ctx, query, b.args...).Scan(&n)
	return n, err
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
func eventsByID(ctx context.Context, q store.Q, ids []int64) ([]row, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	var b sqlBuilder
	query := `SELECT id, type, actor_id, actor_login, repo_id, repo_name, org_id, org_login, public, payload, created_at
		FROM events WHERE ` + b.in("id", ids) + ` ORDER BY id DESC`
	rows, err := q.QueryContext(ctx, query, b.args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([]row, 0, len(ids))
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.ID, &r.Type, &r.ActorID, &r.ActorLogin, &r.RepoID, &r.RepoName, &r.OrgID, &r.OrgLogin,
			&r.Public, &r.Payload, &r.CreatedAt); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

package repos

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"time"

	"forgeapi/internal/store"
)

// standingTables are the tables whose writes drop the lookups of
// ByOwnerAndNameWithMembership: the owner, the owner's members, and the
// repo_grants view (collaborators, and team members, team ancestors and
// team repositories; teams, whose deletes cascade into the last three;
// organization roles and their users and teams),
// and the repositories added or removed. An update of a repository (a
// PATCH, a push's pushed_at, a rename, a transfer) only makes the
// lookups of the repositories read again by id (see StandingCache).
var standingTables = []string{store.RowsOf("repositories"), "accounts", "org_members", "repo_collaborators",
	"teams", "team_members", "team_ancestors", "team_repos", "org_roles", "org_role_users", "org_role_teams"}

// statsTables are the tables whose writes change what StatsOf reads:
// stars, subscriptions, forks (repositories added or removed) and issues,
// which triggers count into repository_counts; repository_counts itself,
// whose size_kb is written by statements of the code (MeasureSize);
// repository_licenses (the detected license, written on pushes); and
// accounts, whose deletes cascade into them. Of repositories and accounts
// only rows added or removed count: a fork is a new repository
// (fork_of_id is written only by its INSERT; a deleted parent's forks
// lose it by cascade, with a DELETE), and an update of a repository,
// which every PATCH is, changes none of the counters. Every write to
// issues counts (its state is one of its columns), comments' counts
// included, which a text cannot tell apart.
var statsTables = []string{"stars", "subscriptions", "issues", "repository_counts", "repository_licenses",
	store.RowsOf("repositories"), store.RowsOf("accounts")}

// StandingCache serves ByOwnerAndNameWithMembership, the access guard's
// lookup of every repository route, from a store.ReadCache dropped by
// the writes to standingTables. The repository row itself is kept with
// the count of writes to repositories it was read after: once a
// repository is updated, a lookup reads the row again by id (a search of
// the primary key, against the lookup's join of the owner, the owner's
// members and the grants by name) and keeps the standing if the row
// still has the owner and name looked up; otherwise (renamed,
// transferred) it looks up anew. A write through this process is seen by
// the next lookup, other processes' writes when their notification
// arrives or within the TTL. Each call returns its own copy of the
// repository, which the caller may change.
type StandingCache struct {
	c *store.ReadCache[standingKey, standingValue]
	// repoWrites counts the committed writes to repositories (updates
	// included), as DB.Watch reports them.
	repoWrites atomic.Uint64
}

// standingKey is the lookup as the request spells it: owner and name are
// not folded (the query compares them case-insensitively, so a spelling
// that differs only in case is a key of its own, never a wrong match).
type standingKey struct {
	owner, name string
	userID      int64
}

type standingValue struct {
	standing Standing
	repo     *atomic.Pointer[repoRead]
}

// repoRead is a repository row as read after the given count of writes
// to repositories.
type repoRead struct {
	repo   *Repository
	writes uint64
}

// NewStandingCache returns a StandingCache of db keeping a lookup for at
// most ttl (0: store.DefaultReadCacheTTL).
func NewStandingCache(db *store.DB, ttl time.Duration) *StandingCache {
	c := &StandingCache{c: store.NewReadCache[standingKey, standingValue](db, ttl, standingTables...)}
	db.Watch(func() { c.repoWrites.Add(1) }, "repositories")
	return c
}

// ByOwnerAndNameWithMembership is the package function of that name,
// from the cache when it holds the lookup. Lookups that fail (not found
// included) are not cached.
func (c *StandingCache) ByOwnerAndNameWithMembership(ctx context.Context, q store.Q, owner, name string, userID int64) (*Repository, Standing, error) {
	key := standingKey{owner, name, userID}
	writes := c.repoWrites.Load()
	v, err := c.c.Get(key, func() (standingValue, error) {
		r, st, err := ByOwnerAndNameWithMembership(ctx, q, owner, name, userID)
		if err != nil {
			return standingValue{}, err
		}
		v := standingValue{standing: st, repo: &atomic.Pointer[repoRead]{}}
		v.repo.Store(&repoRead{repo: r, writes: writes})
		return v, nil
	})
	if err != nil {
		return nil, Standing{}, err
	}
	read := v.repo.Load()
	if read.writes == writes {
		return read.repo.clone(), v.standing, nil
	}
	r, err := ByID(ctx, q, read.repo.ID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, Standing{}, err
	}
	if err != nil || r.Owner.ID != read.repo.Owner.ID || !strings.EqualFold(r.Name, name) {
		return ByOwnerAndNameWithMembership(ctx, q, owner, name, userID) // renamed, transferred or gone
	}
	v.repo.CompareAndSwap(read, &repoRead{repo: r, writes: writes})
	return r.clone(), v.standing, nil
}

// clone returns a copy of r that shares nothing with it.
func (r *Repository) clone() *Repository {
	c := *r
	owner := *r.Owner
	c.Owner = &owner
	if r.PushedAt != nil {
		t := *r.PushedAt
		c.PushedAt = &t
	}
	return &c
}

// StatsCache keeps repositories' counters (StatsOf) in a store.ReadCache
// over the tables they count (statsTables).
type StatsCache struct {
	c *store.ReadCache[int64, Stats]
}

// NewStatsCache returns a StatsCache of db keeping counters for at most
// ttl (0: store.DefaultReadCacheTTL). Make it when the server starts:
// on PostgreSQL a server notifies the others of writes to the tables it
// watches (store.DB.Watch).
func NewStatsCache(db *store.DB, ttl time.Duration) *StatsCache {
	return &StatsCache{c: store.NewReadCache[int64, Stats](db, ttl, statsTables...)}
}

// Stats returns StatsOf the repository read through the service's
// database, from the service's StatsCache when it has one: a star, a
// subscription or a fork made through this process is counted by the
// next call.
func (s *Service) Stats(ctx context.Context, id int64) (Stats, error) {
	if s.StatsCache == nil {
		return StatsOf(ctx, s.DB, id)
	}
	return s.StatsCache.c.Get(id, func() (Stats, error) { return StatsOf(ctx, s.DB, id) })
}

package repos

import (
	"context"
	"time"

	"forgeapi/internal/store"
)

// standingTables are the tables ByOwnerAndNameWithMembership reads: the
// repository, its owner, the owner's members, and the repo_grants view
// (collaborators, and team members, team ancestors and team repositories;
// teams, whose deletes cascade into the last three).
var standingTables = []string{"repositories", "accounts", "org_members", "repo_collaborators",
	"teams", "team_members", "team_ancestors", "team_repos"}

// statsTables are the tables StatsOf reads (stars, subscriptions, forks
// in repositories), and accounts, whose deletes cascade into them. Of
// repositories and accounts only rows added or removed count: a fork is
// a new repository (fork_of_id is written only by its INSERT; a deleted
// parent's forks lose it by cascade, with a DELETE), and an update of a
// repository, which every PATCH is, changes none of the counters.
var statsTables = []string{"stars", "subscriptions", store.RowsOf("repositories"), store.RowsOf("accounts")}

// StandingCache serves ByOwnerAndNameWithMembership, the access guard's
// lookup of every repository route, from a store.ReadCache over every
// table the query reads (standingTables): a write through this process
// is seen by the next lookup, other processes' writes when their
// notification arrives or within the TTL. Each call returns its own copy
// of the repository, which the caller may change.
type StandingCache struct {
	c *store.ReadCache[standingKey, standingValue]
}

// standingKey is the lookup as the request spells it: owner and name are
// not folded (the query compares them case-insensitively, so a spelling
// that differs only in case is a key of its own, never a wrong match).
type standingKey struct {
	owner, name string
	userID      int64
}

type standingValue struct {
	repo     *Repository
	standing Standing
}

// NewStandingCache returns a StandingCache of db keeping a lookup for at
// most ttl (0: store.DefaultReadCacheTTL).
func NewStandingCache(db *store.DB, ttl time.Duration) *StandingCache {
	return &StandingCache{c: store.NewReadCache[standingKey, standingValue](db, ttl, standingTables...)}
}

// ByOwnerAndNameWithMembership is the package function of that name,
// from the cache when it holds the lookup. Lookups that fail (not found
// included) are not cached.
func (c *StandingCache) ByOwnerAndNameWithMembership(ctx context.Context, q store.Q, owner, name string, userID int64) (*Repository, Standing, error) {
	v, err := c.c.Get(standingKey{owner, name, userID}, func() (standingValue, error) {
		r, st, err := ByOwnerAndNameWithMembership(ctx, q, owner, name, userID)
		return standingValue{r, st}, err
	})
	if err != nil {
		return nil, Standing{}, err
	}
	return v.repo.clone(), v.standing, nil
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

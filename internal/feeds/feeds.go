// Package feeds serves the nine event feeds (GET /events,
// /networks/{owner}/{repo}/events, /orgs/{org}/events,
// /repos/{owner}/{repo}/events, /users/{username}/events,
// /users/{username}/events/orgs/{org}, /users/{username}/events/public,
// /users/{username}/received_events and .../received_events/public) from
// the events table that the activity spine fills, and prunes events older
// than the retention window.
//
// Feeds read the table directly, so an event is in every feed as soon as
// its transaction commits. Each feed answers newest first, at most
// Config.MaxEvents events deep and only events of the past Config.Window;
// a page that starts past MaxEvents is a 422. Every response carries an
// ETag computed from the ids on the requested page (without rendering the
// page) and X-Poll-Interval from the PollMeter.
package feeds

import (
	"time"

	"forgeapi/internal/store"
)

// Config configures the feeds. The zero value of each field means its
// documented default.
type Config struct {
	// Window is how far back feeds reach; default 30 days.
	Window time.Duration
	// MaxEvents is how many events paging reaches; default 300.
	MaxEvents int
	// Retention is the age past which the pruner deletes events; default
	// 30 days.
	Retention time.Duration
	// PruneInterval is how often the pruner runs; default one hour.
	PruneInterval time.Duration
	// MaxUnionSources bounds the sources (repositories of a network;
	// starred and watched repositories and followed accounts) that a
	// feed reads as a union of per-source index scans; a feed with more
	// is one OR-ed condition instead. Default 200 (SQLite allows 500
	// compound terms).
	MaxUnionSources int
	// CacheTTL bounds how long a conditional poll may be answered from the
	// ids of a page served before (see pageCache); default 1 s.
	CacheTTL time.Duration
	// Poll configures X-Poll-Interval.
	Poll PollConfig
}

// The defaults of Config.
const (
	DefaultWindow        = 30 * 24 * time.Hour
	DefaultMaxEvents     = 300
	DefaultRetention     = 30 * 24 * time.Hour
	DefaultPruneInterval = time.Hour
)

func (c *Config) setDefaults() {
	if c.Window <= 0 {
		c.Window = DefaultWindow
	}
	if c.MaxEvents <= 0 {
		c.MaxEvents = DefaultMaxEvents
	}
	if c.Retention <= 0 {
		c.Retention = DefaultRetention
	}
	if c.MaxUnionSources <= 0 {
		c.MaxUnionSources = 200
	}
	if c.CacheTTL <= 0 {
		c.CacheTTL = time.Second
	}
	if c.PruneInterval <= 0 {
		c.PruneInterval = DefaultPruneInterval
	}
	c.Poll.setDefaults()
}

// Handler serves the feeds. It owns the feeds' poll meter and the cache
// of the window's first event id; make one per server with New.
type Handler struct {
	db    *store.DB
	now   func() time.Time
	cfg   Config
	poll  *PollMeter
	floor *windowFloor
	count *countCache
	// unions caches the prepared statements of union queries.
	unions *stmtCache
	pages  *pageCache
	hints  *loHints
	// received and networks keep the filters of the union feeds (what a
	// user receives events from; a repository's network), dropped on
	// every committed write to the tables they are read from.
	received *store.ReadCache[string, filter]
	networks *store.ReadCache[int64, filter]
}

// New returns the feeds handler over db. now is the clock (nil:
// time.Now).
func New(db *store.DB, now func() time.Time, cfg Config) *Handler {
	if now == nil {
		now = time.Now
	}
	cfg.setDefaults()
	return &Handler{db: db, now: now, cfg: cfg, poll: NewPollMeter(cfg.Poll, now), floor: &windowFloor{}, count: newCountCache(),
		unions: newStmtCache(db), pages: newPageCache(cfg.CacheTTL), hints: newLoHints(),
		received: store.NewReadCache[string, filter](db, 0, "stars", "subscriptions", "follows", "repositories", "org_members", "accounts", "repo_collaborators", "teams", "team_members", "team_repos", "org_roles", "org_role_users", "org_role_teams"),
		networks: store.NewReadCache[int64, filter](db, 0, "repositories", "accounts"),
	}
}

// Config returns the handler's configuration with defaults applied.
func (h *Handler) Config() Config { return h.cfg }

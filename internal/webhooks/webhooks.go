// Package webhooks serves repository and organization webhooks:
// the hooks and their configuration, the events sink that writes one
// delivery per subscribed hook in the transaction of the change, the
// Dispatcher that claims due deliveries with a lease and sends them
// through hookshot, and the deliveries API (list, detail, redelivery,
// ping, test).
//
// A delivery row is both the dispatcher's work item and the delivery log:
// a committed change never loses its deliveries. Who holds a delivery
// when, and what a crash, a shutdown or a failure does to it, is the
// Dispatcher's contract.
package webhooks

import (
	"context"
	"database/sql"
	"encoding/json"
	"log/slog"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/events"
	"forgeapi/internal/repos"
	"forgeapi/internal/secretbox"
	"forgeapi/internal/store"
	"forgeapi/internal/webhooks/hookshot"
)

// Defaults of Config.
const (
	DefaultRetention        = 30 * 24 * time.Hour
	DefaultRedeliveryWindow = 3 * 24 * time.Hour
	// MaxHooksPerEvent is the most hooks of one target subscribed to one event.
	MaxHooksPerEvent = 250
)

// Config configures webhook delivery. Zero fields take their defaults.
type Config struct {
	// HeaderNames chooses the delivery headers' names: the spec's
	// X-Service-*, the platform's X-GitHub-*, or both (default).
	HeaderNames hookshot.HeaderNames
	// AllowedHosts is the destination allow list (hookshot.ParseAllowList):
	// "external" (default), "loopback", "private", CIDRs, host globs, "*".
	AllowedHosts string
	// Timeout bounds one delivery's HTTP request; default 10 s.
	Timeout time.Duration
	// Retries is how many times a failed delivery is retried automatically
	// (each retry a new delivery with redelivery true); 0, the default, is
	// the platform's behaviour: none.
	Retries int
	// RetryBackoff is the delay before the first automatic retry; each
	// further one doubles it, with jitter. Default DefaultRetryBackoff.
	RetryBackoff time.Duration
	// RateLimit is the most deliveries per second sent to one hook; more
	// wait and carry throttled_at. 0 means the default (DefaultRateLimit);
	// negative means no limit.
	RateLimit float64
	// Retention is the age past which deliveries are pruned; default 30 days.
	Retention time.Duration
	// RedeliveryWindow is the age past which a delivery cannot be
	// redelivered (422); default 3 days.
	RedeliveryWindow time.Duration
	// SecretKey is the server key that seals hook secrets at rest (64 hex
	// digits or base64 of 32 bytes). Empty means the key in the data
	// directory's webhook.key, created on first use.
	SecretKey string
	// MaxPayloadBytes caps an event's JSON payload; an event whose payload
	// is larger is not delivered to any hook, as on the platform, and is
	// logged as a warning. The dispatcher's sender refuses a stored
	// payload over it (one stored before the cap was lowered). 0 means
	// hookshot.DefaultMaxPayloadBytes, the platform's 25 MB.
	MaxPayloadBytes int
	// CAFile names PEM certificates that verify HTTPS receivers besides
	// the system's roots (a private CA); "" trusts the system's only.
	// Hooks with insecure_ssl "1" are not verified at all.
	CAFile string
	// Resolver replaces the DNS resolver of deliveries (tests point a host
	// name at 127.0.0.1 with it); nil means net.DefaultResolver.
	Resolver hookshot.Resolver
}

// Service holds the webhooks of one store.
type Service struct {
	DB     *store.DB
	Box    *secretbox.Box // seals secrets and passwords at rest
	Config Config
	Now    func() time.Time // clock; nil means time.Now
	Logger *slog.Logger     // nil means slog.Default()
	// BaseURL is the public API URL used in payloads and hook links; set
	// once the server knows its address.
	BaseURL string
	// SSHPort is the port git over SSH listens on (0 when off), for the
	// repository object's ssh_url; set with BaseURL.
	SSHPort int

	// Apps finds the app installations whose app webhook receives an
	// event; nil delivers no event to apps.
	Apps AppResolver

	wake    chan struct{}
	handoff *handoff

	targets *store.ReadCache[hookTarget, []*Hook] // see subscribedHooks
	byID    *store.ReadCache[int64, *Hook]        // see hookToSend
}

// AppResolver finds the recipients of an event among apps: the
// installations, not suspended, of the apps subscribed to the event and
// holding the permission it needs, on the account where it happened and
// (for a repository's event) reaching the repository.
type AppResolver interface {
	Recipients(ctx context.Context, q store.Q, e *events.Event) ([]events.AppInstallation, error)
}

// NewService returns a Service over db sealing secrets with box.
func NewService(db *store.DB, box *secretbox.Box, cfg Config, now func() time.Time, logger *slog.Logger) *Service {
	s := &Service{DB: db, Box: box, Config: cfg, Now: now, Logger: logger, wake: make(chan struct{}, 1),
		handoff: newHandoff()}
	if db != nil {
		// Made here, at start, so that every server watches (and on
		// PostgreSQL notifies the others of) writes to hooks from its
		// first one.
		s.targets = store.NewReadCache[hookTarget, []*Hook](db, 0, "hooks")
		s.byID = store.NewReadCache[int64, *Hook](db, 0, "hooks")
	}
	return s
}

func (s *Service) now() time.Time {
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	return now().UTC().Truncate(time.Microsecond)
}

func (s *Service) maxPayloadBytes() int {
	if s.Config.MaxPayloadBytes > 0 {
		return s.Config.MaxPayloadBytes
	}
	return hookshot.DefaultMaxPayloadBytes
}

func (s *Service) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.Default()
	}
	return s.Logger
}

// Wake tells the in-process Dispatcher that deliveries are due, without
// blocking. Call it after the transaction that wrote them commits.
func (s *Service) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Hook is a repository, organization or app webhook. Exactly one of
// RepoID, OrgID and IntegrationID is set.
type Hook struct {
	ID     int64
	RepoID int64 // set on repository hooks
	OrgID  int64 // set on organization hooks
	// IntegrationID is set on an app's own webhook (the app's id): it
	// receives the events of the app's installations (AppResolver).
	IntegrationID int64
	// Global is set on a global webhook of the installation (site
	// administrators' /admin/hooks): it receives the user and
	// organization events of every account.
	Global      bool
	Name        string
	Active      bool
	Events      []string // sorted; may hold "*"
	URL         string
	ContentType string // json | form
	InsecureSSL string // "0" | "1"
	// SealedSecret is the secret sealed with the server key; "" for none.
	// Open it with Service.Secret.
	SealedSecret   string
	Username       string
	SealedPassword string
	AppID          int64 // the OAuth app whose token created it; 0 when a user did
	CreatorID      int64
	LastResponse   LastResponse
	DeletedAt      *time.Time
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// LastResponse is the outcome of a hook's latest delivery. Status "" means
// nothing was delivered yet (the API shows "unused").
type LastResponse struct {
	Code    *int
	Status  string
	Message *string
	At      *time.Time
}

// IsOrg reports whether the hook is an organization hook.
func (h *Hook) IsOrg() bool { return h.OrgID != 0 }

// IsApp reports whether the hook is an app's own webhook.
func (h *Hook) IsApp() bool { return h.IntegrationID != 0 }

// targetBusiness is the target type of a global webhook's deliveries:
// the installation (the platform's "business").
const targetBusiness hookshot.TargetType = "business"

// TargetID is the id of the repository, organization or app the hook is
// on (0 for a global webhook).
func (h *Hook) TargetID() int64 {
	switch {
	case h.Global:
		return 0
	case h.IsApp():
		return h.IntegrationID
	case h.IsOrg():
		return h.OrgID
	}
	return h.RepoID
}

// TargetType is the hook's X-Service-Hook-Installation-Target-Type.
func (h *Hook) TargetType() hookshot.TargetType {
	switch {
	case h.Global:
		return targetBusiness
	case h.IsApp():
		return hookshot.TargetIntegration
	case h.IsOrg():
		return hookshot.TargetOrganization
	}
	return hookshot.TargetRepository
}

// Subscribed reports whether the hook receives the event: it names it or
// "*". ping and meta reach a hook whatever its events.
func (h *Hook) Subscribed(event string) bool {
	if event == "ping" || event == "meta" {
		return true
	}
	for _, e := range h.Events {
		if e == event || e == "*" {
			return true
		}
	}
	return false
}

// Secret opens the hook's secret; "" when it has none.
func (s *Service) Secret(h *Hook) (string, error) {
	if h.SealedSecret == "" {
		return "", nil
	}
	return s.Box.Open(h.SealedSecret)
}

// Password opens the hook's config.password; "" when it has none.
func (s *Service) Password(h *Hook) (string, error) {
	if h.SealedPassword == "" {
		return "", nil
	}
	return s.Box.Open(h.SealedPassword)
}

// hookColumns are the columns scanHook reads, in order, from hooksFrom.
const hookColumns = `hooks.id, hooks.repo_id, hooks.org_id, hooks.name, hooks.active, hooks.events, hooks.url,
	hooks.content_type, hooks.insecure_ssl, hooks.secret, hooks.username, hooks.password, hooks.app_id,
	hooks.creator_id, last_response.code, last_response.status, last_response.message,
	last_response.responded_at, hooks.deleted_at, hooks.created_at, hooks.updated_at, hooks.integration_id,
	hooks.global`

// hooksFrom is what hookColumns are read from: the hooks with their last
// responses, which are kept in a table of their own so that recording a
// delivery writes no hook row (the hooks cache of every server, see
// subscribedHooks, is dropped by writes to hooks).
const hooksFrom = `hooks LEFT JOIN hook_last_responses last_response ON last_response.hook_id = hooks.id`

func scanHook(row interface{ Scan(...any) error }) (*Hook, error) {
	var h Hook
	var repoID, orgID, appID, creatorID, integrationID sql.NullInt64
	var code sql.NullInt64
	var status, message sql.NullString
	var at, deleted sql.NullTime
	var events string
	err := row.Scan(&h.ID, &repoID, &orgID, &h.Name, &h.Active, &events, &h.URL, &h.ContentType, &h.InsecureSSL,
		&h.SealedSecret, &h.Username, &h.SealedPassword, &appID, &creatorID, &code, &status, &message, &at,
		&deleted, &h.CreatedAt, &h.UpdatedAt, &integrationID, &h.Global)
	if err != nil {
		return nil, store.Normalize(err)
	}
	h.RepoID, h.OrgID, h.AppID, h.CreatorID = repoID.Int64, orgID.Int64, appID.Int64, creatorID.Int64
	h.IntegrationID = integrationID.Int64
	if err := json.Unmarshal([]byte(events), &h.Events); err != nil {
		return nil, err
	}
	if code.Valid {
		c := int(code.Int64)
		h.LastResponse.Code = &c
	}
	h.LastResponse.Status = status.String
	if message.Valid {
		h.LastResponse.Message = &message.String
	}
	if at.Valid {
		t := at.Time.UTC()
		h.LastResponse.At = &t
	}
	if deleted.Valid {
		t := deleted.Time.UTC()
		h.DeletedAt = &t
	}
	h.CreatedAt, h.UpdatedAt = h.CreatedAt.UTC(), h.UpdatedAt.UTC()
	return &h, nil
}

// HookByID returns a hook, deleted or not; store.ErrNotFound when there
// is none.
func HookByID(ctx context.Context, q store.Q, id int64) (*Hook, error) {
	return scanHook(q.QueryRowContext(ctx, `SELECT `+hookColumns+` FROM `+hooksFrom+` WHERE id = $1`, id))
}

// hookToSend is HookByID through a cache, for the dispatcher: it reads
// the hook of every delivery it claims, a few of them in each claim when
// it has a backlog (4% of the webhooks bench's CPU, overloaded). As the
// targets cache of subscribedHooks, it is dropped by every committed
// write to hooks, and the hook's LastResponse is the one read with it.
// The hook returned is shared: callers must not change it. A miss reads
// through q (the caller's transaction, when it has one).
func (s *Service) hookToSend(ctx context.Context, q store.Q, id int64) (*Hook, error) {
	if s.byID == nil {
		return HookByID(ctx, q, id)
	}
	return s.byID.Get(id, func() (*Hook, error) { return HookByID(ctx, q, id) })
}

// SubscribedHooks returns the active, undeleted hooks that receive the
// event: the repository's hooks (when repo is set) and the organization's
// (when org is set), repository hooks first.
func SubscribedHooks(ctx context.Context, q store.Q, repo *repos.Repository, org *accounts.Account, event string) ([]*Hook, error) {
	all, err := activeHooks(ctx, q, targetOf(repo, org))
	if err != nil {
		return nil, err
	}
	return subscribedTo(all, event), nil
}

// subscribedTo returns, in a new slice, the hooks subscribed to the event.
func subscribedTo(hooks []*Hook, event string) []*Hook {
	out := make([]*Hook, 0, len(hooks))
	for _, h := range hooks {
		if h.Subscribed(event) {
			out = append(out, h)
		}
	}
	return out
}

// hookTarget names a repository and its organization (either may be
// absent: id -1) by id and creation time: SQLite may give a deleted
// row's id to the next row, which the creation time tells apart.
type hookTarget struct {
	repoID, orgID           int64
	repoCreated, orgCreated time.Time
}

func targetOf(repo *repos.Repository, org *accounts.Account) hookTarget {
	t := hookTarget{repoID: -1, orgID: -1}
	if repo != nil {
		t.repoID, t.repoCreated = repo.ID, repo.CreatedAt
	}
	if org != nil {
		t.orgID, t.orgCreated = org.ID, org.CreatedAt
	}
	return t
}

// activeHooks returns the active, undeleted hooks of the target,
// repository hooks first, then the global webhooks (which subscribe to
// user and organization events only).
func activeHooks(ctx context.Context, q store.Q, t hookTarget) ([]*Hook, error) {
	return queryHooks(ctx, q, `SELECT `+hookColumns+` FROM `+hooksFrom+`
		WHERE (repo_id = $1 OR org_id = $2 OR global) AND active AND deleted_at IS NULL
		ORDER BY org_id IS NOT NULL, global, id`, t.repoID, t.orgID)
}

// subscribedHooks is SubscribedHooks through a cache of each target's
// active hooks: the events sink looks them up for every event, inside
// the API's write transaction. The cache (a store.ReadCache) is dropped
// by every committed write to hooks, so a hook created, edited,
// deactivated or deleted is honoured by the next event. The hooks of a
// deleted repository or organization go by cascade, unseen by the cache,
// but its key (id and creation time) is never looked up again; the
// transaction that deletes one emits its events before the delete. A
// transaction that writes hooks must not emit events after that write
// (none does): the cache would not show it.
//
// The hooks returned are shared: callers must not change them. Their
// LastResponse is the one read with them, not kept current: the cache
// does not watch hook_last_responses, which every recorded delivery
// writes, and sending a delivery does not read it.
func (s *Service) subscribedHooks(ctx context.Context, q store.Q, repo *repos.Repository, org *accounts.Account, event string) ([]*Hook, error) {
	if s.targets == nil {
		return SubscribedHooks(ctx, q, repo, org, event)
	}
	t := targetOf(repo, org)
	all, err := s.targets.Get(t, func() ([]*Hook, error) { return activeHooks(ctx, q, t) })
	if err != nil {
		return nil, err
	}
	return subscribedTo(all, event), nil
}

// queryHooks runs a query of hookColumns and scans its hooks.
func queryHooks(ctx context.Context, q store.Q, query string, args ...any) ([]*Hook, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, store.Normalize(err)
	}
	defer rows.Close()
	var out []*Hook
	for rows.Next() {
		h, err := scanHook(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, store.Normalize(rows.Err())
}

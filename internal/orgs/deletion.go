package orgs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
	"forgeapi/internal/worker"
)

// RequestDeletion records that the organization is to be deleted and
// sends its hooks the organization event deleted, in one transaction; the
// Deleter does the rest in the background. Asking again changes nothing.
func (s *Service) RequestDeletion(ctx context.Context, org, actor *accounts.Account) error {
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO org_deletions (org_id, requested_at) VALUES ($1, $2)
			ON CONFLICT (org_id) DO NOTHING`, org.ID, tx.Now())
		if err != nil {
			return store.Normalize(err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err
		}
		return s.emit(ctx, tx, actor, org, map[string]any{"action": "deleted"})
	})
	if err == nil && s.Deleter != nil {
		s.Deleter.Wake()
	}
	return err
}

// Defaults of DeleterConfig.
const (
	DefaultDeletionGrace        = time.Minute
	DefaultDeletionLease        = 10 * time.Minute
	DefaultDeletionPollInterval = 5 * time.Second
)

// DeleterConfig configures the Deleter; zero fields take the defaults.
type DeleterConfig struct {
	// Grace is how long a deletion waits for the deliveries to the
	// organization's hooks (its deleted event) to be sent before it goes
	// on without them. Default DefaultDeletionGrace.
	Grace time.Duration
	// Lease is how long a claimed deletion stays with this server.
	// Default DefaultDeletionLease.
	Lease time.Duration
	// PollInterval is how often Run looks for deletions without a wake.
	// Default DefaultDeletionPollInterval.
	PollInterval time.Duration
}

// Deleter deletes the organizations whose deletion was requested: their
// repositories (git data included), then the organization with its
// memberships, hooks, invitations and tokens. Requests are claimed with a
// lease (SKIP LOCKED on PostgreSQL), so several servers share the work,
// and a deletion cut short by a crash is taken up again once its lease
// expired. The feeds keep the organization's events.
type Deleter struct {
	db     *store.DB
	repos  *repos.Service
	cfg    DeleterConfig
	owner  string
	wake   *worker.Signal
	logger *slog.Logger
}

// NewDeleter returns a Deleter over db deleting repositories with svc.
func NewDeleter(db *store.DB, svc *repos.Service, cfg DeleterConfig, logger *slog.Logger) *Deleter {
	if cfg.Grace <= 0 {
		cfg.Grace = DefaultDeletionGrace
	}
	if cfg.Lease <= 0 {
		cfg.Lease = DefaultDeletionLease
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultDeletionPollInterval
	}
	if logger == nil {
		logger = slog.Default()
	}
	return &Deleter{db: db, repos: svc, cfg: cfg, owner: wire.NewGUID(), wake: worker.NewSignal(), logger: logger}
}

// Wake makes Run look for deletions now.
func (d *Deleter) Wake() { d.wake.Wake() }

// ReleaseLeases ends now the leases of the deletions that a killed
// process held, so that they go on at once instead of when the lease
// ends, and reports how many it ended (org_deletions holds only the
// deletions under way).
// Only the one server of a database may call it, knowing the lease
// holders dead (store.DB.ClaimServer's exclusive).
func (d *Deleter) ReleaseLeases(ctx context.Context) (int64, error) {
	return store.Affected(d.db.ExecContext(ctx, `UPDATE org_deletions SET lease_until = $1 WHERE lease_until > $1`, store.Now()))
}

// Run deletes what is due at once, then whenever woken or every
// PollInterval, until ctx is done.
func (d *Deleter) Run(ctx context.Context) {
	worker.Loop{Pass: func(ctx context.Context) { d.RunOnce(ctx) }, Interval: d.cfg.PollInterval, Wake: d.wake.C()}.Run(ctx)
}

// RunOnce deletes every organization it can claim whose deletion is due
// and returns how many it deleted. Errors are logged; a failed deletion
// stays leased and is retried once its lease expired.
func (d *Deleter) RunOnce(ctx context.Context) int {
	n, err := worker.Drain[int64](ctx, deletions{d}, func(orgID int64, err error) {
		d.logger.Error("delete organization", "organization_id", orgID, "err", err)
	})
	if err != nil {
		d.logger.Error("claim organization deletion", "err", err)
	}
	return n
}

// deletions is the org_deletions table as the Deleter's worker.Queue.
type deletions struct{ d *Deleter }

func (q deletions) Claim(ctx context.Context) (int64, bool, error) {
	orgID, err := q.d.claim(ctx)
	return orgID, orgID != 0, err
}

func (q deletions) Run(ctx context.Context, orgID int64) error { return q.d.delete(ctx, orgID) }

// claim leases the oldest unleased deletion that is due: its hooks have
// no delivery left to send (none pending in the log, none handed over to
// a dispatcher and listed in a payload's outbox), or its grace is
// over. 0 when none is.
func (d *Deleter) claim(ctx context.Context) (int64, error) {
	now := store.Now()
	var orgID int64
	err := d.db.QueryRowContext(ctx, `
		UPDATE org_deletions SET lease_owner = $1, lease_until = $2
		WHERE org_id IN (
			SELECT x.org_id FROM org_deletions x
			WHERE (x.lease_until IS NULL OR x.lease_until < $3)
			AND (x.requested_at < $4 OR NOT EXISTS (
				SELECT 1 FROM hook_deliveries dl JOIN hooks h ON h.id = dl.hook_id
				WHERE h.org_id = x.org_id AND dl.state <> 'done') AND NOT EXISTS (
				SELECT 1 FROM hook_outboxes o JOIN hooks h ON h.org_id = x.org_id
				WHERE ',' || o.hooks || ',' LIKE '%,' || CAST(h.id AS TEXT) || ',%'))
			ORDER BY x.requested_at LIMIT 1`+d.db.SkipLocked()+`)
		RETURNING org_id`, d.owner, now.Add(d.cfg.Lease), now, now.Add(-d.cfg.Grace)).Scan(&orgID)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err = store.Normalize(err); errors.Is(err, store.ErrNotFound) {
		return 0, nil
	}
	return orgID, err
}

// delete deletes the claimed organization's repositories, unlocking any
// locked for a migration, then the organization.
func (d *Deleter) delete(ctx context.Context, orgID int64) error {
	org, err := accounts.ByID(ctx, d.db, orgID)
	if err != nil {
		return fmt.Errorf("load organization: %w", err)
	}
	list, err := repos.ByOwner(ctx, d.db, orgID)
	if err != nil {
		return fmt.Errorf("list repositories: %w", err)
	}
	for _, r := range list {
		r.MigrationLocked = false // the organization goes: its locks with it
		if err := d.repos.Delete(ctx, r, org); err != nil && !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("delete repository %s: %w", r.FullName(), err)
		}
	}
	return accounts.Delete(ctx, d.db, orgID)
}

package gists

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"forgeapi/internal/git/gitcmd"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
	"forgeapi/internal/worker"
)

// Every change of a gist (a commit through the API writes loose objects;
// a push, whose repository has receive.autogc off as every repository
// githttp.Init makes, brings a pack) counts in gists.changes_since, and
// the Maintainer runs git gc on the gists whose count reached
// MaintenanceConfig.Changes.

// Defaults of MaintenanceConfig.
const (
	DefaultMaintenanceChanges      = 50
	DefaultMaintenanceLease        = 10 * time.Minute
	DefaultMaintenancePollInterval = 10 * time.Minute
)

// MaintenanceConfig configures the Maintainer. Zero fields take the
// defaults.
type MaintenanceConfig struct {
	// Changes is how many changes since the last run make a gist due.
	Changes int64
	// Lease is how long a claimed gist stays with this server; it also
	// bounds one git gc run.
	Lease time.Duration
	// PollInterval is how often Run looks for due gists; negative turns
	// the periodic runs off (RunOnce still works).
	PollInterval time.Duration
}

// Maintainer runs git gc on the gists that are due, each claimed with a
// lease (SKIP LOCKED on PostgreSQL), so that several servers share the
// work. Changes counted while git gc runs stay counted for the next run.
type Maintainer struct {
	svc    *Service
	cfg    MaintenanceConfig
	owner  string // this process's lease owner id
	logger *slog.Logger
}

// NewMaintainer returns the Maintainer of the gists of svc.
func NewMaintainer(svc *Service, cfg MaintenanceConfig, logger *slog.Logger) *Maintainer {
	if cfg.Changes <= 0 {
		cfg.Changes = DefaultMaintenanceChanges
	}
	if cfg.Lease <= 0 {
		cfg.Lease = DefaultMaintenanceLease
	}
	if cfg.PollInterval == 0 {
		cfg.PollInterval = DefaultMaintenancePollInterval
	}
	if logger == nil {
		logger = slog.Default()
	}
	return &Maintainer{svc: svc, cfg: cfg, owner: wire.NewGUID(), logger: logger}
}

// Periodic reports whether Run should be started.
func (m *Maintainer) Periodic() bool { return m.cfg.PollInterval > 0 }

// Run calls RunOnce at once, then every PollInterval, until ctx is done.
func (m *Maintainer) Run(ctx context.Context) {
	if !m.Periodic() {
		return
	}
	worker.Loop{Pass: func(ctx context.Context) { m.RunOnce(ctx) }, Interval: m.cfg.PollInterval}.Run(ctx)
}

// RunOnce runs git gc on every due gist it can claim and returns how many
// it maintained. Errors are logged; a gist that failed stays leased and
// is retried once its lease expired.
func (m *Maintainer) RunOnce(ctx context.Context) int {
	n, err := worker.Drain[dueGist](ctx, maintenanceQueue{m}, func(due dueGist, err error) {
		m.logger.Error("gist git maintenance", "gist", due.name, "err", err)
	})
	if err != nil {
		m.logger.Error("claim a gist for git maintenance", "err", err)
	}
	return n
}

// ReleaseLeases ends the leases a killed process held, so that those
// gists are due again at once. Only the one server of a database may call
// it.
func (m *Maintainer) ReleaseLeases(ctx context.Context) (int64, error) {
	return store.Affected(m.svc.DB.ExecContext(ctx, `UPDATE gists SET lease_until = NULL, lease_owner = ''
		WHERE id IN (SELECT id FROM gists WHERE lease_until IS NOT NULL)`))
}

// dueGist is a claimed gist with the changes its claim saw.
type dueGist struct {
	id      int64
	name    string
	changes int64
}

// maintenanceQueue is the gists table as the Maintainer's worker.Queue.
type maintenanceQueue struct{ m *Maintainer }

// Claim leases the due, unleased (or expired) gist with the lowest id.
func (q maintenanceQueue) Claim(ctx context.Context) (dueGist, bool, error) {
	m := q.m
	now := store.Now()
	var d dueGist
	err := store.Normalize(m.svc.DB.QueryRowContext(ctx, `
		UPDATE gists SET lease_owner = $1, lease_until = $2
		WHERE id IN (
			SELECT id FROM gists WHERE changes_since >= $3 AND (lease_until IS NULL OR lease_until < $4)
			ORDER BY id LIMIT 1`+m.svc.DB.SkipLocked()+`)
		RETURNING id, name, changes_since`,
		m.owner, now.Add(m.cfg.Lease), m.cfg.Changes, now).Scan(&d.id, &d.name, &d.changes))
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, sql.ErrNoRows) {
		return d, false, nil
	}
	return d, err == nil, err
}

// Run runs git gc on the claimed gist, bounded by the lease, then
// subtracts the changes the claim saw and ends the lease.
func (q maintenanceQueue) Run(ctx context.Context, d dueGist) error {
	m := q.m
	gcCtx, cancel := context.WithTimeout(ctx, m.cfg.Lease)
	defer cancel()
	if err := gitcmd.In(m.svc.Dir(d.name)).Run(gcCtx, "gc", "--quiet"); err != nil {
		return err
	}
	_, err := m.svc.DB.ExecContext(ctx, `UPDATE gists
		SET changes_since = CASE WHEN changes_since > $1 THEN changes_since - $1 ELSE 0 END,
			lease_owner = '', lease_until = NULL
		WHERE id = $2 AND lease_owner = $3`, d.changes, d.id, m.owner)
	if err != nil {
		return fmt.Errorf("record gist maintenance: %w", store.Normalize(err))
	}
	return nil
}

package githost

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"forgeapi/internal/git/gitcmd"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
	"forgeapi/internal/worker"
)

// Repositories are created with receive.autogc=false (see githttp.Init):
// a push never starts git gc. Instead recordPush counts every push in the
// git_maintenance table, in the push's events transaction, and the
// Maintainer runs git gc on repositories whose count reached a threshold
// or whose oldest counted push is older than a maximum age.

// Defaults of MaintenanceConfig.
const (
	DefaultMaintenancePushes       = 50
	DefaultMaintenanceMaxAge       = 24 * time.Hour
	DefaultMaintenanceLease        = time.Hour
	DefaultMaintenancePollInterval = 10 * time.Minute
)

// countPush counts one push of the repository for maintenance, in the
// transaction that records the push. The first counted push starts the
// maximum-age clock.
func countPush(ctx context.Context, tx store.Q, repoID int64) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO git_maintenance (repository_id, pushes_since, last_run_at)
		VALUES ($1, 1, $2)
		ON CONFLICT (repository_id) DO UPDATE SET pushes_since = git_maintenance.pushes_since + 1`, repoID, store.Now())
	if err != nil {
		return fmt.Errorf("count push for maintenance: %w", err)
	}
	return nil
}

// MaintenanceConfig configures the Maintainer. Zero fields take the
// defaults.
type MaintenanceConfig struct {
	// Pushes is how many pushes since the last run make a repository due.
	// Default DefaultMaintenancePushes.
	Pushes int64
	// MaxAge makes a repository with at least one push due once its last
	// run (or its first counted push) is this old. Default
	// DefaultMaintenanceMaxAge.
	MaxAge time.Duration
	// Lease is how long a claimed repository stays with this server; it
	// also bounds one git gc run. A repository whose run failed, or that
	// was locked for migration, is claimed again once its lease expired.
	// Default DefaultMaintenanceLease.
	Lease time.Duration
	// PollInterval is how often Run looks for due repositories. Default
	// DefaultMaintenancePollInterval; a negative value turns the periodic
	// runs off (the server does not start Run; RunOnce still works).
	PollInterval time.Duration
}

// Maintainer runs git gc on the repositories that are due (see
// MaintenanceConfig). Repositories are claimed with a lease (SKIP LOCKED
// on PostgreSQL), so several servers share the work and a repository is
// maintained by one of them at a time. Pushes counted while git gc runs
// stay counted for the next run.
type Maintainer struct {
	db     *store.DB
	repos  *repos.Service
	cfg    MaintenanceConfig
	owner  string // this process's lease owner id
	logger *slog.Logger
}

// NewMaintainer returns the Maintainer of the repositories of svc.
func NewMaintainer(db *store.DB, svc *repos.Service, cfg MaintenanceConfig, logger *slog.Logger) *Maintainer {
	if cfg.Pushes <= 0 {
		cfg.Pushes = DefaultMaintenancePushes
	}
	if cfg.MaxAge <= 0 {
		cfg.MaxAge = DefaultMaintenanceMaxAge
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
	return &Maintainer{db: db, repos: svc, cfg: cfg, owner: wire.NewGUID(), logger: logger}
}

// Periodic reports whether Run should be started (PollInterval is not
// negative).
func (m *Maintainer) Periodic() bool { return m.cfg.PollInterval > 0 }

// ReleaseLeases ends now the leases that a killed process held (a git gc
// cut short, or a run that failed and waits out its lease), so that those
// repositories are due again at once instead of up to an hour later, and
// reports how many it ended. It reads the leased rows' partial index.
// Only the one server of a database may call it, knowing the lease
// holders dead (store.DB.ClaimServer's exclusive).
func (m *Maintainer) ReleaseLeases(ctx context.Context) (int64, error) {
	return store.Affected(m.db.ExecContext(ctx, `UPDATE git_maintenance SET lease_until = $1
		WHERE repository_id IN (SELECT repository_id FROM git_maintenance WHERE lease_until > $1)`, store.Now()))
}

// Run calls RunOnce at once, then every PollInterval, until ctx is done.
// It returns at once when the periodic runs are off.
func (m *Maintainer) Run(ctx context.Context) {
	if !m.Periodic() {
		return
	}
	worker.Loop{Pass: func(ctx context.Context) { m.RunOnce(ctx) }, Interval: m.cfg.PollInterval}.Run(ctx)
}

// RunOnce runs git gc on every due repository it can claim and returns
// how many it maintained; then it measures the repositories whose size
// was never measured (measureUnmeasured). Errors are logged; a repository that failed,
// or is locked for migration, stays leased and is retried once its lease
// expired.
func (m *Maintainer) RunOnce(ctx context.Context) int {
	n, err := worker.Drain[dueMaintenance](ctx, maintenanceQueue{m}, func(due dueMaintenance, err error) {
		m.logger.Error("git maintenance", "repository_id", due.repoID, "err", err)
	})
	if err != nil {
		m.logger.Error("claim repository for git maintenance", "err", err)
	}
	m.measureUnmeasured(ctx)
	return n
}

// dueMaintenance is a claimed repository with the pushes its claim saw.
type dueMaintenance struct{ repoID, pushes int64 }

// maintenanceQueue is the git_maintenance table as the Maintainer's
// worker.Queue.
type maintenanceQueue struct{ m *Maintainer }

func (q maintenanceQueue) Claim(ctx context.Context) (dueMaintenance, bool, error) {
	repoID, pushes, err := q.m.claim(ctx)
	return dueMaintenance{repoID, pushes}, repoID != 0, err
}

// Run maintains the repository; one locked for migration is skipped.
func (q maintenanceQueue) Run(ctx context.Context, due dueMaintenance) error {
	ran, err := q.m.maintain(ctx, due.repoID, due.pushes)
	if err == nil && !ran {
		return worker.ErrSkipped
	}
	return err
}

// unmeasuredBatch is how many repositories measureUnmeasured reads at a
// time.
const unmeasuredBatch = 100

// measureUnmeasured measures the size of the repositories that were never
// measured (those that predate migration 00052; every later push, fork
// and git gc measures its repository), each in its own transaction.
// Failures are logged and the repository is left for the next run;
// several servers may measure the same repository, to the same effect.
func (m *Maintainer) measureUnmeasured(ctx context.Context) {
	var after int64
	for ctx.Err() == nil {
		ids, err := repos.Unmeasured(ctx, m.db, after, unmeasuredBatch)
		if err != nil {
			if ctx.Err() == nil {
				m.logger.Error("list repositories to measure", "err", err)
			}
			return
		}
		for _, id := range ids {
			err := m.db.Tx(ctx, func(tx *store.Tx) error { return repos.MeasureSize(ctx, tx, id, m.repos.GitDir(id)) })
			if err != nil && ctx.Err() == nil {
				m.logger.Error("measure repository size", "repository_id", id, "err", err)
			}
			after = id
		}
		if len(ids) < unmeasuredBatch {
			return
		}
	}
}

// maintain runs git gc on a claimed repository and records the run with
// the repository's size measured after it; it reports whether git gc ran
// and was recorded. A repository locked for
// migration is left as it is, leased.
func (m *Maintainer) maintain(ctx context.Context, repoID, pushes int64) (bool, error) {
	repo, err := repos.ByID(ctx, m.db, repoID)
	if err != nil {
		return false, fmt.Errorf("load repository: %w", err)
	}
	if repo.MigrationLocked {
		return false, nil // retried once the lease expired
	}
	dir := m.repos.GitDir(repoID)
	if err := m.gc(ctx, dir); err != nil {
		return false, err
	}
	err = m.db.Tx(ctx, func(tx *store.Tx) error {
		if err := repos.MeasureSize(ctx, tx, repoID, dir); err != nil {
			return err
		}
		return m.release(ctx, tx, repoID, pushes)
	})
	if err != nil {
		return false, err
	}
	return true, nil
}

// claim leases the due, unleased (or expired) repository with the lowest
// id and returns it with its push count; 0 when none is due.
func (m *Maintainer) claim(ctx context.Context) (repoID, pushes int64, err error) {
	now := store.Now()
	err = m.db.QueryRowContext(ctx, `
		UPDATE git_maintenance SET lease_owner = $1, lease_until = $2
		WHERE repository_id IN (
			SELECT repository_id FROM git_maintenance
			WHERE pushes_since > 0 AND (pushes_since >= $3 OR last_run_at <= $4)
			AND (lease_until IS NULL OR lease_until < $5)
			ORDER BY repository_id LIMIT 1`+m.db.SkipLocked()+`)
		RETURNING repository_id, pushes_since`,
		m.owner, now.Add(m.cfg.Lease), m.cfg.Pushes, now.Add(-m.cfg.MaxAge), now).Scan(&repoID, &pushes)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, nil
	}
	if err != nil {
		if err = store.Normalize(err); errors.Is(err, store.ErrNotFound) {
			return 0, 0, nil
		}
		return 0, 0, err
	}
	return repoID, pushes, nil
}

// release records a run in tx: it subtracts the pushes the claim saw
// (pushes counted since stay), stamps last_run_at and ends the lease.
func (m *Maintainer) release(ctx context.Context, tx store.Q, repoID, pushes int64) error {
	_, err := tx.ExecContext(ctx, `UPDATE git_maintenance
		SET pushes_since = CASE WHEN pushes_since > $1 THEN pushes_since - $1 ELSE 0 END,
			last_run_at = $2, lease_owner = '', lease_until = NULL
		WHERE repository_id = $3 AND lease_owner = $4`, pushes, store.Now(), repoID, m.owner)
	if err != nil {
		return fmt.Errorf("record git maintenance: %w", store.Normalize(err))
	}
	return nil
}

// gc runs git gc in the bare repository dir, bounded by the lease. It is
// a full gc, not gc --auto: the push count is the trigger, and --auto's
// own estimate would leave repositories alone until they hold thousands
// of loose objects.
func (m *Maintainer) gc(ctx context.Context, dir string) error {
	ctx, cancel := context.WithTimeout(ctx, m.cfg.Lease)
	defer cancel()
	return gitcmd.In(dir).Run(ctx, "gc", "--quiet")
}

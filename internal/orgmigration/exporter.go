package orgmigration

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"forgeapi/internal/store"
	"forgeapi/internal/wire"
	"forgeapi/internal/worker"
)

// Defaults of ExporterConfig.
const (
	DefaultLease        = 2 * time.Minute
	DefaultPollInterval = 2 * time.Second
	DefaultMaxAttempts  = 3
)

// ExporterConfig configures an Exporter. Zero fields take the defaults.
type ExporterConfig struct {
	// BaseURL is the public API URL; the archive's records hold URLs
	// under it.
	BaseURL string
	// TempDir holds the repository snapshots of exports in progress. It
	// should be on the file system of the git repositories, so snapshots
	// hard-link objects instead of copying them. Empty means os.TempDir().
	TempDir string
	// Lease is how long a claimed export stays with this server without a
	// heartbeat; the Exporter renews it every Lease/3 while it works. An
	// export whose server died is claimed again once its lease has
	// expired. Default DefaultLease.
	Lease time.Duration
	// PollInterval is how often the Exporter looks for work that no
	// in-process wake-up announced (exports started on other servers,
	// expired leases, archives to expire). Default DefaultPollInterval.
	PollInterval time.Duration
	// MaxAttempts is how many times an export is claimed before it is
	// marked failed (a server that dies during each attempt must not
	// retry forever). Default DefaultMaxAttempts.
	MaxAttempts int
}

// Exporter is the background job that exports pending migrations and
// deletes archives past ArchiveLifetime. Run it with Run; tests may call
// RunOnce.
type Exporter struct {
	svc   *Service
	cfg   ExporterConfig
	owner string // this process's lease owner id
}

// NewExporter returns an Exporter of the service's migrations.
func NewExporter(s *Service, cfg ExporterConfig) *Exporter {
	if cfg.Lease <= 0 {
		cfg.Lease = DefaultLease
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = DefaultMaxAttempts
	}
	return &Exporter{svc: s, cfg: cfg, owner: wire.NewGUID()}
}

// Run exports and expires until ctx is done. It works at once, then
// whenever a migration is started in this process and every PollInterval.
// A stop in the middle of an export leaves the migration exporting under
// its lease; a later claim (here or on another server) redoes it.
func (e *Exporter) Run(ctx context.Context) {
	worker.Loop{Pass: e.RunOnce, Interval: e.cfg.PollInterval, Wake: e.svc.wake.C()}.Run(ctx)
}

// RunOnce exports every migration it can claim, one after the other,
// then deletes expired archives. Errors are logged.
func (e *Exporter) RunOnce(ctx context.Context) {
	if _, err := worker.Drain[*Migration](ctx, exports{e}, nil); err != nil {
		e.svc.logger().Error("claim migration export", "error", err)
	}
	if ctx.Err() == nil {
		e.expire(ctx)
	}
}

// exports is the org_migrations table as the Exporter's worker.Queue.
type exports struct{ e *Exporter }

func (q exports) Claim(ctx context.Context) (*Migration, bool, error) {
	m, err := q.e.claim(ctx)
	return m, m != nil, err
}

// Run exports the migration; process records (and logs) its outcome.
func (q exports) Run(ctx context.Context, m *Migration) error {
	q.e.process(ctx, m)
	return nil
}

// claim takes one pending migration, or one whose export lease has
// expired, and marks it exporting under this server's lease. It returns
// nil when there is none.
func (e *Exporter) claim(ctx context.Context) (*Migration, error) {
	now := e.svc.now()
	db := e.svc.DB
	m, err := scanMigration(db.QueryRowContext(ctx, `
		UPDATE org_migrations
		SET state = $1, lease_owner = $2, lease_until = $3, attempts = attempts + 1, updated_at = $4
		WHERE id IN (
			SELECT id FROM org_migrations
			WHERE state = $5 OR (state = $1 AND lease_until < $4)
			ORDER BY id LIMIT 1`+db.SkipLocked()+`)
		RETURNING `+migrationColumns,
		StateExporting, e.owner, now.Add(e.cfg.Lease), now, StatePending))
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return m, err
}

// process exports a claimed migration and records the outcome. A
// migration claimed more than MaxAttempts times fails without a new try.
func (e *Exporter) process(ctx context.Context, m *Migration) {
	log := e.svc.logger().With("migration_id", m.ID, "org_id", m.OrgID, "attempt", m.Attempts)
	if m.Attempts > e.cfg.MaxAttempts {
		e.fail(ctx, m, log, fmt.Errorf("export abandoned after %d attempts that did not finish", m.Attempts-1))
		return
	}
	log.Info("exporting migration")
	exportCtx, stop := worker.Leased(ctx, e.cfg.Lease/3, func(ctx context.Context) (bool, error) {
		return e.renew(ctx, m.ID)
	}, func(err error) {
		e.svc.logger().Warn("renew migration export lease", "migration_id", m.ID, "error", err)
	})
	defer stop()
	key, size, err := e.export(exportCtx, m)
	switch {
	case ctx.Err() != nil:
		log.Info("export interrupted by shutdown; it resumes under a later claim")
	case context.Cause(exportCtx) == worker.ErrLeaseLost:
		log.Warn("export lease lost to another server; leaving the migration to it")
	case err != nil:
		e.fail(ctx, m, log, err)
	default:
		e.finish(ctx, m, log, key, size)
	}
}

// renew extends the export's lease, while it runs, and reports whether
// the lease is still this server's.
func (e *Exporter) renew(ctx context.Context, id int64) (bool, error) {
	now := e.svc.now()
	res, err := e.svc.DB.ExecContext(ctx, `UPDATE org_migrations SET lease_until = $1
		WHERE id = $2 AND state = $3 AND lease_owner = $4`, now.Add(e.cfg.Lease), id, StateExporting, e.owner)
	if err != nil {
		return false, err
	}
	n, _ := res.RowsAffected()
	return n != 0, nil
}

// archiveKey is the blob key of a migration's archive. It depends only on
// the migration, so a retried export overwrites what an interrupted one
// may have left. It holds no '/': the local store's download route is
// then GET /_blobs/{key}, which no git route (/{owner}/{repo}/...) overlaps.
func archiveKey(m *Migration) string {
	return fmt.Sprintf("migration-%d-%s.tar.gz", m.ID, m.GUID)
}

// export streams the migration's archive into blob storage and returns
// its key and size.
func (e *Exporter) export(ctx context.Context, m *Migration) (string, int64, error) {
	content, err := e.loadContent(ctx, m)
	if err != nil {
		return "", 0, err
	}
	key := archiveKey(m)
	pr, pw := io.Pipe()
	written := make(chan error, 1)
	go func() {
		err := e.writeArchive(ctx, pw, content)
		pw.CloseWithError(err) // nil closes with io.EOF: the archive is complete
		written <- err
	}()
	size, putErr := e.svc.Blobs.Put(ctx, key, pr)
	pr.CloseWithError(errors.New("archive upload ended")) // unblocks the writer if Put stopped early
	if err := <-written; err != nil {
		return "", 0, err
	}
	if putErr != nil {
		return "", 0, fmt.Errorf("store archive: %w", putErr)
	}
	return key, size, nil
}

// finish records a completed export, if the lease is still this server's.
func (e *Exporter) finish(ctx context.Context, m *Migration, log interface{ Info(string, ...any) }, key string, size int64) {
	now := e.svc.now()
	res, err := e.svc.DB.ExecContext(ctx, `
		UPDATE org_migrations SET state = $1, archive_key = $2, archive_size = $3, exported_at = $4,
			archive_deleted_at = NULL, failure_reason = '', lease_owner = '', lease_until = NULL, updated_at = $4
		WHERE id = $5 AND state = $6 AND lease_owner = $7`,
		StateExported, key, size, now, m.ID, StateExporting, e.owner)
	if err != nil {
		e.svc.logger().Error("record migration export", "migration_id", m.ID, "error", err)
		return
	}
	if n, _ := res.RowsAffected(); n == 0 {
		e.svc.logger().Warn("migration export finished after its lease was lost", "migration_id", m.ID)
		return
	}
	log.Info("migration exported", "bytes", size)
}

// fail marks the migration failed with the reason, which is logged and
// stored (never sent to clients).
func (e *Exporter) fail(ctx context.Context, m *Migration, log interface{ Error(string, ...any) }, reason error) {
	log.Error("migration export failed", "error", reason)
	now := e.svc.now()
	_, err := e.svc.DB.ExecContext(ctx, `
		UPDATE org_migrations SET state = $1, failure_reason = $2, lease_owner = '', lease_until = NULL, updated_at = $3
		WHERE id = $4 AND state = $5 AND lease_owner = $6`,
		StateFailed, truncate(reason.Error(), 2000), now, m.ID, StateExporting, e.owner)
	if err != nil {
		e.svc.logger().Error("record migration failure", "migration_id", m.ID, "error", err)
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// expire deletes the archives exported ArchiveLifetime ago or earlier.
// Several servers may race on one archive: deletion is idempotent.
func (e *Exporter) expire(ctx context.Context) {
	cutoff := e.svc.now().Add(-ArchiveLifetime)
	rows, err := e.svc.DB.QueryContext(ctx, `SELECT `+migrationColumns+` FROM org_migrations
		WHERE state = $1 AND archive_deleted_at IS NULL AND exported_at <= $2 ORDER BY id LIMIT 100`,
		StateExported, cutoff)
	if err != nil {
		e.svc.logger().Error("find expired migration archives", "error", err)
		return
	}
	var due []*Migration
	for rows.Next() {
		m, err := scanMigration(rows)
		if err != nil {
			break
		}
		due = append(due, m)
	}
	rows.Close()
	for _, m := range due {
		if err := e.svc.deleteArchive(ctx, m); err != nil {
			e.svc.logger().Error("expire migration archive", "migration_id", m.ID, "error", err)
			continue
		}
		e.svc.logger().Info("migration archive expired", "migration_id", m.ID)
	}
}

package feeds

import (
	"context"
	"log/slog"
	"time"

	"forgeapi/internal/store"
	"forgeapi/internal/worker"
)

// Pruner deletes events older than the retention window, in batches so
// that no transaction holds the table for long. Several server processes
// may run one each: deleting is idempotent.
type Pruner struct {
	DB *store.DB
	// Retention is the age past which events go; Interval how often the
	// pruner runs (Config's defaults apply to zero values).
	Retention time.Duration
	Interval  time.Duration
	// Batch is the most rows one statement deletes; default 5000.
	Batch  int
	Now    func() time.Time
	Logger *slog.Logger
	// AfterDelete, when set, runs after a run that deleted events.
	AfterDelete func()
}

// NewPruner returns the pruner of cfg's retention over db.
func NewPruner(db *store.DB, now func() time.Time, cfg Config, logger *slog.Logger) *Pruner {
	cfg.setDefaults()
	if now == nil {
		now = time.Now
	}
	if logger == nil {
		logger = slog.Default()
	}
	return &Pruner{DB: db, Retention: cfg.Retention, Interval: cfg.PruneInterval, Batch: 5000, Now: now, Logger: logger}
}

// RunOnce deletes every event created before now minus Retention and
// returns how many it deleted.
func (p *Pruner) RunOnce(ctx context.Context) (int64, error) {
	cutoff := p.Now().Add(-p.Retention)
	var total int64
	for {
		res, err := p.DB.ExecContext(ctx, `DELETE FROM events WHERE id IN (
			SELECT id FROM events WHERE created_at < $1 ORDER BY created_at LIMIT $2)`, cutoff, p.Batch)
		if err != nil {
			return total, err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return total, err
		}
		total += n
		if n > 0 && p.AfterDelete != nil {
			p.AfterDelete()
		}
		if n < int64(p.Batch) {
			return total, nil
		}
	}
}

// Run prunes at once and then every Interval until ctx ends. Errors are
// logged and retried at the next run.
func (p *Pruner) Run(ctx context.Context) {
	worker.Loop{Pass: p.prune, Interval: p.Interval}.Run(ctx)
}

// prune is one pass of Run: RunOnce, logged.
func (p *Pruner) prune(ctx context.Context) {
	if n, err := p.RunOnce(ctx); err != nil && ctx.Err() == nil {
		p.Logger.Error("prune events", "err", err)
	} else if n > 0 {
		p.Logger.Info("pruned events", "deleted", n, "retention", p.Retention.String())
	}
}

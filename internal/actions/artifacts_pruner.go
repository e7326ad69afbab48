package actions

import (
	"context"
	"log/slog"
	"time"

	"forgeapi/internal/store"
	"forgeapi/internal/wire"
	"forgeapi/internal/worker"
)

// ArtifactPruner expires the artifacts past their expires_at: each is
// claimed with a lease, its zip deleted from blob storage, and marked
// expired (the row stays, as the platform lists expired artifacts). A
// pruner killed mid-way leaves its claim to expire and another takes it.
type ArtifactPruner struct {
	s        *Service
	owner    string
	interval time.Duration
	lease    time.Duration
	logger   *slog.Logger
}

// NewArtifactPruner returns the pruner of the service's artifacts,
// passing every interval (default one minute).
func NewArtifactPruner(s *Service, interval time.Duration, logger *slog.Logger) *ArtifactPruner {
	if interval <= 0 {
		interval = time.Minute
	}
	if logger == nil {
		logger = slog.Default()
	}
	return &ArtifactPruner{s: s, owner: wire.NewGUID(), interval: interval, lease: 5 * time.Minute, logger: logger}
}

// Run prunes until ctx is done.
func (p *ArtifactPruner) Run(ctx context.Context) {
	worker.Loop{Pass: func(ctx context.Context) {
		if _, err := p.RunOnce(ctx); err != nil && ctx.Err() == nil {
			p.logger.Error("expire Actions artifacts", "err", err)
		}
	}, Interval: p.interval}.Run(ctx)
}

// RunOnce expires the artifacts due now and returns how many.
func (p *ArtifactPruner) RunOnce(ctx context.Context) (int, error) {
	total := 0
	for {
		now := p.now()
		rows, err := p.s.DB.QueryContext(ctx, `UPDATE actions_artifacts SET lease_owner = $1, lease_until = $2
			WHERE id IN (SELECT id FROM actions_artifacts WHERE NOT expired AND expires_at <= $3
				AND (lease_until IS NULL OR lease_until < $3) ORDER BY id LIMIT 50)
			AND NOT expired AND (lease_until IS NULL OR lease_until < $3) RETURNING id`, p.owner, now.Add(p.lease), now)
		ids, err := store.ScanAll(rows, err, store.ScanID)
		if err != nil || len(ids) == 0 {
			return total, err
		}
		for _, id := range ids {
			if p.s.Blobs != nil {
				if err := p.s.Blobs.Delete(ctx, artifactKey(id)); err != nil {
					return total, err
				}
			}
			n, err := store.Affected(p.s.DB.ExecContext(ctx, `UPDATE actions_artifacts SET expired = TRUE, lease_owner = '',
				lease_until = NULL, upload_token_hash = '', updated_at = $1 WHERE id = $2 AND lease_owner = $3`, p.now(), id, p.owner))
			if err != nil {
				return total, err
			}
			total += int(n)
		}
	}
}

func (p *ArtifactPruner) now() time.Time {
	if p.s.Now != nil {
		return p.s.Now().UTC().Truncate(time.Microsecond)
	}
	return store.Now()
}

package actions

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"forgeapi/internal/store"
	"forgeapi/internal/wire"
	"forgeapi/internal/worker"
)

// CachePruner removes the cache entries nobody will read: reservations
// never committed (an upload abandoned by a job that failed or was
// killed, v1 or v2) once older than Abandoned, with the chunks and
// blocks they staged in blob storage, and, as the platform evicts them,
// committed entries not accessed for Unused. Each entry is claimed with
// a lease (several servers share the table); its row is deleted first,
// unless it was committed or read since it was due, with the list of its
// blobs in the same transaction, and then the blobs: an entry committed
// meanwhile never loses its archive. A pruner killed between the two
// leaves those blobs behind (nothing lists them any more).
type CachePruner struct {
	s        *Service
	owner    string
	interval time.Duration
	lease    time.Duration
	// Abandoned is how old an uncommitted reservation is removed (one
	// hour); Unused how long a committed entry lives unread (seven days,
	// the platform's).
	Abandoned, Unused time.Duration
	logger            *slog.Logger
}

// NewCachePruner returns the pruner of the service's caches, passing
// every interval (default ten minutes).
func NewCachePruner(s *Service, interval time.Duration, logger *slog.Logger) *CachePruner {
	if interval <= 0 {
		interval = 10 * time.Minute
	}
	if logger == nil {
		logger = slog.Default()
	}
	return &CachePruner{s: s, owner: wire.NewGUID(), interval: interval, lease: 5 * time.Minute,
		Abandoned: time.Hour, Unused: 7 * 24 * time.Hour, logger: logger}
}

// Run prunes until ctx is done.
func (p *CachePruner) Run(ctx context.Context) {
	worker.Loop{Pass: func(ctx context.Context) {
		if _, err := p.RunOnce(ctx); err != nil && ctx.Err() == nil {
			p.logger.Error("prune Actions caches", "err", err)
		}
	}, Interval: p.interval}.Run(ctx)
}

// RunOnce removes the entries due now and returns how many.
func (p *CachePruner) RunOnce(ctx context.Context) (int, error) {
	return worker.Drain[int64](ctx, cacheQueue{p}, func(id int64, err error) {
		p.logger.Error("prune an Actions cache", "cache", id, "err", err)
	})
}

// cacheQueue is the pruner's view of actions_caches.
type cacheQueue struct{ p *CachePruner }

// Claim leases one entry due: a reservation older than Abandoned or a
// committed entry unread for Unused.
func (q cacheQueue) Claim(ctx context.Context) (int64, bool, error) {
	p := q.p
	now := p.now()
	var id int64
	err := store.Normalize(p.s.DB.QueryRowContext(ctx, `UPDATE actions_caches SET lease_owner = $1, lease_until = $2
		WHERE id IN (SELECT id FROM actions_caches WHERE ((NOT finalized AND created_at <= $3) OR (finalized AND last_accessed_at <= $4))
			AND (lease_until IS NULL OR lease_until < $5) ORDER BY id LIMIT 1`+p.s.DB.SkipLocked()+`)
		AND (lease_until IS NULL OR lease_until < $5) RETURNING id`,
		p.owner, now.Add(p.lease), now.Add(-p.Abandoned), now.Add(-p.Unused), now).Scan(&id))
	if err == store.ErrNotFound {
		return 0, false, nil
	}
	return id, err == nil, err
}

// Run deletes the claimed entry's row, unless it was committed or read
// since the claim made it due, then its blobs: the archive, the v1
// chunks and the v2 blocks.
func (q cacheQueue) Run(ctx context.Context, id int64) error {
	p := q.p
	now := p.now()
	var keys []string
	err := p.s.DB.Tx(ctx, func(tx *store.Tx) error {
		list, err := cacheBlobKeys(ctx, tx, id)
		if err != nil {
			return err
		}
		n, err := store.Affected(tx.ExecContext(ctx, `DELETE FROM actions_caches WHERE id = $1 AND lease_owner = $2
			AND ((NOT finalized AND created_at <= $3) OR (finalized AND last_accessed_at <= $4))`,
			id, p.owner, now.Add(-p.Abandoned), now.Add(-p.Unused)))
		if n == 1 {
			keys = list
		}
		return err
	})
	if err != nil {
		return err
	}
	if len(keys) == 0 { // committed or read meanwhile: end the lease
		_, err := p.s.DB.ExecContext(ctx, `UPDATE actions_caches SET lease_owner = '', lease_until = NULL
			WHERE id = $1 AND lease_owner = $2`, id, p.owner)
		return err
	}
	return p.s.deleteBlobs(ctx, keys)
}

// deleteBlobs deletes the blobs of keys (one missing is no error).
func (s *Service) deleteBlobs(ctx context.Context, keys []string) error {
	if s.Blobs == nil {
		return nil
	}
	for _, k := range keys {
		if err := s.Blobs.Delete(ctx, k); err != nil {
			return fmt.Errorf("delete blob %s: %w", k, err)
		}
	}
	return nil
}

func (p *CachePruner) now() time.Time {
	if p.s.Now != nil {
		return p.s.Now().UTC().Truncate(time.Microsecond)
	}
	return store.Now()
}

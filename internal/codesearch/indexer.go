package codesearch

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"forgeapi/internal/events"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
	"forgeapi/internal/worker"
)

// Defaults of Config.
const (
	DefaultLease        = 10 * time.Minute
	DefaultPollInterval = time.Minute
	DefaultBatchBytes   = 16 << 20
	DefaultWorkers      = 4
	// DefaultPostgresWorkers is Workers' default on PostgreSQL, whose
	// round trips a run mostly waits on: at 50 pushes a second, 4
	// workers' runs (about 45 ms each under load) fell behind.
	DefaultPostgresWorkers = 8
)

// Config configures the Indexer. Zero fields take the defaults.
type Config struct {
	// Lease is how long a claimed repository stays with this server; a
	// run killed or failed is done again once it expired. Default
	// DefaultLease.
	Lease time.Duration
	// PollInterval is how often Run looks for due work that no wake
	// announced (work of other servers, expired leases). Default
	// DefaultPollInterval.
	PollInterval time.Duration
	// BatchBytes is how much file content one transaction writes at
	// most: a large tree is written in several transactions, the last of
	// which writes the commits, removes what is gone and records the work
	// done. Default DefaultBatchBytes.
	BatchBytes int
	// Workers is how many repositories are indexed at once. A run
	// spends much of its time waiting for the database's round trips,
	// so one at a time fell behind a stream of pushes to many
	// repositories. Default DefaultWorkers on SQLite (a run takes a
	// millisecond or two, and writes one at a time),
	// DefaultPostgresWorkers on PostgreSQL.
	Workers int
}

// Indexer keeps the index of the repositories whose default branch was
// pushed: it is the push sink that requests the work (in the push's
// transaction) and the leased worker that does it.
type Indexer struct {
	db     *store.DB
	repos  *repos.Service
	cfg    Config
	owner  string // this process's lease owner id
	logger *slog.Logger
	wake   *worker.Signal
}

// NewIndexer returns the Indexer of the repositories of svc.
func NewIndexer(db *store.DB, svc *repos.Service, cfg Config, logger *slog.Logger) *Indexer {
	if cfg.Lease <= 0 {
		cfg.Lease = DefaultLease
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if cfg.BatchBytes <= 0 {
		cfg.BatchBytes = DefaultBatchBytes
	}
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultWorkers
		if db.Dialect == store.Postgres {
			cfg.Workers = DefaultPostgresWorkers
		}
	}
	if logger == nil {
		logger = slog.Default()
	}
	return &Indexer{db: db, repos: svc, cfg: cfg, owner: wire.NewGUID(), logger: logger, wake: worker.NewSignal()}
}

// Request asks for the repository to be indexed again, in q's
// transaction: the work is due once that transaction committed. A
// repository already due keeps the time it became due (its place in
// the claims' order).
func Request(ctx context.Context, q store.Q, repoID int64) error {
	_, err := q.ExecContext(ctx, `INSERT INTO code_search_work (repository_id, requested, requested_at) VALUES ($1, 1, $2)
		ON CONFLICT (repository_id) DO UPDATE SET requested = code_search_work.requested + 1,
			requested_at = CASE WHEN code_search_work.requested > code_search_work.indexed
				THEN code_search_work.requested_at ELSE excluded.requested_at END`, repoID, store.Now())
	if err != nil {
		return fmt.Errorf("request code indexing: %w", store.Normalize(err))
	}
	return nil
}

// RequestAfterCommit requests the repository's indexing in tx and wakes
// the worker once tx committed.
func (x *Indexer) RequestAfterCommit(ctx context.Context, tx *store.Tx, repoID int64) error {
	if err := Request(ctx, tx, repoID); err != nil {
		return err
	}
	tx.AfterCommit(x.wake.Wake)
	return nil
}

// HandleEvent requests indexing for a push of a repository's default
// branch (git's, or the server's own pushes) and for a change of the
// default branch; it ignores the other events, and forks (the
// platform's code search leaves them out).
func (x *Indexer) HandleEvent(ctx context.Context, tx *store.Tx, e *events.Event) error {
	if e.Repo == nil || e.Repo.ForkOfID != 0 {
		return nil
	}
	switch e.HookEvent {
	case "push":
		if ref, _ := e.HookPayload["ref"].(string); ref != "refs/heads/"+e.Repo.DefaultBranch {
			return nil
		}
	case "repository":
		changes, _ := e.HookPayload["changes"].(map[string]any)
		if e.HookPayload["action"] != "edited" || changes["default_branch"] == nil {
			return nil
		}
	default:
		return nil
	}
	return x.RequestAfterCommit(ctx, tx, e.Repo.ID)
}

// Run keeps Config.Workers workers indexing until ctx is done. Each
// claims the next due repository as soon as it finished one; one with
// nothing due waits for a request of this server or PollInterval. A
// request wakes one waiting worker, and a worker that claimed a
// repository wakes the next, so that a burst of requests reaches every
// idle worker while the others still index (a pass that waited for its
// slowest run kept newly due repositories waiting behind it).
func (x *Indexer) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for range x.cfg.Workers {
		wg.Go(func() {
			q := queue{x: x, claimed: x.wake.Wake}
			worker.Loop{Pass: func(ctx context.Context) { x.drain(ctx, q) }, Interval: x.cfg.PollInterval, Wake: x.wake.C()}.Run(ctx)
		})
	}
	wg.Wait()
}

// RunOnce indexes every due repository it can claim, Config.Workers at
// a time, and returns how many it indexed. Errors are logged; a
// repository that failed stays leased and is indexed again once its
// lease expired.
func (x *Indexer) RunOnce(ctx context.Context) int {
	var wg sync.WaitGroup
	var total atomic.Int64
	for range x.cfg.Workers {
		wg.Go(func() { total.Add(int64(x.drain(ctx, queue{x: x}))) })
	}
	wg.Wait()
	return int(total.Load())
}

// drain indexes the due repositories q claims until none is left, and
// returns how many it indexed; errors are logged.
func (x *Indexer) drain(ctx context.Context, q queue) int {
	n, err := worker.Drain[claimed](ctx, q, func(c claimed, err error) {
		x.logger.Error("code search indexing", "repository_id", c.repoID, "err", err)
	})
	if err != nil {
		x.logger.Error("claim repository for code search indexing", "err", err)
	}
	return n
}

// ReleaseLeases ends now the leases a killed process held, so that its
// repositories are indexed at once rather than when the leases expire,
// and reports how many it ended. Only the one server of a database may
// call it.
func (x *Indexer) ReleaseLeases(ctx context.Context) (int64, error) {
	return store.Affected(x.db.ExecContext(ctx, `UPDATE code_search_work SET lease_owner = '', lease_until = NULL
		WHERE repository_id IN (SELECT repository_id FROM code_search_work WHERE lease_until > $1)`, store.Now()))
}

// claimed is a claimed repository: the generation of requests its claim
// saw, the head it indexed last ("" for none) and the commit whose tree
// its file rows hold ("" when unknown).
type claimed struct {
	repoID    int64
	requested int64
	head      string
	filesAt   string
}

// queue is code_search_work as the Indexer's worker.Queue; claimed, when
// set, is called after each claim.
type queue struct {
	x       *Indexer
	claimed func()
}

// Claim leases the due repository that has waited longest (first
// requested since it was last indexed) whose lease is free or expired.
// The order is the requests': by repository id, a stream of pushes to
// the first repositories kept the others waiting for seconds.
func (q queue) Claim(ctx context.Context) (claimed, bool, error) {
	var c claimed
	now := store.Now()
	err := q.x.db.QueryRowContext(ctx, `UPDATE code_search_work SET lease_owner = $1, lease_until = $2
		WHERE repository_id IN (
			SELECT repository_id FROM code_search_work
			WHERE requested > indexed AND (lease_until IS NULL OR lease_until < $3)
			ORDER BY requested_at, repository_id LIMIT 1`+q.x.db.SkipLocked()+`)
		RETURNING repository_id, requested, head_sha, files_at`, q.x.owner, now.Add(q.x.cfg.Lease), now).Scan(&c.repoID, &c.requested, &c.head, &c.filesAt)
	if errors.Is(err, sql.ErrNoRows) {
		return c, false, nil
	}
	if err != nil {
		if err = store.Normalize(err); errors.Is(err, store.ErrNotFound) {
			return c, false, nil
		}
		return c, false, err
	}
	if q.claimed != nil {
		q.claimed()
	}
	return c, true, nil
}

// Run indexes the claimed repository.
func (q queue) Run(ctx context.Context, c claimed) error {
	return q.x.index(ctx, c)
}

// errLeaseLost ends a run whose lease another server took over: its
// transaction is rolled back, the new holder writes its own rows.
var errLeaseLost = errors.New("codesearch: lease lost")

// index reads the repository's default branch in process and brings its
// rows to it, in batches (Config.BatchBytes). A run cut short leaves the
// batches it wrote, and files_at cleared by the first of them: the next
// run compares the whole tree with the rows and writes the rest. A
// repository gone has no rows left (they were deleted with it).
func (x *Indexer) index(ctx context.Context, c claimed) error {
	repo, err := repos.ByID(ctx, x.db, c.repoID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("load repository: %w", err)
	}
	g, err := gitread.Open(x.repos.GitDir(repo.ID))
	if err != nil {
		return err
	}
	defer g.Close()
	head, err := branchHead(g, repo.DefaultBranch)
	if err != nil {
		return err
	}
	var p indexPlan
	var last []fileRow
	if head == "" {
		current, err := indexedFiles(ctx, x.db, repo.ID)
		if err != nil {
			return err
		}
		p = indexPlan{fullHistory: true, removed: pathsOf(current)}
	} else {
		if p, err = plan(ctx, g, x.db, repo.ID, c, head); err != nil {
			return err
		}
		var skipped []string
		if last, skipped, err = x.writeBatches(ctx, g, repo.ID, p.added); err != nil {
			return err
		}
		p.removed = append(p.removed, skipped...)
	}
	return x.db.Tx(ctx, func(tx *store.Tx) error {
		if err := p.writeFinal(ctx, tx, repo.ID, last); err != nil {
			return err
		}
		// the lease is checked last: a run whose lease another server
		// took over rolls its rows back
		n, err := store.Affected(tx.ExecContext(ctx, `UPDATE code_search_work
			SET indexed = $1, head_sha = $2, files_at = $2, lease_owner = '', lease_until = NULL
			WHERE repository_id = $3 AND lease_owner = $4`, c.requested, head, repo.ID, x.owner))
		if err != nil {
			return fmt.Errorf("record code indexing: %w", store.Normalize(err))
		}
		if n == 0 {
			return errLeaseLost
		}
		return nil
	})
}

// writeBatches reads the files' content and writes the text files in
// transactions of about Config.BatchBytes each, but for the last batch,
// which it returns for the final transaction, with the paths of the files
// that are not text (their rows go). Each early transaction clears the
// repository's files_at: its rows hold no one commit's tree until the
// final transaction.
func (x *Indexer) writeBatches(ctx context.Context, g *gitread.Repository, repoID int64, files []fileRow) (last []fileRow, skipped []string, err error) {
	var batch []fileRow
	size := 0
	for _, f := range files {
		b, err := g.ReadBlob(f.BlobSHA)
		if err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", f.Path, err)
		}
		if !isText(b) {
			skipped = append(skipped, f.Path)
			continue
		}
		f.Content, size = string(b), size+len(b)
		batch = append(batch, f)
		if size < x.cfg.BatchBytes {
			continue
		}
		err = x.db.Tx(ctx, func(tx *store.Tx) error {
			if err := x.holdLease(ctx, tx, repoID); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `UPDATE code_search_work SET files_at = '' WHERE repository_id = $1`, repoID); err != nil {
				return fmt.Errorf("clear indexed files' commit: %w", store.Normalize(err))
			}
			return writeFiles(ctx, tx, repoID, batch)
		})
		if err != nil {
			return nil, nil, err
		}
		batch, size = nil, 0
	}
	return batch, skipped, nil
}

// holdLease renews the repository's lease in tx, or fails with
// errLeaseLost when it is not this process's any more.
func (x *Indexer) holdLease(ctx context.Context, tx *store.Tx, repoID int64) error {
	n, err := store.Affected(tx.ExecContext(ctx, `UPDATE code_search_work SET lease_until = $1
		WHERE repository_id = $2 AND lease_owner = $3`, store.Now().Add(x.cfg.Lease), repoID, x.owner))
	if err != nil {
		return fmt.Errorf("renew code indexing lease: %w", store.Normalize(err))
	}
	if n == 0 {
		return errLeaseLost
	}
	return nil
}

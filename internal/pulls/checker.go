package pulls

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"time"

	"forgeapi/internal/git/gitwrite"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
	"forgeapi/internal/worker"
)

// Defaults of CheckerConfig.
const (
	DefaultCheckLease        = 2 * time.Minute
	DefaultCheckPollInterval = 2 * time.Second
)

// CheckerConfig configures the Checker; zero fields take the defaults.
type CheckerConfig struct {
	// Lease is how long a claimed check stays with this server.
	// Default DefaultCheckLease.
	Lease time.Duration
	// PollInterval is how often Run looks for due checks without a wake
	// (checks made due by other servers). Default DefaultCheckPollInterval.
	PollInterval time.Duration
	// Sign, when set, signs the test merge commits (the server's
	// web-flow key), as the merges the server writes are signed.
	Sign gitwrite.Signer
}

// Checker computes the mergeability of open pull requests whose check
// is due (created, head or base moved, reopened) with a real test merge
// (git merge-tree, then a merge commit kept at refs/pull/{n}/merge), in
// the background as on the platform. Checks are claimed with a lease
// (SKIP LOCKED on PostgreSQL), so several servers share them; a result
// is recorded only when no push made the check stale again meanwhile.
type Checker struct {
	db     *store.DB
	repos  *repos.Service
	cfg    CheckerConfig
	owner  string
	wake   *worker.Signal
	logger *slog.Logger
}

// NewChecker returns a Checker over db reading git through svc.
func NewChecker(db *store.DB, svc *repos.Service, cfg CheckerConfig, logger *slog.Logger) *Checker {
	if cfg.Lease <= 0 {
		cfg.Lease = DefaultCheckLease
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultCheckPollInterval
	}
	if logger == nil {
		logger = slog.Default()
	}
	return &Checker{db: db, repos: svc, cfg: cfg, owner: wire.NewGUID(), wake: worker.NewSignal(), logger: logger}
}

// Wake makes Run look for due checks now.
func (c *Checker) Wake() { c.wake.Wake() }

// ReleaseLeases ends now the leases of the due checks that a killed
// process held, so that they run at once instead of when the lease
// ends, and reports how many it ended. It reads the due checks' index.
// Only the one server of a database may call it, knowing the lease
// holders dead (store.DB.ClaimServer's exclusive).
func (c *Checker) ReleaseLeases(ctx context.Context) (int64, error) {
	return store.Affected(c.db.ExecContext(ctx, `UPDATE pull_requests SET lease_until = $1
		WHERE id IN (SELECT id FROM pull_requests WHERE check_due AND lease_until > $1)`, store.Now()))
}

// Run checks what is due at once, then whenever woken or every
// PollInterval, until ctx is done.
func (c *Checker) Run(ctx context.Context) {
	worker.Loop{Pass: func(ctx context.Context) { c.RunOnce(ctx) }, Interval: c.cfg.PollInterval, Wake: c.wake.C()}.Run(ctx)
}

// RunOnce runs every check it can claim and returns how many it
// recorded. Errors are logged; a failed check stays leased and is
// retried once its lease expired.
func (c *Checker) RunOnce(ctx context.Context) int {
	n, err := worker.Drain[dueCheck](ctx, checks{c}, func(due dueCheck, err error) {
		c.logger.Error("check mergeability", "pull_request_id", due.id, "err", err)
	})
	if err != nil {
		c.logger.Error("claim mergeability check", "err", err)
	}
	return n
}

// dueCheck is a claimed check: the pull request and the generation the
// result is for.
type dueCheck struct{ id, gen int64 }

// checks is the pull requests' due checks as the Checker's worker.Queue.
type checks struct{ c *Checker }

func (q checks) Claim(ctx context.Context) (dueCheck, bool, error) {
	id, gen, err := q.c.claim(ctx)
	return dueCheck{id, gen}, id != 0, err
}

func (q checks) Run(ctx context.Context, due dueCheck) error { return q.c.check(ctx, due.id, due.gen) }

// claim leases one due check: its id and generation; 0 when none is due.
func (c *Checker) claim(ctx context.Context) (int64, int64, error) {
	now := store.Now()
	var id, gen int64
	err := c.db.QueryRowContext(ctx, `
		UPDATE pull_requests SET lease_owner = $1, lease_until = $2
		WHERE id IN (
			SELECT x.id FROM pull_requests x
			WHERE x.check_due AND (x.lease_until IS NULL OR x.lease_until < $3)
			ORDER BY x.id LIMIT 1`+c.db.SkipLocked()+`)
		RETURNING id, check_generation`, c.owner, now.Add(c.cfg.Lease), now).Scan(&id, &gen)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, nil
	}
	if err = store.Normalize(err); errors.Is(err, store.ErrNotFound) {
		return 0, 0, nil
	}
	return id, gen, err
}

// check runs the test merge of the claimed pull request and records it
// when its generation is still gen.
func (c *Checker) check(ctx context.Context, id, gen int64) error {
	var repoID, number int64
	var baseRef, headSHA, state string
	var draft bool
	if err := c.db.QueryRowContext(ctx, `SELECT p.repository_id, p.number, p.base_ref, p.head_sha, p.draft, i.state
		FROM pull_requests p JOIN issues i ON i.id = p.issue_id WHERE p.id = $1`, id).Scan(&repoID, &number, &baseRef, &headSHA, &draft, &state); err != nil {
		return store.Normalize(err)
	}
	git := gitDir(c.repos.GitDir(repoID))
	var mergeable *bool
	mstate, mergeSHA := StateUnknown, ""
	baseSHA, ok, err := git.commit(ctx, "refs/heads/"+baseRef)
	if err != nil {
		return err
	}
	if ok && state == "open" {
		mergeSHA, err = testMerge(ctx, git, number, baseSHA, headSHA, c.cfg.Sign)
		if err != nil && !errors.Is(err, errConflict) {
			return err
		}
		clean := err == nil
		mergeable = &clean
		mstate = StateDirty
		if clean {
			mstate = StateClean
			if draft {
				mstate = StateDraft
			}
		}
	}
	// Run again when PostgreSQL picks this transaction as a deadlock's
	// victim: a merge's transaction locks the counts row first (the
	// closed issue's count) and then the base's other pull requests
	// (their checks due again), the opposite order. Failed, the check
	// would wait for its lease to end (DefaultCheckLease).
	return c.db.RetryTx(ctx, func(tx *store.Tx) error {
		if err := c.record(ctx, tx, id, gen, mergeable, mstate, mergeSHA, baseSHA); err != nil {
			return err
		}
		// The test merge's objects count in the repository's size; its
		// counts row is locked last, after the pull request's.
		return repos.MeasureSize(ctx, tx, repoID, string(git))
	})
}

// testMerge writes the merge commit of head into base (signed with sign
// when set) and points refs/pull/{n}/merge at it; errConflict (and no
// ref) when they conflict.
func testMerge(ctx context.Context, git gitDir, number int64, baseSHA, headSHA string, sign gitwrite.Signer) (string, error) {
	tree, err := git.mergeTree(ctx, baseSHA, headSHA)
	if errors.Is(err, errConflict) {
		return "", errors.Join(err, git.deleteRef(ctx, pullRef(number, "merge")))
	} else if err != nil {
		return "", err
	}
	who := person{Name: "forgeapi", Email: "noreply@forgeapi.local", When: time.Now()}
	sha, err := git.commitTree(ctx, tree, []string{baseSHA, headSHA}, "Merge "+headSHA+" into "+baseSHA+"\n", who, who, sign)
	if err != nil {
		return "", err
	}
	return sha, git.setRef(ctx, pullRef(number, "merge"), sha)
}

// record stores a check's result in tx and releases the lease; a stale
// check (the generation moved on) only releases it.
func (c *Checker) record(ctx context.Context, tx store.Q, id, gen int64, mergeable *bool, state, mergeSHA, baseSHA string) error {
	_, err := tx.ExecContext(ctx, `UPDATE pull_requests SET mergeable = $1, mergeable_state = $2, merge_commit_sha = $3,
		base_sha = CASE WHEN $4 = '' THEN base_sha ELSE $4 END, check_due = FALSE, lease_owner = NULL, lease_until = NULL
		WHERE id = $5 AND check_generation = $6 AND merged_at IS NULL`, mergeable, state, mergeSHA, baseSHA, id, gen)
	if err != nil {
		return store.Normalize(err)
	}
	_, err = tx.ExecContext(ctx, `UPDATE pull_requests SET lease_owner = NULL, lease_until = NULL WHERE id = $1 AND lease_owner = $2`, id, c.owner)
	return store.Normalize(err)
}

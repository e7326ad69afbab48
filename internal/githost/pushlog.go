package githost

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"forgeapi/internal/git/githttp"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
	"forgeapi/internal/worker"
)

// The push log makes a push's events durable. preReceive commits a
// push_log row before any reference moves; the transaction that records
// the push's events deletes it, and only the transaction whose DELETE
// removed the row records them, so a push's events are recorded once
// whether its own postReceive or the Recoverer gets there first. A row
// that outlives its push (the process died after git moved the
// references, or the events transaction failed) is recovered by the
// Recoverer.
//
// Which of a logged push's updates git applied is read from git's
// reflogs: each push has a key (push_log.push_key), receive-pack writes
// every update it applies to the reference's reflog with that key as the
// committer email, and the row keeps the first line of each updated
// reference's reflog as it was before the push (see appliedUpdate).

// Defaults of RecoveryConfig.
const (
	DefaultRecoveryGrace        = time.Minute
	DefaultRecoveryLease        = time.Minute
	DefaultRecoveryPollInterval = time.Minute
)

// logUpdate is a reference update as the push log stores it.
type logUpdate struct {
	Ref string `json:"ref"`
	Old string `json:"old"`
	New string `json:"new"`
	// LogStart is the first line of the reference's reflog before the
	// push ("" when it had none).
	LogStart string `json:"log_start,omitempty"`
}

// pushLogEntry is one push_log row: a push whose events are not recorded
// yet.
type pushLogEntry struct {
	ID       int64
	RepoID   int64
	PusherID int64
	// Key names the push in git's reflogs (githttp.Request.PushID); ""
	// for rows logged before pushes had one.
	Key     string
	Updates []githttp.RefUpdate
	// LogStarts holds, for each update, the first line of the reference's
	// reflog before the push ("" when it had none).
	LogStarts  []string
	RefsBefore []string
	// ViaGit marks a push over git (audit log git.push), not a server
	// push of the API nor one the Recoverer records.
	ViaGit bool
	// ViaSSH marks a push over git over SSH.
	ViaSSH bool
	// PushedAt, when set, stamps the push's events instead of the time
	// they are recorded: the Recoverer sets it to when the push was logged.
	PushedAt time.Time
	// Intent is what a server push does besides moving the references
	// (zero for none), carried out when the push is recorded.
	Intent PushIntent
}

// newPushKey returns a new push's name in git's reflogs.
func newPushKey() string { return "push-" + wire.NewGUID() + "@forgeapi" }

// readStateBefore fills in the entry of a push about to move references
// what the Recoverer needs of the repository before the push: the commits
// its references point at and the first line of each updated reference's
// reflog.
func readStateBefore(dir string, e *pushLogEntry) error {
	g, err := gitread.Open(dir)
	if err != nil {
		return err
	}
	defer g.Close()
	if e.RefsBefore, err = g.RefCommits(); err != nil {
		return fmt.Errorf("read references before push: %w", err)
	}
	e.LogStarts = make([]string, len(e.Updates))
	for i, u := range e.Updates {
		first, ok, err := g.RefLogFirst(u.Ref)
		if err != nil {
			return fmt.Errorf("read reflog before push: %w", err)
		}
		if ok {
			e.LogStarts[i] = first.Line
		}
	}
	return nil
}

// logPush commits the push_log row of a push about to move references
// and returns its id.
func logPush(ctx context.Context, db *store.DB, e *pushLogEntry) (int64, error) {
	updates := make([]logUpdate, len(e.Updates))
	for i, u := range e.Updates {
		updates[i] = logUpdate{Ref: u.Ref, Old: u.OldSHA, New: u.NewSHA}
		if i < len(e.LogStarts) {
			updates[i].LogStart = e.LogStarts[i]
		}
	}
	rawUpdates, err := json.Marshal(updates)
	if err != nil {
		return 0, err
	}
	refsBefore := e.RefsBefore
	if refsBefore == nil {
		refsBefore = []string{}
	}
	rawBefore, err := json.Marshal(refsBefore)
	if err != nil {
		return 0, err
	}
	var id int64
	err = db.QueryRowContext(ctx, `INSERT INTO push_log (repository_id, pusher_id, push_key, updates, refs_before, created_at,
		intent_kind, intent_subject) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
		e.RepoID, e.PusherID, e.Key, string(rawUpdates), string(rawBefore), store.Now(), e.Intent.Kind, e.Intent.Subject).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("log push: %w", store.Normalize(err))
	}
	return id, nil
}

// RecoveryConfig configures the Recoverer. Zero fields take the defaults.
type RecoveryConfig struct {
	// Grace is how old a push_log row must be before the Recoverer takes
	// it, so that a live push's own postReceive normally records it.
	// Default DefaultRecoveryGrace; a negative value takes rows at once.
	Grace time.Duration
	// Lease is how long a claimed row stays with this server; a row whose
	// recovery failed is claimed again once its lease has expired.
	// Default DefaultRecoveryLease.
	Lease time.Duration
	// PollInterval is how often Run looks for rows to recover. Default
	// DefaultRecoveryPollInterval.
	PollInterval time.Duration
}

// Recoverer records the events of pushes whose push_log row outlived
// them: for each update git applied (see appliedUpdate), whatever later
// pushes did to the reference, the events postReceive would have
// recorded, stamped with the time the push was logged; updates git did
// not apply are dropped. Rows are claimed with a lease (SKIP LOCKED on
// PostgreSQL), so several servers share the work.
type Recoverer struct {
	h      *Handler
	cfg    RecoveryConfig
	owner  string // this process's lease owner id
	logger *slog.Logger
}

// NewRecoverer returns the Recoverer of the handler's pushes.
func NewRecoverer(h *Handler, cfg RecoveryConfig) *Recoverer {
	switch {
	case cfg.Grace == 0:
		cfg.Grace = DefaultRecoveryGrace
	case cfg.Grace < 0:
		cfg.Grace = 0
	}
	if cfg.Lease <= 0 {
		cfg.Lease = DefaultRecoveryLease
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultRecoveryPollInterval
	}
	logger := h.Logger
	if logger == nil {
		logger = slog.Default()
	}
	return &Recoverer{h: h, cfg: cfg, owner: wire.NewGUID(), logger: logger}
}

// Run calls RunOnce every PollInterval until ctx is done. The caller
// runs RunOnce at start.
func (r *Recoverer) Run(ctx context.Context) {
	worker.Loop{Pass: func(ctx context.Context) { r.RunOnce(ctx) }, Interval: r.cfg.PollInterval, NoPassAtStart: true}.Run(ctx)
}

// ReleaseLeases ends now the leases that a killed process held on push
// log rows (recoveries cut short), so that the start's RunOnce takes them
// instead of the recovery after the lease, and reports how many it ended
// (push_log holds only the pushes under way or cut short).
// Only the one server of a database may call it, knowing the lease
// holders dead (store.DB.ClaimServer's exclusive).
func (r *Recoverer) ReleaseLeases(ctx context.Context) (int64, error) {
	return store.Affected(r.h.DB.ExecContext(ctx, `UPDATE push_log SET lease_until = $1 WHERE lease_until > $1`, store.Now()))
}

// RunOnce recovers every push_log row older than the grace period that
// it can claim. Errors are logged; a row that failed stays leased and is
// retried once its lease has expired. It returns how many rows it
// recovered.
func (r *Recoverer) RunOnce(ctx context.Context) int { return r.recoverOlder(ctx, r.cfg.Grace) }

// RecoverLeftovers is RunOnce without the grace period: it recovers
// every row, however young, so that a push (and its intent: a merge) cut
// short by a kill is recorded, or dropped, before the next process
// serves a request, rather than a grace period later. Only the one
// server of a database may call it, before it serves: every row is then
// a dead process's (store.DB.ClaimServer's exclusive), none a push under
// way.
func (r *Recoverer) RecoverLeftovers(ctx context.Context) int { return r.recoverOlder(ctx, 0) }

// recoverOlder recovers every row older than grace that it can claim.
func (r *Recoverer) recoverOlder(ctx context.Context, grace time.Duration) int {
	n, err := worker.Drain[*pushLogEntry](ctx, recoveries{r, grace}, func(e *pushLogEntry, err error) {
		r.logger.Error("recover push events", "push_log_id", e.ID, "repository_id", e.RepoID, "err", err)
	})
	if err != nil {
		r.logger.Error("claim push log entry", "err", err)
	}
	return n
}

// recoveries is the push_log rows older than grace as the Recoverer's
// worker.Queue.
type recoveries struct {
	r     *Recoverer
	grace time.Duration
}

func (q recoveries) Claim(ctx context.Context) (*pushLogEntry, bool, error) {
	e, err := q.r.claim(ctx, q.grace)
	return e, e != nil, err
}

// Run recovers the row's push; a push still under way here is skipped:
// its postReceive records it.
func (q recoveries) Run(ctx context.Context, e *pushLogEntry) error {
	if _, live := q.r.h.live.Load(e.ID); live {
		return worker.ErrSkipped
	}
	return q.r.recover(ctx, e)
}

// claim leases the oldest unleased (or expired) row older than grace;
// nil when there is none.
func (r *Recoverer) claim(ctx context.Context, grace time.Duration) (*pushLogEntry, error) {
	now := store.Now()
	db := r.h.DB
	var e pushLogEntry
	var rawUpdates, rawBefore string
	err := db.QueryRowContext(ctx, `
		UPDATE push_log SET lease_owner = $1, lease_until = $2
		WHERE id IN (
			SELECT id FROM push_log
			WHERE created_at <= $3 AND (lease_until IS NULL OR lease_until < $4)
			ORDER BY id LIMIT 1`+db.SkipLocked()+`)
		RETURNING id, repository_id, pusher_id, push_key, updates, refs_before, created_at, intent_kind, intent_subject`,
		r.owner, now.Add(r.cfg.Lease), now.Add(-grace), now).Scan(&e.ID, &e.RepoID, &e.PusherID, &e.Key, &rawUpdates, &rawBefore, &e.PushedAt,
		&e.Intent.Kind, &e.Intent.Subject)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		if err = store.Normalize(err); errors.Is(err, store.ErrNotFound) {
			return nil, nil
		}
		return nil, err
	}
	updates, err := parseLogUpdates(rawUpdates)
	if err != nil {
		return nil, fmt.Errorf("push log entry %d: updates: %w", e.ID, err)
	}
	for _, u := range updates {
		e.Updates = append(e.Updates, githttp.RefUpdate{Ref: u.Ref, OldSHA: u.Old, NewSHA: u.New})
		e.LogStarts = append(e.LogStarts, u.LogStart)
	}
	if err := json.Unmarshal([]byte(rawBefore), &e.RefsBefore); err != nil {
		return nil, fmt.Errorf("push log entry %d: refs_before: %w", e.ID, err)
	}
	return &e, nil
}

// parseLogUpdates decodes a push_log row's updates column.
func parseLogUpdates(raw string) ([]logUpdate, error) {
	var updates []logUpdate
	err := json.Unmarshal([]byte(raw), &updates)
	return updates, err
}

// recover records the events of the entry's updates that git applied and
// deletes the entry.
func (r *Recoverer) recover(ctx context.Context, e *pushLogEntry) error {
	g, err := gitread.Open(r.h.Repos.GitDir(e.RepoID))
	if err != nil {
		return err
	}
	defer g.Close()
	c := &appliedCheck{r: r, g: g, e: e}
	var applied []githttp.RefUpdate
	for i, u := range e.Updates {
		ok, err := c.appliedUpdate(ctx, i)
		if err != nil {
			return err
		}
		if ok {
			applied = append(applied, u)
		}
	}
	return r.h.recordPush(ctx, g, e, applied)
}

// appliedCheck decides which updates of one logged push git applied.
type appliedCheck struct {
	r *Recoverer
	g *gitread.Repository
	e *pushLogEntry
	// later holds the updates logged after the push that are still
	// unrecorded, in log order; read once, when needed.
	later []logUpdate
	read  bool
}

// appliedUpdate reports whether git applied the entry's update i, from
// what git recorded:
//
//   - the reference's reflog has the entry old→new written by this push
//     (its key as the committer email): applied, whatever later pushes
//     did to the reference (moved it on, force-pushed over it);
//   - the reflog is the one the reference had before the push (same first
//     line): git did not apply the update (it would have written that
//     entry, or removed the reflog for a deletion);
//   - otherwise the reflog that could tell is gone (a later deletion of
//     the reference removed it, gc expired the entries, or the row
//     predates push keys): the update was applied when its new value
//     leads to the reference's current value (the zero SHA when the
//     reference is gone) through the chain of later unrecorded logged
//     updates of the reference (each one's old value the previous one's
//     new value).
func (c *appliedCheck) appliedUpdate(ctx context.Context, i int) (bool, error) {
	u := c.e.Updates[i]
	if c.e.Key != "" {
		log, err := c.g.RefLog(u.Ref)
		if err != nil {
			return false, err
		}
		for _, l := range log {
			if l.Email == c.e.Key && l.Old == u.OldSHA && l.New == u.NewSHA {
				return true, nil
			}
		}
		if len(log) > 0 && c.e.LogStarts[i] != "" && log[0].Line == c.e.LogStarts[i] {
			return false, nil
		}
	}
	return c.chainReachesRef(ctx, u)
}

// chainReachesRef reports whether u's new value leads to the reference's
// current value through the later unrecorded logged updates of it.
func (c *appliedCheck) chainReachesRef(ctx context.Context, u githttp.RefUpdate) (bool, error) {
	later, err := c.laterUpdates(ctx)
	if err != nil {
		return false, err
	}
	value := u.NewSHA
	for _, v := range later {
		if v.Ref == u.Ref && v.Old == value {
			value = v.New
		}
	}
	target, exists, err := c.g.RefTarget(u.Ref)
	if err != nil {
		return false, err
	}
	if !exists {
		target = zeroSHA
	}
	return value == target, nil
}

// laterUpdates returns the updates of the repository's push_log rows
// logged after the entry, in log order.
func (c *appliedCheck) laterUpdates(ctx context.Context) ([]logUpdate, error) {
	if c.read {
		return c.later, nil
	}
	rows, err := c.r.h.DB.QueryContext(ctx, `SELECT id, updates FROM push_log WHERE repository_id = $1 AND id > $2 ORDER BY id`, c.e.RepoID, c.e.ID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var raw string
		if err := rows.Scan(&id, &raw); err != nil {
			return nil, err
		}
		updates, err := parseLogUpdates(raw)
		if err != nil {
			return nil, fmt.Errorf("push log entry %d: updates: %w", id, err)
		}
		c.later = append(c.later, updates...)
	}
	c.read = true
	return c.later, rows.Err()
}

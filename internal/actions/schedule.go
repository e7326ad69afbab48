package actions

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/robfig/cron/v3"

	"forgeapi/internal/actions/engine"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
	"forgeapi/internal/worker"
)

// cronParser reads a schedule's cron expressions as the platform does:
// five fields (minute, hour, day of month, month, day of week), in UTC.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)

// nextFire is the first time after t that the cron expression fires
// (UTC); ok is false for an expression that does not parse.
func nextFire(expr string, t time.Time) (time.Time, bool) {
	sched, err := cronParser.Parse(expr)
	if err != nil {
		return time.Time{}, false
	}
	next := sched.Next(t.UTC())
	return next, !next.IsZero()
}

// now is the service's clock.
func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return store.Now()
}

// syncSchedules records the schedule triggers of the workflows of the
// commit, the new head of the repository's default branch: new ones fire
// next after now, unchanged ones keep their next time, and those of the
// workflows no longer scheduled there are dropped.
func (s *Service) syncSchedules(ctx context.Context, tx *store.Tx, repo *repos.Repository, sha string) error {
	files, err := s.workflowFiles(ctx, repo.ID, sha)
	if err != nil {
		return err
	}
	now := s.now()
	type key struct {
		wf   int64
		cron string
	}
	keep := map[key]bool{}
	for _, f := range files {
		parsed, err := engine.Parse(f.Content)
		if err != nil || len(parsed.Events["schedule"].Crons) == 0 {
			continue
		}
		name := parsed.Name
		if name == "" {
			name = f.Path
		}
		wf, err := upsertWorkflow(ctx, tx, repo.ID, f.Path, name, tx.Now())
		if err != nil {
			return err
		}
		for _, c := range parsed.Events["schedule"].Crons {
			next, ok := nextFire(c, now)
			if !ok || keep[key{wf.ID, c}] {
				continue
			}
			keep[key{wf.ID, c}] = true
			if _, err := tx.ExecContext(ctx, `INSERT INTO actions_schedules (workflow_id, cron, repository_id, next_at)
				VALUES ($1, $2, $3, $4) ON CONFLICT (workflow_id, cron) DO NOTHING`, wf.ID, c, repo.ID, next); err != nil {
				return store.Normalize(err)
			}
		}
	}
	rows, err := tx.QueryContext(ctx, `SELECT workflow_id, cron FROM actions_schedules WHERE repository_id = $1`, repo.ID)
	if err != nil {
		return store.Normalize(err)
	}
	var drop []key
	for rows.Next() {
		var k key
		if err := rows.Scan(&k.wf, &k.cron); err != nil {
			rows.Close()
			return store.Normalize(err)
		}
		if !keep[k] {
			drop = append(drop, k)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return store.Normalize(err)
	}
	for _, k := range drop {
		if _, err := tx.ExecContext(ctx, `DELETE FROM actions_schedules WHERE workflow_id = $1 AND cron = $2`, k.wf, k.cron); err != nil {
			return store.Normalize(err)
		}
	}
	return nil
}

// SchedulerConfig configures the Scheduler.
type SchedulerConfig struct {
	// Interval is how often it looks for due schedules (default 15 s).
	Interval time.Duration
	// Lease is how long a claimed schedule is its own (default 1 min).
	Lease time.Duration
}

// Scheduler starts the runs of the schedule triggers as they come due,
// claiming each due schedule with a lease (internal/worker), so that
// several servers fire each once.
type Scheduler struct {
	s      *Service
	cfg    SchedulerConfig
	owner  string
	logger *slog.Logger
}

// NewScheduler returns the scheduler of the service's schedules.
func NewScheduler(s *Service, cfg SchedulerConfig, logger *slog.Logger) *Scheduler {
	if cfg.Interval <= 0 {
		cfg.Interval = 15 * time.Second
	}
	if cfg.Lease <= 0 {
		cfg.Lease = time.Minute
	}
	if logger == nil {
		logger = slog.Default()
	}
	return &Scheduler{s: s, cfg: cfg, owner: wire.NewGUID(), logger: logger}
}

// Run fires the due schedules every Interval until ctx is done.
func (x *Scheduler) Run(ctx context.Context) {
	worker.Loop{Pass: func(ctx context.Context) { x.RunOnce(ctx) }, Interval: x.cfg.Interval}.Run(ctx)
}

// RunOnce fires every schedule due now and returns how many it fired.
func (x *Scheduler) RunOnce(ctx context.Context) int {
	ctx = httpapi.WithBaseURL(ctx, x.s.BaseURL)
	n, err := worker.Drain[scheduleItem](ctx, schedules{x}, func(it scheduleItem, err error) {
		x.logger.Error("fire an Actions schedule", "workflow_id", it.WorkflowID, "cron", it.Cron, "err", err)
	})
	if err != nil {
		x.logger.Error("claim an Actions schedule", "err", err)
	}
	return n
}

// scheduleItem is a claimed schedule.
type scheduleItem struct {
	WorkflowID int64
	Cron       string
	RepoID     int64
}

// schedules is the scheduler's view of actions_schedules.
type schedules struct{ x *Scheduler }

// Claim leases a due schedule whose lease (if any) has expired.
func (q schedules) Claim(ctx context.Context) (scheduleItem, bool, error) {
	var it scheduleItem
	claimed := false
	now := q.x.s.now()
	err := q.x.s.DB.Tx(ctx, func(tx *store.Tx) error {
		err := tx.QueryRowContext(ctx, `SELECT workflow_id, cron, repository_id FROM actions_schedules
			WHERE next_at <= $1 AND (lease_until IS NULL OR lease_until < $2) ORDER BY next_at LIMIT 1`+q.x.s.DB.SkipLocked(),
			now, store.Now()).Scan(&it.WorkflowID, &it.Cron, &it.RepoID)
		if err = store.Normalize(err); errors.Is(err, store.ErrNotFound) {
			return nil
		} else if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE actions_schedules SET lease_owner = $1, lease_until = $2
			WHERE workflow_id = $3 AND cron = $4`, q.x.owner, store.Now().Add(q.x.cfg.Lease), it.WorkflowID, it.Cron)
		claimed = err == nil
		return store.Normalize(err)
	})
	return it, claimed, err
}

// Run starts the schedule's run on the default branch's head (when the
// workflow is active), moves its next time on and ends the lease, in one
// transaction; a lease lost meanwhile leaves it to its new holder.
func (q schedules) Run(ctx context.Context, it scheduleItem) error {
	s := q.x.s
	repo, err := repos.ByID(ctx, s.DB, it.RepoID)
	if err != nil {
		return err
	}
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		next, ok := nextFire(it.Cron, s.now())
		if !ok {
			_, err := tx.ExecContext(ctx, `DELETE FROM actions_schedules WHERE workflow_id = $1 AND cron = $2`, it.WorkflowID, it.Cron)
			return store.Normalize(err)
		}
		n, err := store.Affected(tx.ExecContext(ctx, `UPDATE actions_schedules SET next_at = $1, lease_owner = '',
			lease_until = NULL WHERE workflow_id = $2 AND cron = $3 AND lease_owner = $4`, next, it.WorkflowID, it.Cron, q.x.owner))
		if err != nil || n == 0 {
			return err
		}
		wf, err := workflowByID(ctx, tx, it.RepoID, it.WorkflowID)
		if err != nil {
			return err
		}
		t, ok, err := s.onDefaultBranch(ctx, repo, nil, "schedule", map[string]any{"schedule": it.Cron})
		if err != nil || !ok {
			return err
		}
		t.Only, t.Action = wf.Path, it.Cron
		_, err = s.start(ctx, tx, t)
		return err
	})
}

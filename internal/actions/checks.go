package actions

import (
	"context"
	"errors"
	"sync"

	"forgeapi/internal/accounts"
	"forgeapi/internal/auth"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// AppSlug is the built-in app whose check suites and check runs are the
// workflow runs and their jobs, as the platform's "GitHub Actions" app.
const AppSlug = "github-actions"

// appName is the app's name.
const appName = "GitHub Actions"

// appGrant is what the app is shown to hold.
var appGrant = auth.Grant{"actions": auth.Write, "checks": auth.Write, "contents": auth.Write, "metadata": auth.Read,
	"pull_requests": auth.Write, "statuses": auth.Write}

// CheckEvents emits the check_run and check_suite events of the runs'
// checks (internal/checks implements it; the wiring sets it). Without one
// none are sent.
type CheckEvents interface {
	RunEvent(ctx context.Context, tx *store.Tx, repo *repos.Repository, checkRunID int64, action string, actor *accounts.Account) error
	SuiteCompleted(ctx context.Context, tx *store.Tx, repo *repos.Repository, suiteID int64, actor *accounts.Account) error
}

// appCache remembers the app's id once read.
type appCache struct {
	mu sync.Mutex
	id int64
}

// EnsureApp makes the github-actions app (and its bot, github-actions[bot],
// which also owns it: forgeapi has no "github" organization) unless it
// exists; Open calls it once, several servers may race to.
func (s *Service) EnsureApp(ctx context.Context) error {
	for attempt := 0; ; attempt++ {
		err := s.DB.Tx(ctx, func(tx *store.Tx) error {
			bot, err := accounts.ByLogin(ctx, tx, BotLogin)
			if errors.Is(err, store.ErrNotFound) {
				bot, err = accounts.Create(ctx, tx, accounts.NewAccount{Type: accounts.TypeBot, Login: BotLogin})
			}
			if err != nil {
				return err
			}
			now := tx.Now()
			_, err = tx.ExecContext(ctx, `INSERT INTO apps (slug, name, description, owner_id, bot_id, client_id,
				client_secret_hash, permissions, events, public, created_at, updated_at)
				VALUES ($1, $2, $3, $4, $4, $5, $6, $7, '["check_run","check_suite","workflow_run","workflow_job"]', TRUE, $8, $8)
				ON CONFLICT DO NOTHING`,
				AppSlug, appName, "Automate your workflow from idea to production", bot.ID,
				"Iv23"+auth.RandomString(16), auth.HashToken(auth.RandomString(40)), appGrant.JSON(), now)
			return store.Normalize(err)
		})
		if err == nil || attempt > 0 || !errors.Is(err, store.ErrConflict) {
			return err
		}
	}
}

// appID returns the github-actions app's id.
func (s *Service) appID(ctx context.Context, q store.Q) (int64, error) {
	s.app.mu.Lock()
	defer s.app.mu.Unlock()
	if s.app.id != 0 {
		return s.app.id, nil
	}
	err := q.QueryRowContext(ctx, `SELECT id FROM apps WHERE slug = $1`, AppSlug).Scan(&s.app.id)
	return s.app.id, store.Normalize(err)
}

// syncSuite writes the run's state to its check suite in tx, making the
// suite (one per run) when the run has none yet.
func (s *Service) syncSuite(ctx context.Context, tx *store.Tx, r *Run) error {
	now := tx.Now()
	if r.CheckSuiteID != nil {
		_, err := tx.ExecContext(ctx, `UPDATE check_suites SET status = $1, conclusion = $2, updated_at = $3 WHERE id = $4`,
			r.Status, r.Conclusion, now, *r.CheckSuiteID)
		return store.Normalize(err)
	}
	app, err := s.appID(ctx, tx)
	if err != nil {
		return err
	}
	var id int64
	err = tx.QueryRowContext(ctx, `INSERT INTO check_suites (repository_id, app_id, head_sha, head_branch, head_commit,
		status, conclusion, workflow_run, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, TRUE, $8, $8) RETURNING id`,
		r.RepoID, app, r.HeadSHA, r.HeadBranch, string(headCommitOrNull(r)), r.Status, r.Conclusion, now).Scan(&id)
	if err != nil {
		return store.Normalize(err)
	}
	r.CheckSuiteID = &id
	_, err = tx.ExecContext(ctx, `UPDATE actions_runs SET check_suite_id = $1 WHERE id = $2`, id, r.ID)
	return store.Normalize(err)
}

func headCommitOrNull(r *Run) []byte {
	if len(r.HeadCommit) == 0 {
		return []byte("null")
	}
	return r.HeadCommit
}

// syncCheckRun writes the job's state to its check run in tx, making the
// check run (named as the job, its details the job's page, the newest of
// its name in the suite) when the job has none yet; check_run created,
// and completed when the job completes, go out through CheckEvents.
func (s *Service) syncCheckRun(ctx context.Context, tx *store.Tx, repo *repos.Repository, r *Run, j *Job, detailsURL string,
	actor *accounts.Account) error {
	created, err := s.writeCheckRun(ctx, tx, r, j, detailsURL)
	if err != nil || s.CheckEvents == nil || j.CheckRunID == nil {
		return err
	}
	if created {
		if err := s.CheckEvents.RunEvent(ctx, tx, repo, *j.CheckRunID, "created", actor); err != nil {
			return err
		}
	}
	if j.Status == StatusCompleted {
		return s.CheckEvents.RunEvent(ctx, tx, repo, *j.CheckRunID, "completed", actor)
	}
	return nil
}

// writeCheckRun is syncCheckRun's write; created is true when it made
// the check run.
func (s *Service) writeCheckRun(ctx context.Context, tx *store.Tx, r *Run, j *Job, detailsURL string) (created bool, err error) {
	now := tx.Now()
	status := j.Status
	if status == StatusWaiting {
		status = StatusQueued
	}
	if j.CheckRunID != nil {
		_, err := tx.ExecContext(ctx, `UPDATE check_runs SET status = $1, conclusion = $2, started_at = $3,
			completed_at = $4, updated_at = $5 WHERE id = $6`, status, j.Conclusion, j.StartedAt, j.CompletedAt, now,
			*j.CheckRunID)
		return false, store.Normalize(err)
	}
	if r.CheckSuiteID == nil {
		if err := s.syncSuite(ctx, tx, r); err != nil {
			return false, err
		}
	}
	app, err := s.appID(ctx, tx)
	if err != nil {
		return false, err
	}
	started := j.StartedAt
	if started == nil {
		started = &now
	}
	var id int64
	err = tx.QueryRowContext(ctx, `INSERT INTO check_runs (check_suite_id, repository_id, app_id, head_sha, name,
		external_id, details_url, status, conclusion, started_at, completed_at, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12) RETURNING id`,
		*r.CheckSuiteID, r.RepoID, app, r.HeadSHA, j.Name, itoa(j.ID), detailsURL, status, j.Conclusion, started,
		j.CompletedAt, now).Scan(&id)
	if err != nil {
		return false, store.Normalize(err)
	}
	j.CheckRunID = &id
	if _, err := tx.ExecContext(ctx, `UPDATE check_runs SET latest = FALSE
		WHERE check_suite_id = $1 AND latest = TRUE AND name = $2 AND id <> $3`, *r.CheckSuiteID, j.Name, id); err != nil {
		return false, store.Normalize(err)
	}
	_, err = tx.ExecContext(ctx, `UPDATE actions_jobs SET check_run_id = $1 WHERE id = $2`, id, j.ID)
	return true, store.Normalize(err)
}

// suiteID is the run's check suite id (its own id until it has one).
func suiteID(r *Run) int64 {
	if r.CheckSuiteID != nil {
		return *r.CheckSuiteID
	}
	return r.ID
}

// checkRunID is the job's check run id (its own id until it has one).
func checkRunID(j *Job) int64 {
	if j.CheckRunID != nil {
		return *j.CheckRunID
	}
	return j.ID
}

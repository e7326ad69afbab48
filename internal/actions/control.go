package actions

import (
	"context"
	"errors"
	"strings"

	"forgeapi/internal/accounts"
	"forgeapi/internal/actions/engine"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// ErrCompleted is a cancel of a run that is completed.
var ErrCompleted = errors.New("Cannot cancel a workflow run that is completed.")

// Cancel cancels the run's current attempt: its queued jobs complete as
// cancelled, its jobs in progress are stopped (at once on this server,
// at their next lease renewal on another) and complete as cancelled.
func (s *Service) Cancel(ctx context.Context, runID, repoID int64, actor *accounts.Account) error {
	var stop []int64
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		r, err := runByID(ctx, tx, repoID, runID)
		if err != nil {
			return err
		}
		if r.Status == StatusCompleted {
			return ErrCompleted
		}
		stop, err = s.cancelTx(ctx, tx, r)
		return err
	})
	if err == nil {
		s.running.cancel(stop)
	}
	return err
}

// cancelTx cancels the run's current attempt in tx: its queued jobs
// complete as cancelled and its jobs in progress are marked to stop (at
// their next lease renewal; stop lists them, to stop at once those this
// process runs once tx committed).
func (s *Service) cancelTx(ctx context.Context, tx *store.Tx, r *Run) (stop []int64, err error) {
	jobs, err := jobsOf(ctx, tx, r.ID, r.RunAttempt)
	if err != nil {
		return nil, err
	}
	for _, j := range jobs {
		switch j.Status {
		case StatusQueued, StatusWaiting:
			if err := s.completeJob(ctx, tx, j, Cancelled, ""); err != nil {
				return nil, err
			}
		case StatusInProgress:
			if _, err := tx.ExecContext(ctx, `UPDATE actions_jobs SET cancel_requested = TRUE WHERE id = $1`, j.ID); err != nil {
				return nil, store.Normalize(err)
			}
			stop = append(stop, j.ID)
		}
	}
	return stop, nil
}

// Rerun starts the run's next attempt: every job again, only the failed
// (and cancelled) jobs and the jobs that need them (failedOnly), or one
// job and the jobs that need it (jobKey not ""). The jobs not rerun are
// copied into the attempt as they completed. errNotCompleted: the run is
// under way.
func (s *Service) Rerun(ctx context.Context, runID, repoID int64, failedOnly bool, jobName string, actor *accounts.Account) (*Run, error) {
	var run *Run
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		r, err := runByID(ctx, tx, repoID, runID)
		if err != nil {
			return err
		}
		if r.Status != StatusCompleted {
			return errNotCompleted
		}
		repo, err := repos.ByID(ctx, tx, r.RepoID)
		if err != nil {
			return err
		}
		parsed, err := engine.ParseWith([]byte(r.WorkflowFile), s.resolver(ctx, tx, repo, r.HeadSHA, r.WorkflowPath))
		if err != nil {
			return &InvalidWorkflowError{Message: err.Error()}
		}
		old, err := jobsOf(ctx, tx, r.ID, r.RunAttempt)
		if err != nil {
			return err
		}
		keep := kept(parsed.Jobs, old, failedOnly, jobName)
		if err := startAttempt(ctx, tx, r, actor.ID, tx.Now()); err != nil {
			return err
		}
		if err := s.emitRun(ctx, tx, "requested", r, actor); err != nil {
			return err
		}
		if err := s.queueJobs(ctx, tx, r, parsed.Jobs, keep, actor); err != nil {
			return err
		}
		run = r
		return s.rollUp(ctx, tx, r)
	})
	return run, err
}

// kept are the jobs of the last attempt a rerun copies, by name: none for
// a full rerun; else the successful jobs that are not the one rerun and
// need no job that is rerun.
func kept(jobs []engine.Job, old []*Job, failedOnly bool, jobName string) map[string]*Job {
	keep := map[string]*Job{}
	if !failedOnly && jobName == "" {
		return keep
	}
	byName := map[string]*Job{}
	for _, j := range old {
		byName[j.Name] = j
	}
	rerun := map[string]bool{} // job keys rerun
	for _, ej := range jobs {
		o := byName[ej.Name]
		again := o == nil || (jobName != "" && ej.Name == jobName) ||
			(failedOnly && (o.Conclusion == nil || *o.Conclusion != Success))
		for _, n := range ej.Needs {
			again = again || rerun[n]
		}
		if again {
			rerun[ej.Key] = true
			if caller, _, ok := strings.Cut(ej.Key, engine.KeySep); ok { // a called job: its caller's dependents too
				rerun[caller] = true
			}
		}
	}
	for _, ej := range jobs {
		if o := byName[ej.Name]; o != nil && !rerun[ej.Key] {
			keep[ej.Name] = o
		}
	}
	return keep
}

// DeleteRun deletes a completed run with its jobs and logs.
func (s *Service) DeleteRun(ctx context.Context, runID, repoID int64) error {
	var jobs []*Job
	var artifacts []int64
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		r, err := runByID(ctx, tx, repoID, runID)
		if err != nil {
			return err
		}
		if r.Status != StatusCompleted {
			return errNotCompleted
		}
		if jobs, err = allJobsOf(ctx, tx, r.ID); err != nil {
			return err
		}
		if artifacts, err = runArtifactIDs(ctx, tx, r.ID); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM actions_runs WHERE id = $1`, r.ID)
		return store.Normalize(err)
	})
	if err != nil {
		return err
	}
	if err := s.deleteArtifactBlobs(ctx, artifacts); err != nil {
		return err
	}
	return s.deleteLogs(ctx, jobs)
}

// DeleteLogs deletes the logs of every job of a completed run.
func (s *Service) DeleteLogs(ctx context.Context, runID, repoID int64) error {
	r, err := runByID(ctx, s.DB, repoID, runID)
	if err != nil {
		return err
	}
	if r.Status != StatusCompleted {
		return errNotCompleted
	}
	jobs, err := allJobsOf(ctx, s.DB, r.ID)
	if err != nil {
		return err
	}
	if err := s.deleteLogs(ctx, jobs); err != nil {
		return err
	}
	_, err = s.DB.ExecContext(ctx, `UPDATE actions_jobs SET has_log = FALSE WHERE run_id = $1`, r.ID)
	return store.Normalize(err)
}

func (s *Service) deleteLogs(ctx context.Context, jobs []*Job) error {
	if s.Blobs == nil {
		return nil
	}
	for _, j := range jobs {
		if err := s.Blobs.Delete(ctx, jobLogKey(j.ID)); err != nil {
			return err
		}
	}
	return nil
}

// SetWorkflowState enables or disables a workflow.
func (s *Service) SetWorkflowState(ctx context.Context, w *Workflow, state string) error {
	return setWorkflowState(ctx, s.DB, w.ID, state, store.Now())
}

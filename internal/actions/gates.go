package actions

import (
	"context"

	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// GateDecision is what an environment's protection says of a job that
// names it, when a runner would claim the job.
type GateDecision int

// The decisions of Gates.Hold.
const (
	// GateOpen lets the job be claimed.
	GateOpen GateDecision = iota
	// GateWait holds the job: it stays (or becomes) waiting, and so does
	// its run, until a later claim asks again.
	GateWait
	// GateRejected fails the job with the decision's message.
	GateRejected
)

// Gates holds the jobs whose environment is protected (wait timers,
// required reviewers, custom deployment protection rules) before they
// are claimed. The deployments area implements it; without one such
// jobs are claimed as any other.
type Gates interface {
	// Hold is asked in the claim's transaction each time a runner would
	// claim a job that names an environment; what it writes (the gate,
	// its events) is part of that transaction. message is the refusal of
	// GateRejected.
	Hold(ctx context.Context, tx *store.Tx, r *Run, j *Job) (d GateDecision, message string, err error)
}

// held asks the service's Gates about a job that names an environment,
// in the claim's transaction: true when the job is not to be claimed now,
// because it waits (it and its run are then waiting, and workflow_job
// waiting is sent the first time) or because it was rejected (it is then
// completed as failed).
func (s *Service) held(ctx context.Context, tx *store.Tx, r *Run, j *Job) (bool, error) {
	if j.Environment == "" || s.Gates == nil {
		return false, nil
	}
	d, message, err := s.Gates.Hold(ctx, tx, r, j)
	switch {
	case err != nil:
		return true, err
	case d == GateOpen:
		return false, nil
	case d == GateRejected:
		return true, s.completeJob(ctx, tx, j, Failure, message)
	}
	return true, s.markWaiting(ctx, tx, r, j)
}

// markWaiting makes a queued job waiting, with its workflow_job waiting
// event, and its run waiting.
func (s *Service) markWaiting(ctx context.Context, tx *store.Tx, r *Run, j *Job) error {
	if j.Status != StatusQueued {
		return nil
	}
	n, err := store.Affected(tx.ExecContext(ctx, `UPDATE actions_jobs SET status = 'waiting' WHERE id = $1 AND status = 'queued'`, j.ID))
	if err != nil || n == 0 {
		return err
	}
	j.Status = StatusWaiting
	if err := s.emitJob(ctx, tx, "waiting", r, j, nil); err != nil {
		return err
	}
	if r.Status == StatusQueued || r.Status == StatusInProgress {
		r.Status = StatusWaiting
		return setRunState(ctx, tx, r, tx.Now())
	}
	return nil
}

// RunByID returns the repository's run of the id (store.ErrNotFound when
// it has none), as it is in q.
func (s *Service) RunByID(ctx context.Context, q store.Q, repoID, id int64) (*Run, error) {
	return runByID(ctx, q, repoID, id)
}

// JobByID returns the repository's job of the id (store.ErrNotFound when
// it has none), as it is in q.
func (s *Service) JobByID(ctx context.Context, q store.Q, repoID, id int64) (*Job, error) {
	return jobByID(ctx, q, repoID, id)
}

// FailWaiting completes a waiting job as failed with the message (in its
// log), as a rejected deployment does, in tx; a job that is no longer
// waiting is left as it is.
func (s *Service) FailWaiting(ctx context.Context, tx *store.Tx, j *Job, message string) error {
	current, err := jobByID(ctx, tx, j.RepoID, j.ID)
	if err != nil || current.Status != StatusWaiting {
		return err
	}
	return s.completeJob(ctx, tx, current, Failure, message)
}

// WakeAfter wakes the runner once tx commits, so that a job a review
// released is claimed at once.
func (s *Service) WakeAfter(tx *store.Tx) {
	tx.AfterCommit(s.wake)
}

// RunEventJSON renders the run as the workflow_run object of events
// (ctx carries the base URL).
func (s *Service) RunEventJSON(ctx context.Context, q store.Q, repo *repos.Repository, r *Run) (any, error) {
	return newView(ctx, q, repo).run(r)
}

// JobHTMLURL is the address of the job's page.
func (s *Service) JobHTMLURL(ctx context.Context, q store.Q, repo *repos.Repository, r *Run, j *Job) string {
	return *newView(ctx, q, repo).job(r, j).HTMLURL
}

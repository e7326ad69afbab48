package actions

import (
	"context"

	"forgeapi/internal/accounts"
	"forgeapi/internal/events"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// emitRun emits workflow_run with the action (requested, in_progress,
// completed) in tx, after writing the run's state to its check suite;
// actor nil is the run's triggering actor.
func (s *Service) emitRun(ctx context.Context, tx *store.Tx, action string, r *Run, actor *accounts.Account) error {
	if err := s.syncSuite(ctx, tx, r); err != nil {
		return err
	}
	if s.Events == nil {
		return nil
	}
	repo, v, actor, err := s.eventView(ctx, tx, r, actor)
	if err != nil {
		return err
	}
	run, err := v.run(r)
	if err != nil {
		return err
	}
	wf, err := workflowByID(ctx, tx, r.RepoID, r.WorkflowID)
	if err != nil {
		return err
	}
	return s.Events.Emit(ctx, tx, &events.Event{HookEvent: "workflow_run", Actor: actor, Repo: repo, Public: !repo.Private,
		HookPayload: map[string]any{"action": action, "workflow_run": run, "workflow": v.workflow(wf)}})
}

// emitJob emits workflow_job with the action (queued, in_progress,
// completed, waiting) in tx, after writing the job's state to its check
// run.
func (s *Service) emitJob(ctx context.Context, tx *store.Tx, action string, r *Run, j *Job, actor *accounts.Account) error {
	repo, v, actor, err := s.eventView(ctx, tx, r, actor)
	if err != nil {
		return err
	}
	if err := s.syncCheckRun(ctx, tx, r, j, *v.job(r, j).HTMLURL); err != nil {
		return err
	}
	if s.Events == nil {
		return nil
	}
	return s.Events.Emit(ctx, tx, &events.Event{HookEvent: "workflow_job", Actor: actor, Repo: repo, Public: !repo.Private,
		HookPayload: map[string]any{"action": action, "workflow_job": v.job(r, j)}})
}

// eventView loads the run's repository and the event's actor.
func (s *Service) eventView(ctx context.Context, tx *store.Tx, r *Run, actor *accounts.Account) (*repos.Repository, *view, *accounts.Account, error) {
	repo, err := repos.ByID(ctx, tx, r.RepoID)
	if err != nil {
		return nil, nil, nil, err
	}
	if actor == nil {
		if actor, err = actorOf(ctx, tx, r.TriggeringActorID); err != nil {
			return nil, nil, nil, err
		}
	}
	return repo, newView(ctx, tx, repo), actor, nil
}

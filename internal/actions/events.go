package actions

import (
	"context"
	"encoding/json"

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
	repo, v, actor, err := s.eventView(ctx, tx, r, actor)
	if err != nil {
		return err
	}
	if action == "completed" && s.CheckEvents != nil && r.CheckSuiteID != nil {
		if err := s.CheckEvents.SuiteCompleted(ctx, tx, repo, *r.CheckSuiteID, actor); err != nil {
			return err
		}
	}
	run, err := v.run(r)
	if err != nil {
		return err
	}
	wf, err := workflowByID(ctx, tx, r.RepoID, r.WorkflowID)
	if err != nil {
		return err
	}
	payload := map[string]any{"action": action, "workflow_run": run, "workflow": v.workflow(wf)}
	if s.Events != nil {
		if err := s.Events.Emit(ctx, tx, &events.Event{HookEvent: "workflow_run", Actor: actor, Repo: repo,
			Public: !repo.Private, HookPayload: payload}); err != nil {
			return err
		}
	}
	return s.onWorkflowRun(ctx, tx, repo, actor, action, r, payload)
}

// maxWorkflowRunChain is how many workflows workflow_run chains: a run
// that a workflow_run of a run that workflow_run started triggers no
// further, as on the platform (no more than three levels).
const maxWorkflowRunChain = 3

// onWorkflowRun starts the runs of the default branch's workflows whose
// workflow_run trigger takes the run's action, unless the run ends a
// chain of maxWorkflowRunChain.
func (s *Service) onWorkflowRun(ctx context.Context, tx *store.Tx, repo *repos.Repository, actor *accounts.Account,
	action string, r *Run, payload map[string]any) error {
	depth, err := chainDepth(ctx, tx, r)
	if err != nil || depth+1 >= maxWorkflowRunChain {
		return err
	}
	t, ok, err := s.onDefaultBranch(ctx, repo, actor, "workflow_run", payload)
	if err != nil || !ok {
		return err
	}
	t.Action, t.Source = action, r.Name
	if r.HeadBranch != nil {
		t.SourceBranch = *r.HeadBranch
	}
	_, err = s.start(ctx, tx, t)
	return err
}

// chainDepth is how many workflow_run triggers led to the run (0 for a
// run of another event).
func chainDepth(ctx context.Context, q store.Q, r *Run) (int, error) {
	depth := 0
	for r.Event == "workflow_run" && depth < maxWorkflowRunChain {
		var p struct {
			Run struct {
				ID int64 `json:"id"`
			} `json:"workflow_run"`
		}
		if json.Unmarshal(r.EventPayload, &p) != nil || p.Run.ID == 0 {
			break
		}
		depth++
		parent, err := runByID(ctx, q, r.RepoID, p.Run.ID)
		if err == store.ErrNotFound {
			break
		}
		if err != nil {
			return 0, err
		}
		r = parent
	}
	return depth, nil
}

// emitJob emits workflow_job with the action (queued, in_progress,
// completed, waiting) in tx, after writing the job's state to its check
// run.
func (s *Service) emitJob(ctx context.Context, tx *store.Tx, action string, r *Run, j *Job, actor *accounts.Account) error {
	repo, v, actor, err := s.eventView(ctx, tx, r, actor)
	if err != nil {
		return err
	}
	if err := s.syncCheckRun(ctx, tx, repo, r, j, *v.job(r, j).HTMLURL, actor); err != nil {
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

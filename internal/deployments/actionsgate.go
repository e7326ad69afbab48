package deployments

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"forgeapi/internal/accounts"
	"forgeapi/internal/actions"
	"forgeapi/internal/apierr"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// The Handler is the actions.Environments of Actions jobs that name an
// environment, as the platform's runs deploy: before such a job runs,
// the environment's branch policy is asked about the run's branch (a
// refusal fails the job with the platform's message), then a deployment
// of the run's commit to the environment is made (the environment with
// it when the repository has none of that name) with an in_progress
// status; the job's end adds success, or failure for any other
// conclusion. Required reviewers, wait timers and custom protection
// rules hold the job before it is claimed (gates.go); the deployment made
// then is the one Admit starts.
var _ actions.Environments = (*Handler)(nil)

// Admit makes the job's deployment, or returns the branch policy's
// refusal.
func (h *Handler) Admit(ctx context.Context, r *actions.Run, j *actions.Job) (int64, string, error) {
	repo, err := repos.ByID(ctx, h.Service.DB, r.RepoID)
	if err != nil {
		return 0, "", err
	}
	actor, err := runActor(ctx, h.Service.DB, r)
	if err != nil {
		return 0, "", err
	}
	target := runTarget(r)
	if err := h.checkBranchPolicy(ctx, h.Service.DB, repo, j.Environment, target); err != nil {
		if e, ok := errors.AsType[*apierr.Error](err); ok && e.Status == http.StatusUnprocessableEntity {
			return 0, e.Message, nil
		}
		return 0, "", err
	}
	if d, err := h.gateDeployment(ctx, j.ID); err != nil || d != nil { // made when its gate held it (gates.go)
		if err != nil {
			return 0, "", err
		}
		return d.ID, "", h.jobStatus(ctx, repo, d, actor, r, StateInProgress)
	}
	base := httpapi.BaseURL(ctx)
	d, err := h.Service.Create(ctx, repo, actor, Deployment{SHA: r.HeadSHA, Ref: target.ref, Task: "deploy",
		Environment: j.Environment, OriginalEnvironment: j.Environment, Payload: json.RawMessage(`{}`)},
		func(d *Deployment) map[string]any {
			return map[string]any{"action": "created", "deployment": toDeploymentJSON(base, repo, d), "workflow": nil, "workflow_run": nil}
		})
	if err != nil {
		return 0, "", err
	}
	return d.ID, "", h.jobStatus(ctx, repo, d, actor, r, StateInProgress)
}

// Finished adds the status of the job's conclusion to its deployment.
func (h *Handler) Finished(ctx context.Context, r *actions.Run, j *actions.Job, conclusion string) error {
	repo, err := repos.ByID(ctx, h.Service.DB, r.RepoID)
	if err != nil {
		return err
	}
	d, err := h.Service.Get(ctx, r.RepoID, *j.DeploymentID)
	if err != nil {
		return err
	}
	actor, err := runActor(ctx, h.Service.DB, r)
	if err != nil {
		return err
	}
	state := StateFailure
	if conclusion == actions.Success {
		state = StateSuccess
	}
	return h.jobStatus(ctx, repo, d, actor, r, state)
}

// jobStatus adds a status of the state to the job's deployment, its log
// the run's page.
func (h *Handler) jobStatus(ctx context.Context, repo *repos.Repository, d *Deployment, actor *accounts.Account, r *actions.Run, state string) error {
	base := httpapi.BaseURL(ctx)
	runPage := fmt.Sprintf("%s/%s/actions/runs/%d", httpapi.WebBase(base), repo.FullName(), r.ID)
	_, err := h.Service.CreateStatus(ctx, repo, d, actor, Status{State: state, Environment: d.Environment, LogURL: runPage, TargetURL: runPage},
		true, func(st *Status, d *Deployment) map[string]any {
			return map[string]any{"action": "created", "deployment_status": toStatusJSON(base, repo, st),
				"deployment": toDeploymentJSON(base, repo, d)}
		})
	return err
}

// runActor is the account whose run deploys: its triggering actor, else
// its actor.
func runActor(ctx context.Context, q store.Q, r *actions.Run) (*accounts.Account, error) {
	for _, id := range []*int64{r.TriggeringActorID, r.ActorID} {
		if id != nil {
			return accounts.ByID(ctx, q, *id)
		}
	}
	return nil, store.ErrNotFound
}

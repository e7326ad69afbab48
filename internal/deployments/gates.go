package deployments

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/actions"
	"forgeapi/internal/apierr"
	"forgeapi/internal/events"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// The Handler is the actions.Gates of the jobs of protected
// environments, as the platform holds them: the first time a runner
// would claim a job whose environment has a wait timer, required
// reviewers or custom deployment protection rules (and whose branch
// policy lets the run's branch deploy), the job's deployment is made and
// a gate with it; deployment_review requested goes to the hooks when the
// environment has reviewers, and deployment_protection_rule requested to
// each enabled app. The job and its run are waiting until the gate opens:
// the timer ran out, one required reviewer approved
// (POST .../pending_deployments) and every enabled app approved (its
// callback, POST .../deployment_protection_rule). A rejection fails the
// job at once (rejectedMessage in its log) and adds a failure
// status to its deployment.
var _ actions.Gates = (*Handler)(nil)

// The states of a gate, and of its review and rules.
const (
	gateWaiting  = "waiting"
	gatePending  = "pending"
	gateApproved = "approved"
	gateRejected = "rejected"
)

// gate is an environment's hold on one job.
type gate struct {
	ID, RepoID, RunID, JobID, EnvironmentID int64
	DeploymentID                            *int64
	WaitTimer                               int
	WaitUntil                               *time.Time
	Review                                  string // "" (no reviewers), pending, approved, rejected
	State                                   string // waiting, approved, rejected
	CreatedAt, UpdatedAt                    time.Time
}

const gateColumns = `id, repository_id, run_id, job_id, environment_id, deployment_id, wait_timer, wait_until, review, state,
	created_at, updated_at`

func scanGate(row store.Scanner) (*gate, error) {
	var g gate
	var until sql.NullTime
	err := row.Scan(&g.ID, &g.RepoID, &g.RunID, &g.JobID, &g.EnvironmentID, &g.DeploymentID, &g.WaitTimer, &until,
		&g.Review, &g.State, &g.CreatedAt, &g.UpdatedAt)
	if until.Valid {
		t := until.Time
		g.WaitUntil = &t
	}
	return &g, store.Normalize(err)
}

// gateOfJob returns the job's gate (store.ErrNotFound when it has none).
func gateOfJob(ctx context.Context, q store.Q, jobID int64) (*gate, error) {
	return scanGate(q.QueryRowContext(ctx, `SELECT `+gateColumns+` FROM environment_gates WHERE job_id = $1`, jobID))
}

// waitingGates returns the run's gates still waiting whose job waits, by
// id.
func waitingGates(ctx context.Context, q store.Q, runID int64) ([]*gate, error) {
	rows, err := q.QueryContext(ctx, `SELECT g.id, g.repository_id, g.run_id, g.job_id, g.environment_id, g.deployment_id,
		g.wait_timer, g.wait_until, g.review, g.state, g.created_at, g.updated_at FROM environment_gates g
		JOIN actions_jobs j ON j.id = g.job_id
		WHERE g.run_id = $1 AND g.state = 'waiting' AND j.status = 'waiting' ORDER BY g.id`, runID)
	return store.ScanAll(rows, err, scanGate)
}

// rejectedMessage is what a job whose deployment was rejected fails with
// (forgeapi's words: no recorded platform log was found).
func rejectedMessage(env string) string {
	return fmt.Sprintf("The deployment to %s was rejected, so this job did not run.", env)
}

// Hold opens the job's gate the first time, then says whether it opened.
func (h *Handler) Hold(ctx context.Context, tx *store.Tx, r *actions.Run, j *actions.Job) (actions.GateDecision, string, error) {
	// A write to the job's row first: on PostgreSQL it locks the row, so
	// that two runners' claims of the job make one gate (SQLite's
	// transactions are serial already).
	if _, err := tx.ExecContext(ctx, `UPDATE actions_jobs SET status = status WHERE id = $1`, j.ID); err != nil {
		return 0, "", store.Normalize(err)
	}
	g, err := gateOfJob(ctx, tx, j.ID)
	if isNotFound(err) {
		if g, err = h.newGate(ctx, tx, r, j); err != nil || g == nil {
			return actions.GateOpen, "", err
		}
	} else if err != nil {
		return 0, "", err
	}
	switch g.State {
	case gateRejected:
		return actions.GateRejected, rejectedMessage(j.Environment), nil
	case gateApproved:
		return actions.GateOpen, "", nil
	}
	open, err := h.gateOpens(ctx, tx, g)
	if err != nil || !open {
		return actions.GateWait, "", err
	}
	_, err = tx.ExecContext(ctx, `UPDATE environment_gates SET state = 'approved', updated_at = $1 WHERE id = $2`, tx.Now(), g.ID)
	return actions.GateOpen, "", store.Normalize(err)
}

// gateOpens reports whether every protection of a waiting gate is met.
func (h *Handler) gateOpens(ctx context.Context, tx *store.Tx, g *gate) (bool, error) {
	if g.WaitUntil != nil && h.now().Before(*g.WaitUntil) || g.Review == gatePending {
		return false, nil
	}
	var pending int
	err := tx.QueryRowContext(ctx, `SELECT count(*) FROM environment_gate_rules WHERE gate_id = $1 AND state <> 'approved'`,
		g.ID).Scan(&pending)
	return pending == 0, store.Normalize(err)
}

// now is the handler's clock.
func (h *Handler) now() time.Time {
	if h.Now != nil {
		return h.Now().UTC()
	}
	return time.Now().UTC()
}

// newGate makes the job's gate, its deployment and their events, when
// its environment is protected; nil when it is not (or when its branch
// policy refuses the run's branch: Admit fails the job then).
func (h *Handler) newGate(ctx context.Context, tx *store.Tx, r *actions.Run, j *actions.Job) (*gate, error) {
	env, err := h.Service.environment(ctx, tx, r.RepoID, j.Environment)
	if isNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	rules, err := protectionRules(ctx, tx, env.ID)
	if err != nil || env.WaitTimer == 0 && len(env.Reviewers) == 0 && len(rules) == 0 {
		return nil, err
	}
	repo, err := repos.ByID(ctx, tx, r.RepoID)
	if err != nil {
		return nil, err
	}
	if err := h.checkBranchPolicy(ctx, tx, repo, env.Name, runTarget(r)); err != nil {
		if e, ok := errors.AsType[*apierr.Error](err); ok && e.Status == http.StatusUnprocessableEntity {
			return nil, nil
		}
		return nil, err
	}
	actor, err := runActor(ctx, tx, r)
	if err != nil {
		return nil, err
	}
	base := httpapi.BaseURL(ctx)
	d, err := h.Service.create(ctx, tx, repo, actor, Deployment{SHA: r.HeadSHA, Ref: runTarget(r).ref, Task: "deploy",
		Environment: j.Environment, OriginalEnvironment: j.Environment, Payload: json.RawMessage(`{}`)},
		func(d *Deployment) map[string]any {
			return map[string]any{"action": "created", "deployment": toDeploymentJSON(base, repo, d), "workflow": nil, "workflow_run": nil}
		})
	if err != nil {
		return nil, err
	}
	g := &gate{RepoID: r.RepoID, RunID: r.ID, JobID: j.ID, EnvironmentID: env.ID, DeploymentID: &d.ID, WaitTimer: env.WaitTimer,
		State: gateWaiting, CreatedAt: tx.Now(), UpdatedAt: tx.Now()}
	if env.WaitTimer > 0 {
		until := h.now().Add(time.Duration(env.WaitTimer) * time.Minute)
		g.WaitUntil = &until
	}
	if len(env.Reviewers) > 0 {
		g.Review = gatePending
	}
	if err := insertGate(ctx, tx, g, rules); err != nil {
		return nil, err
	}
	return g, h.gateRequested(ctx, tx, gateEvent{repo: repo, run: r, job: j, env: env, gate: g, deployment: d, actor: actor}, rules)
}

// runTarget is what a run deploys: its branch, else its commit.
func runTarget(r *actions.Run) refTarget {
	t := refTarget{sha: r.HeadSHA, ref: r.HeadSHA}
	if r.HeadBranch != nil {
		t.ref, t.branch = *r.HeadBranch, true
	}
	return t
}

// insertGate stores the gate, setting its id, with a pending rule of
// each enabled app.
func insertGate(ctx context.Context, tx *store.Tx, g *gate, rules []*ProtectionRule) error {
	err := tx.QueryRowContext(ctx, `INSERT INTO environment_gates (repository_id, run_id, job_id, environment_id, deployment_id,
		wait_timer, wait_until, review, state, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10) RETURNING id`,
		g.RepoID, g.RunID, g.JobID, g.EnvironmentID, g.DeploymentID, g.WaitTimer, g.WaitUntil, g.Review, g.State, g.CreatedAt).Scan(&g.ID)
	if err != nil {
		return store.Normalize(err)
	}
	for _, rule := range rules {
		if _, err := tx.ExecContext(ctx, `INSERT INTO environment_gate_rules (gate_id, app_id) VALUES ($1, $2)`, g.ID, rule.AppID); err != nil {
			return store.Normalize(err)
		}
	}
	return nil
}

// gateEvent is what the events of a gate render.
type gateEvent struct {
	repo       *repos.Repository
	run        *actions.Run
	job        *actions.Job
	env        *Environment
	gate       *gate
	deployment *Deployment
	actor      *accounts.Account
}

// gateRequested emits deployment_review requested (when the environment
// has reviewers) and deployment_protection_rule requested to each
// enabled app installed on the repository, in tx.
func (h *Handler) gateRequested(ctx context.Context, tx *store.Tx, e gateEvent, rules []*ProtectionRule) error {
	base := httpapi.BaseURL(ctx)
	waiting := *e.run
	waiting.Status = actions.StatusWaiting
	run, err := h.Actions.RunEventJSON(ctx, tx, e.repo, &waiting)
	if err != nil {
		return err
	}
	if e.gate.Review == gatePending {
		reviewers, err := h.hookReviewers(ctx, tx, base, e.repo, e.env)
		if err != nil {
			return err
		}
		job := *e.job
		job.Status = actions.StatusWaiting
		payload := map[string]any{"action": "requested", "workflow_run": run, "since": wire.T(e.gate.CreatedAt),
			"workflow_job_run": h.jobRunJSON(ctx, tx, e.repo, e.run, &job, e.env.Name), "environment": e.env.Name,
			"reviewers": orNone(reviewers), "requestor": accounts.ToSimpleUser(base, e.actor)}
		if err := h.Service.Events.Emit(ctx, tx, &events.Event{HookEvent: "deployment_review", HookPayload: payload,
			Actor: e.actor, Repo: e.repo, Public: !e.repo.Private}); err != nil {
			return err
		}
	}
	for _, rule := range rules {
		if err := h.ruleRequested(ctx, tx, e, rule.AppID); err != nil {
			return err
		}
	}
	return nil
}

// ruleRequested sends deployment_protection_rule requested to the app's
// installation on the repository's owner alone (nothing when it is not
// installed there, suspended, or does not select the repository).
func (h *Handler) ruleRequested(ctx context.Context, tx *store.Tx, e gateEvent, appID int64) error {
	if h.RuleApps == nil {
		return nil
	}
	inst, ok, err := h.RuleApps.Installation(ctx, tx, appID, e.repo)
	if err != nil || !ok {
		return err
	}
	base := httpapi.BaseURL(ctx)
	payload := map[string]any{"action": "requested", "environment": e.env.Name, "event": e.run.Event, "sha": e.run.HeadSHA,
		"ref": runTarget(e.run).ref, "deployment": toDeploymentJSON(base, e.repo, e.deployment), "pull_requests": []any{},
		"deployment_callback_url": fmt.Sprintf("%s/repos/%s/actions/runs/%d/deployment_protection_rule", base, e.repo.FullName(), e.run.ID),
		"installation":            map[string]any{"id": inst, "node_id": wire.NodeID("IN", inst)}}
	return h.Service.Events.Emit(ctx, tx, &events.Event{HookEvent: "deployment_protection_rule", HookPayload: payload,
		Actor: e.actor, Repo: e.repo, Public: !e.repo.Private, ToApp: &events.AppInstallation{AppID: appID, InstallationID: inst}})
}

// jobRunJSON is the workflow_job_run of deployment_review events.
func (h *Handler) jobRunJSON(ctx context.Context, q store.Q, repo *repos.Repository, r *actions.Run, j *actions.Job, env string) map[string]any {
	updated := j.CreatedAt
	if j.StartedAt != nil {
		updated = *j.StartedAt
	}
	if j.CompletedAt != nil {
		updated = *j.CompletedAt
	}
	return map[string]any{"id": j.ID, "name": j.Name, "status": j.Status, "conclusion": j.Conclusion,
		"html_url": h.Actions.JobHTMLURL(ctx, q, repo, r, j), "created_at": wire.T(j.CreatedAt), "updated_at": wire.T(updated),
		"environment": env}
}

// hookReviewers are the environment's reviewers as deployment_review
// events list them: the users alone, since the description's payload
// models each reviewer as a user (REST's pending deployments show the
// teams too). It reads through q, the caller's transaction when it has
// one.
func (h *Handler) hookReviewers(ctx context.Context, q store.Q, base string, repo *repos.Repository, env *Environment) ([]reviewerJSON, error) {
	all, err := h.reviewersJSON(ctx, q, base, repo, env)
	return slices.DeleteFunc(all, func(r reviewerJSON) bool { return r.Type != "User" }), err
}

func orNone(list []reviewerJSON) []reviewerJSON {
	if list == nil {
		return []reviewerJSON{}
	}
	return list
}

// gateDeployment returns the deployment made with the job's gate, nil
// when the job has no gate.
func (h *Handler) gateDeployment(ctx context.Context, jobID int64) (*Deployment, error) {
	g, err := gateOfJob(ctx, h.Service.DB, jobID)
	if isNotFound(err) || err == nil && g.DeploymentID == nil {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	d, err := h.Service.ByID(ctx, *g.DeploymentID)
	if isNotFound(err) {
		return nil, nil
	}
	return d, err
}

// closeGate rejects the gate in tx: it fails its job (when it still
// waits) and adds a failure status by actor to its deployment.
func (h *Handler) closeGate(ctx context.Context, tx *store.Tx, repo *repos.Repository, run *actions.Run, g *gate, env string, actor *accounts.Account) error {
	if _, err := tx.ExecContext(ctx, `UPDATE environment_gates SET state = 'rejected', updated_at = $1 WHERE id = $2`, tx.Now(), g.ID); err != nil {
		return store.Normalize(err)
	}
	j, err := h.Actions.JobByID(ctx, tx, g.RepoID, g.JobID)
	if err != nil {
		return err
	}
	if err := h.Actions.FailWaiting(ctx, tx, j, rejectedMessage(env)); err != nil {
		return err
	}
	if g.DeploymentID == nil {
		return nil
	}
	d, err := h.Service.byID(ctx, tx, *g.DeploymentID)
	if isNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	base := httpapi.BaseURL(ctx)
	runPage := fmt.Sprintf("%s/%s/actions/runs/%d", httpapi.WebBase(base), repo.FullName(), run.ID)
	_, err = h.Service.createStatus(ctx, tx, repo, d, actor, Status{State: StateFailure, Environment: d.Environment, LogURL: runPage,
		TargetURL: runPage}, true, func(st *Status, d *Deployment) map[string]any {
		return map[string]any{"action": "created", "deployment_status": toStatusJSON(base, repo, st), "deployment": toDeploymentJSON(base, repo, d)}
	})
	return err
}

package deployments

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"forgeapi/internal/accounts"
	"forgeapi/internal/actions"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/events"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// run reads the route's {run_id} of its repository: a 404 when it has
// no such run.
func (h *Handler) run(r *http.Request) (*actions.Run, error) {
	id, err := httpapi.PathInt64(r, "run_id")
	if err != nil {
		return nil, err
	}
	run, err := h.Actions.RunByID(r.Context(), h.Service.DB, repos.From(r.Context()).ID, id)
	if isNotFound(err) {
		return nil, apierr.NotFound()
	}
	return run, err
}

// pendingEnvironment is an environment a run's jobs wait for, with the
// gates that hold them (oldest first).
type pendingEnvironment struct {
	env   *Environment
	gates []*gate
}

// pending groups the run's waiting gates by environment, in the order
// they were made.
func (h *Handler) pending(ctx context.Context, q store.Q, runID int64) ([]*pendingEnvironment, error) {
	gates, err := waitingGates(ctx, q, runID)
	if err != nil {
		return nil, err
	}
	var out []*pendingEnvironment
	for _, g := range gates {
		i := slices.IndexFunc(out, func(p *pendingEnvironment) bool { return p.env.ID == g.EnvironmentID })
		if i >= 0 {
			out[i].gates = append(out[i].gates, g)
			continue
		}
		env, err := h.Service.environmentByID(ctx, q, g.EnvironmentID)
		if isNotFound(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, &pendingEnvironment{env: env, gates: []*gate{g}})
	}
	return out, nil
}

// reviewing reports whether the environment's gates wait for a review.
func (p *pendingEnvironment) reviewing() bool {
	return slices.ContainsFunc(p.gates, func(g *gate) bool { return g.Review == gatePending })
}

// canReview says why the user may not review the run's deployments to
// the environment ("" when they may): the user must be one of its
// required reviewers (or a member of a reviewing team), and not the
// run's triggering actor when the environment prevents self-review. It
// reads through q: the caller's transaction when it has one, else the
// service's DB.
func (h *Handler) canReview(ctx context.Context, q store.Q, env *Environment, run *actions.Run, userID int64) (string, error) {
	if userID == 0 {
		return "You must be signed in to review deployments.", nil
	}
	reviewer := false
	for _, rv := range env.Reviewers {
		switch {
		case rv.Kind == "User" && rv.ID == userID:
			reviewer = true
		case rv.Kind == "Team" && h.Teams != nil:
			member, err := h.Teams.TeamMember(ctx, q, rv.ID, userID)
			if err != nil {
				return "", err
			}
			reviewer = reviewer || member
		}
	}
	if !reviewer {
		return "You are not a required reviewer of the environment " + env.Name + ".", nil
	}
	if env.PreventSelfReview && run.TriggeringActorID != nil && *run.TriggeringActorID == userID {
		return "You cannot approve or reject deployments to " + env.Name + " of a workflow run you triggered: the environment prevents self-review.", nil
	}
	return "", nil
}

// pendingEnvironmentJSON is the platform's environment of a pending
// deployment and of a review.
func pendingEnvironmentJSON(base string, repo *repos.Repository, e *Environment, withTimes bool) map[string]any {
	j := toEnvironmentJSON(base, repo, e, nil)
	out := map[string]any{"id": j.ID, "node_id": j.NodeID, "name": j.Name, "url": j.URL, "html_url": j.HTMLURL}
	if withTimes {
		out["created_at"], out["updated_at"] = j.CreatedAt, j.UpdatedAt
	}
	return out
}

// listPending answers GET .../actions/runs/{run_id}/pending_deployments:
// each environment the run's jobs wait for, its wait timer, its
// reviewers and whether the caller may review it.
func (h *Handler) listPending(w http.ResponseWriter, r *http.Request) error {
	run, err := h.run(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	repo, base := repos.From(ctx), httpapi.BaseURL(ctx)
	list, err := h.pending(ctx, h.Service.DB, run.ID)
	if err != nil {
		return err
	}
	out := []map[string]any{}
	for _, p := range list {
		reviewers, err := h.reviewersJSON(ctx, h.Service.DB, base, repo, p.env)
		if err != nil {
			return err
		}
		why, err := h.canReview(ctx, h.Service.DB, p.env, run, auth.PrincipalFrom(ctx).UserID())
		if err != nil {
			return err
		}
		first := p.gates[0]
		var started any
		if first.WaitTimer > 0 {
			started = wire.T(first.CreatedAt)
		}
		out = append(out, map[string]any{"environment": pendingEnvironmentJSON(base, repo, p.env, false),
			"wait_timer": first.WaitTimer, "wait_timer_started_at": started,
			"current_user_can_approve": why == "" && p.reviewing(), "reviewers": orNone(reviewers)})
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// reviewRequest is the body of POST .../pending_deployments.
type reviewRequest struct {
	EnvironmentIDs *[]int64 `json:"environment_ids"`
	State          *string  `json:"state"`
	Comment        *string  `json:"comment"`
}

// validate checks the request's fields as the platform's description
// states them.
func (b *reviewRequest) validate() error {
	var f apierr.Fields
	if b.EnvironmentIDs == nil {
		f.Add("Deployment", "environment_ids", apierr.CodeMissingField)
	}
	switch {
	case b.State == nil:
		f.Add("Deployment", "state", apierr.CodeMissingField)
	case *b.State != gateApproved && *b.State != gateRejected:
		f.Add("Deployment", "state", apierr.CodeInvalid)
	}
	if b.Comment == nil {
		f.Add("Deployment", "comment", apierr.CodeMissingField)
	}
	return f.Err()
}

// reviewPending answers POST .../actions/runs/{run_id}/pending_deployments:
// a required reviewer approves or rejects the run's deployments to the
// environments named, which must all wait for a review the caller may
// make (422 otherwise, nothing changed). The review is kept in the run's
// approvals; approved gates open once their other protections are met,
// rejected ones fail their jobs. The answer is the deployments reviewed.
func (h *Handler) reviewPending(w http.ResponseWriter, r *http.Request) error {
	run, err := h.run(r)
	if err != nil {
		return err
	}
	var body reviewRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	if err := body.validate(); err != nil {
		return err
	}
	ctx := r.Context()
	repo, base := repos.From(ctx), httpapi.BaseURL(ctx)
	user, err := accounts.ByID(ctx, h.Service.DB, auth.PrincipalFrom(ctx).UserID())
	if err != nil {
		return err
	}
	var reviewed []*Deployment
	err = h.Service.DB.Tx(ctx, func(tx *store.Tx) error {
		chosen, err := h.reviewable(ctx, tx, run, user.ID, *body.EnvironmentIDs)
		if err != nil {
			return err
		}
		if reviewed, err = h.applyReview(ctx, tx, repo, run, user, chosen, *body.State, *body.Comment); err != nil {
			return err
		}
		return h.emitReview(ctx, tx, repo, run, user, chosen, *body.State, *body.Comment)
	})
	if err != nil {
		return err
	}
	out := make([]deploymentJSON, 0, len(reviewed))
	for _, d := range reviewed {
		out = append(out, toDeploymentJSON(base, repo, d))
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// reviewable returns the run's pending environments of the ids, each of
// which must wait for a review that the user may make.
func (h *Handler) reviewable(ctx context.Context, tx *store.Tx, run *actions.Run, userID int64, ids []int64) ([]*pendingEnvironment, error) {
	if len(ids) == 0 {
		return nil, apierr.Invalid("Deployment", "environment_ids", apierr.CodeMissingField)
	}
	all, err := h.pending(ctx, tx, run.ID)
	if err != nil {
		return nil, err
	}
	var chosen []*pendingEnvironment
	for _, id := range ids {
		i := slices.IndexFunc(all, func(p *pendingEnvironment) bool { return p.env.ID == id })
		if i < 0 || !all[i].reviewing() {
			return nil, apierr.Unprocessable("No pending deployment of this workflow run waits for a review in the environment %d.", id)
		}
		why, err := h.canReview(ctx, tx, all[i].env, run, userID)
		if err != nil {
			return nil, err
		}
		if why != "" {
			return nil, apierr.Unprocessable("%s", why)
		}
		if !slices.Contains(chosen, all[i]) {
			chosen = append(chosen, all[i])
		}
	}
	return chosen, nil
}

// applyReview stores the review and applies it to the chosen gates, and
// returns their deployments.
func (h *Handler) applyReview(ctx context.Context, tx *store.Tx, repo *repos.Repository, run *actions.Run, user *accounts.Account,
	chosen []*pendingEnvironment, state, comment string) ([]*Deployment, error) {
	ids := make([]int64, 0, len(chosen))
	for _, p := range chosen {
		ids = append(ids, p.env.ID)
	}
	encoded, _ := json.Marshal(ids)
	if _, err := tx.ExecContext(ctx, `INSERT INTO environment_approvals (run_id, user_id, state, comment, environment_ids, created_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, run.ID, user.ID, state, comment, string(encoded), tx.Now()); err != nil {
		return nil, store.Normalize(err)
	}
	var out []*Deployment
	for _, p := range chosen {
		for _, g := range p.gates {
			if g.Review != gatePending {
				continue
			}
			if _, err := tx.ExecContext(ctx, `UPDATE environment_gates SET review = $1, updated_at = $2 WHERE id = $3`,
				state, tx.Now(), g.ID); err != nil {
				return nil, store.Normalize(err)
			}
			if state == gateRejected {
				if err := h.closeGate(ctx, tx, repo, run, g, p.env.Name, user); err != nil {
					return nil, err
				}
			}
			if g.DeploymentID != nil {
				if d, err := h.Service.byID(ctx, tx, *g.DeploymentID); err == nil {
					out = append(out, d)
				} else if !isNotFound(err) {
					return nil, err
				}
			}
		}
	}
	if state == gateApproved {
		h.Actions.WakeAfter(tx)
	}
	return out, nil
}

// emitReview emits deployment_review approved or rejected, in tx, with
// the jobs of the environments reviewed.
func (h *Handler) emitReview(ctx context.Context, tx *store.Tx, repo *repos.Repository, run *actions.Run, user *accounts.Account,
	chosen []*pendingEnvironment, state, comment string) error {
	base := httpapi.BaseURL(ctx)
	current, err := h.Actions.RunByID(ctx, tx, run.RepoID, run.ID)
	if err != nil {
		return err
	}
	runJSON, err := h.Actions.RunEventJSON(ctx, tx, repo, current)
	if err != nil {
		return err
	}
	var jobs []map[string]any
	var reviewers []reviewerJSON
	for _, p := range chosen {
		list, err := h.hookReviewers(ctx, tx, base, repo, p.env)
		if err != nil {
			return err
		}
		reviewers = append(reviewers, list...)
		for _, g := range p.gates {
			j, err := h.Actions.JobByID(ctx, tx, g.RepoID, g.JobID)
			if err != nil {
				return err
			}
			jobs = append(jobs, h.jobRunJSON(ctx, tx, repo, current, j, p.env.Name))
		}
	}
	payload := map[string]any{"action": state, "workflow_run": runJSON, "since": wire.T(chosen[0].gates[0].CreatedAt),
		"approver": accounts.ToSimpleUser(base, user), "comment": comment, "reviewers": orNone(reviewers),
		"workflow_job_runs": jobs}
	if len(jobs) > 0 {
		payload["workflow_job_run"] = jobs[0]
	}
	return h.Service.Events.Emit(ctx, tx, &events.Event{HookEvent: "deployment_review", HookPayload: payload,
		Actor: user, Repo: repo, Public: !repo.Private})
}

// listApprovals answers GET .../actions/runs/{run_id}/approvals: the
// run's reviews, oldest first.
func (h *Handler) listApprovals(w http.ResponseWriter, r *http.Request) error {
	run, err := h.run(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	repo, base := repos.From(ctx), httpapi.BaseURL(ctx)
	rows, err := h.Service.DB.QueryContext(ctx, `SELECT user_id, state, comment, environment_ids FROM environment_approvals
		WHERE run_id = $1 ORDER BY id`, run.ID)
	type approval struct {
		userID              *int64
		state, comment, ids string
	}
	list, err := store.ScanAll(rows, err, func(row store.Scanner) (*approval, error) {
		var a approval
		return &a, row.Scan(&a.userID, &a.state, &a.comment, &a.ids)
	})
	if err != nil {
		return err
	}
	people := accountCache{}
	out := []map[string]any{}
	for _, a := range list {
		user, err := people.get(ctx, h.Service.DB, a.userID)
		if err != nil {
			return err
		}
		if user == nil {
			continue // the reviewer's account is gone
		}
		var ids []int64
		_ = json.Unmarshal([]byte(a.ids), &ids)
		envs := []map[string]any{}
		for _, id := range ids {
			e, err := h.Service.EnvironmentByID(ctx, id)
			if isNotFound(err) {
				continue
			}
			if err != nil {
				return err
			}
			envs = append(envs, pendingEnvironmentJSON(base, repo, e, true))
		}
		out = append(out, map[string]any{"environments": envs, "state": a.state, "comment": a.comment,
			"user": accounts.ToSimpleUser(base, user)})
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// ruleReviewRequest is the body of POST .../deployment_protection_rule.
type ruleReviewRequest struct {
	EnvironmentName *string `json:"environment_name"`
	State           *string `json:"state"`
	Comment         *string `json:"comment"`
}

// reviewRule answers POST .../actions/runs/{run_id}/deployment_protection_rule:
// an app enabled as a custom protection rule of the environment answers
// for the run's jobs that wait for it there (the deployment_callback_url
// of its deployment_protection_rule event). approved opens the gates
// once their other protections are met, rejected fails their jobs; a
// comment without a state changes nothing else. 204; 422 when none of the
// run's jobs waits for this app in that environment.
func (h *Handler) reviewRule(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	p := auth.PrincipalFrom(ctx)
	if p.Token == nil || p.Token.Kind != auth.KindInstallation || p.Token.InstallationID == 0 || h.RuleApps == nil {
		return apierr.Forbidden("You must authenticate via a GitHub App.")
	}
	run, err := h.run(r)
	if err != nil {
		return err
	}
	var body ruleReviewRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	if err := body.validate(); err != nil {
		return err
	}
	app, ok, err := h.RuleApps.AppOfInstallation(ctx, p.Token.InstallationID)
	if err != nil {
		return err
	}
	if !ok {
		return apierr.Forbidden("You must authenticate via a GitHub App.")
	}
	actor, err := accounts.ByID(ctx, h.Service.DB, p.UserID())
	if err != nil {
		return err
	}
	err = h.Service.DB.Tx(ctx, func(tx *store.Tx) error {
		return h.applyRuleReview(ctx, tx, repos.From(ctx), run, app, actor, body)
	})
	if err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

// validate checks the request as the description's two shapes state it:
// environment_name always, and a state (approved or rejected) or a
// comment.
func (b *ruleReviewRequest) validate() error {
	var f apierr.Fields
	if b.EnvironmentName == nil {
		f.Add("DeploymentProtectionRule", "environment_name", apierr.CodeMissingField)
	}
	switch {
	case b.State == nil && b.Comment == nil:
		f.Add("DeploymentProtectionRule", "state", apierr.CodeMissingField)
	case b.State != nil && *b.State != gateApproved && *b.State != gateRejected:
		f.Add("DeploymentProtectionRule", "state", apierr.CodeInvalid)
	}
	return f.Err()
}

// applyRuleReview records the app's answer on the run's gates of the
// environment that wait for it.
func (h *Handler) applyRuleReview(ctx context.Context, tx *store.Tx, repo *repos.Repository, run *actions.Run, app RuleApp,
	actor *accounts.Account, body ruleReviewRequest) error {
	all, err := h.pending(ctx, tx, run.ID)
	if err != nil {
		return err
	}
	state, comment := "", ""
	if body.State != nil {
		state = *body.State
	}
	if body.Comment != nil {
		comment = *body.Comment
	}
	answered := 0
	for _, p := range all {
		if !strings.EqualFold(p.env.Name, *body.EnvironmentName) {
			continue
		}
		for _, g := range p.gates {
			n, err := store.Affected(tx.ExecContext(ctx, `UPDATE environment_gate_rules SET state = CASE WHEN $1 = '' THEN state ELSE $1 END,
				comment = $2 WHERE gate_id = $3 AND app_id = $4 AND state = 'pending'`, state, comment, g.ID, app.ID))
			if err != nil {
				return err
			}
			answered += int(n)
			if n > 0 && state == gateRejected {
				if err := h.closeGate(ctx, tx, repo, run, g, p.env.Name, actor); err != nil {
					return err
				}
			}
		}
	}
	if answered == 0 {
		return apierr.Unprocessable("No deployment of this workflow run to %s waits for the app %s.", *body.EnvironmentName, app.Slug)
	}
	if state == gateApproved {
		h.Actions.WakeAfter(tx)
	}
	return nil
}

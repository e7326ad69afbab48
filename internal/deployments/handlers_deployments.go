package deployments

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"forgeapi/docs"
	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/statuses"
	"forgeapi/internal/store"
)

// createRequest is the body of POST .../deployments.
type createRequest struct {
	Ref                   *string         `json:"ref"`
	Task                  *string         `json:"task"`
	AutoMerge             *bool           `json:"auto_merge"`
	RequiredContexts      *[]string       `json:"required_contexts"`
	Payload               json.RawMessage `json:"payload"`
	Environment           *string         `json:"environment"`
	Description           *string         `json:"description"`
	TransientEnvironment  *bool           `json:"transient_environment"`
	ProductionEnvironment *bool           `json:"production_environment"`
}

// validate checks the body and returns the deployment it asks for (its
// SHA not resolved yet).
func (b createRequest) validate() (Deployment, error) {
	var f apierr.Fields
	d := Deployment{Task: "deploy", Environment: "production", Payload: json.RawMessage(`{}`)}
	if b.Ref == nil || *b.Ref == "" {
		f.Add("Deployment", "ref", apierr.CodeMissingField)
	} else {
		d.Ref = *b.Ref
	}
	if b.Task != nil && *b.Task != "" {
		d.Task = *b.Task
		f.MaxLength("Deployment", "task", d.Task, MaxTaskLength)
	}
	if b.Environment != nil && *b.Environment != "" {
		d.Environment = *b.Environment
		f.MaxLength("Deployment", "environment", d.Environment, MaxEnvironmentNameLength)
	}
	d.OriginalEnvironment = d.Environment
	description := "" // the platform's default
	if b.Description != nil {
		description = *b.Description
		f.MaxLength("Deployment", "description", description, MaxDeploymentDescription)
	}
	d.Description = &description
	payload, ok := normalizePayload(b.Payload)
	if !ok {
		f.Add("Deployment", "payload", apierr.CodeInvalid)
	}
	d.Payload = payload
	d.Transient = b.TransientEnvironment != nil && *b.TransientEnvironment
	d.Production = d.Environment == "production"
	if b.ProductionEnvironment != nil {
		d.Production = *b.ProductionEnvironment
	}
	return d, f.Err()
}

// normalizePayload turns a request's payload into what a deployment
// keeps: an object as it is; a string holding a JSON object, that object;
// another string, the string; none, null or "", an empty object. Another
// kind of value, or more than MaxPayloadBytes, is not ok.
func normalizePayload(raw json.RawMessage) (json.RawMessage, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > MaxPayloadBytes {
		return nil, false
	}
	if len(raw) == 0 || string(raw) == "null" || string(raw) == `""` {
		return json.RawMessage(`{}`), true
	}
	var out bytes.Buffer
	switch raw[0] {
	case '{':
		if err := json.Compact(&out, raw); err != nil {
			return nil, false
		}
		return out.Bytes(), true
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, false
		}
		if trimmed := bytes.TrimSpace([]byte(s)); len(trimmed) > 0 && trimmed[0] == '{' && json.Compact(&out, trimmed) == nil {
			return out.Bytes(), true
		}
		return raw, true
	}
	return nil, false
}

// create answers POST /repos/{owner}/{repo}/deployments: 201 with the
// deployment; 202 with a message when auto_merge merged the default
// branch into the ref instead; 409 when required statuses are not
// success or the merge conflicts; 422 for a ref that names nothing or
// that the environment's branch policy refuses.
func (h *Handler) create(w http.ResponseWriter, r *http.Request) error {
	var body createRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	d, err := body.validate()
	if err != nil {
		return err
	}
	ctx, repo := r.Context(), repos.From(r.Context())
	actor, err := accounts.ByID(ctx, h.Service.DB, auth.PrincipalFrom(ctx).UserID())
	if err != nil {
		return err
	}
	target, err := h.resolveRef(repo, d.Ref)
	if err != nil {
		return err
	}
	d.SHA = target.sha
	if err := h.checkBranchPolicy(ctx, h.Service.DB, repo, d.Environment, target); err != nil {
		return err
	}
	if body.AutoMerge == nil || *body.AutoMerge {
		merged, err := h.autoMerge(ctx, repo, actor, target)
		if err != nil {
			return err
		}
		if merged != "" {
			httpapi.WriteJSON(w, http.StatusAccepted, map[string]string{"message": merged})
			return nil
		}
	}
	if failing, err := h.failingContexts(r, repo.ID, d.SHA, body.RequiredContexts); err != nil || failing != nil {
		if err != nil {
			return err
		}
		writeChecksFailed(w, r, d.Ref, failing)
		return nil
	}
	base := httpapi.BaseURL(ctx)
	created, err := h.Service.Create(ctx, repo, actor, d, func(d *Deployment) map[string]any {
		return map[string]any{"action": "created", "deployment": toDeploymentJSON(base, repo, d), "workflow": nil, "workflow_run": nil}
	})
	if err != nil {
		return err
	}
	j := toDeploymentJSON(base, repo, created)
	httpapi.WriteCreated(w, j.URL, j)
	return nil
}

// refTarget is what a deployment's ref names: the commit, and the branch
// or tag when it names one.
type refTarget struct {
	ref    string
	sha    string
	branch bool
	tag    bool
}

// resolveRef resolves a deployment's ref, a branch, a tag or a SHA, in
// the repository: 422 "No ref found for" when it names no commit.
func (h *Handler) resolveRef(repo *repos.Repository, ref string) (refTarget, error) {
	g, err := gitread.Open(h.Repos.GitDir(repo.ID))
	if err != nil {
		return refTarget{}, err
	}
	defer g.Close()
	t := refTarget{ref: ref}
	t.sha, err = g.Resolve(ref)
	if errors.Is(err, gitread.ErrRevisionNotFound) {
		return t, apierr.Unprocessable("No ref found for: %s", ref)
	}
	if err != nil {
		return t, err
	}
	if _, ok, err := g.RefTarget("refs/heads/" + ref); err != nil {
		return t, err
	} else if ok {
		t.branch = true
		return t, nil
	}
	_, t.tag, err = g.RefTarget("refs/tags/" + ref)
	return t, err
}

// checkBranchPolicy refuses a ref that the environment's deployment
// branch policy does not let deploy there, in the platform's words. It
// reads through q: the caller's transaction when it has one, else the
// service's DB.
func (h *Handler) checkBranchPolicy(ctx context.Context, q store.Q, repo *repos.Repository, envName string, t refTarget) error {
	env, err := h.Service.environment(ctx, q, repo.ID, envName)
	if isNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	allowed, err := h.allowedBy(ctx, q, repo, env, t)
	if err != nil || allowed {
		return err
	}
	kind := "Branch"
	if t.tag {
		kind = "Tag"
	}
	return apierr.Unprocessable("%s \"%s\" is not allowed to deploy to %s due to environment protection rules.", kind, t.ref, env.Name)
}

// allowedBy reports whether the environment's branch policy lets the
// target deploy: any ref without a policy; protected branches; branches
// or tags matching a custom pattern of their type. A bare SHA matches no
// policy. It reads the patterns through q, the caller's transaction when
// it has one.
func (h *Handler) allowedBy(ctx context.Context, q store.Q, repo *repos.Repository, env *Environment, t refTarget) (bool, error) {
	switch env.BranchPolicy {
	case PolicyAll:
		return true, nil
	case PolicyProtected:
		if !t.branch || h.Protected == nil {
			return false, nil
		}
		return h.Protected(ctx, q, repo, t.ref)
	}
	if !t.branch && !t.tag {
		return false, nil
	}
	policies, err := h.Service.branchPolicies(ctx, q, env.ID)
	if err != nil {
		return false, err
	}
	for _, p := range policies {
		if (p.Kind == "tag") == t.tag && MatchPattern(p.Name, t.ref) {
			return true, nil
		}
	}
	return false, nil
}

// contextState is a required context and its state in the 409 answer.
type contextState struct {
	Context string `json:"context"`
	State   string `json:"state"`
}

// failingContexts checks the commit's statuses against required: every
// context of the commit when required is nil, none when it is empty.
// It returns nil when they are all success, else every checked context
// with its state ("missing" for a required context never posted).
func (h *Handler) failingContexts(r *http.Request, repoID int64, sha string, required *[]string) ([]contextState, error) {
	if required != nil && len(*required) == 0 {
		return nil, nil
	}
	latest, err := h.Statuses.Latest(r.Context(), repoID, sha)
	if err != nil {
		return nil, err
	}
	state := map[string]string{}
	var names []string
	for _, st := range latest {
		state[st.Context] = st.State
		names = append(names, st.Context)
	}
	if required != nil {
		names = *required
	}
	var out []contextState
	failed := false
	for _, name := range names {
		s, ok := state[name]
		if !ok {
			s = "missing"
		}
		failed = failed || s != statuses.StateSuccess
		out = append(out, contextState{Context: name, State: s})
	}
	if !failed {
		return nil, nil
	}
	return out, nil
}

// writeChecksFailed answers the platform's 409 for required contexts that
// are not success, with each checked context's state.
func writeChecksFailed(w http.ResponseWriter, r *http.Request, ref string, contexts []contextState) {
	base := httpapi.BaseURL(r.Context())
	httpapi.WriteJSON(w, http.StatusConflict, map[string]any{
		"message": "Conflict: Commit status checks failed for " + ref + ".",
		"errors": []map[string]any{{"contexts": contexts, "resource": "Deployment", "field": "required_contexts",
			"code": apierr.CodeInvalid}},
		"documentation_url": httpapi.DocumentationURL(base, docs.Deployments),
		"status":            "409",
	})
}

// deployment reads the {deployment_id} of the route's repository.
func (h *Handler) deployment(r *http.Request) (*Deployment, error) {
	id, err := httpapi.PathInt64(r, "deployment_id")
	if err != nil {
		return nil, err
	}
	d, err := h.Service.Get(r.Context(), repos.From(r.Context()).ID, id)
	if isNotFound(err) {
		return nil, apierr.NotFound()
	}
	return d, err
}

// get answers GET .../deployments/{deployment_id}.
func (h *Handler) get(w http.ResponseWriter, r *http.Request) error {
	d, err := h.deployment(r)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toDeploymentJSON(httpapi.BaseURL(r.Context()), repos.From(r.Context()), d))
	return nil
}

// list answers GET .../deployments: newest first, filtered by sha, ref,
// task and environment, paged.
func (h *Handler) list(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := Filter{SHA: q.Get("sha"), Ref: q.Get("ref"), Task: q.Get("task"), Environment: q.Get("environment")}
	repo := repos.From(r.Context())
	list, more, err := h.Service.List(r.Context(), repo.ID, f, page.Limit(), page.Offset())
	if err != nil {
		return err
	}
	base := httpapi.BaseURL(r.Context())
	out := make([]deploymentJSON, 0, len(list))
	for _, d := range list {
		out = append(out, toDeploymentJSON(base, repo, d))
	}
	httpapi.SetLinksMore(w, r, page, more)
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// delete answers DELETE .../deployments/{deployment_id}: 204, or 422 for
// an active deployment that is not its environment's only one.
func (h *Handler) delete(w http.ResponseWriter, r *http.Request) error {
	d, err := h.deployment(r)
	if err != nil {
		return err
	}
	if err := h.Service.Delete(r.Context(), d); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

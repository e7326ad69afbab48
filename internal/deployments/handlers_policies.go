package deployments

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"forgeapi/internal/apierr"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// policyRequest is the body of POST and PUT .../deployment-branch-policies.
type policyRequest struct {
	Name *string `json:"name"`
	Type *string `json:"type"`
}

// validName checks the pattern's name.
func (b policyRequest) validName() (string, error) {
	var f apierr.Fields
	switch {
	case b.Name == nil || strings.TrimSpace(*b.Name) == "":
		f.Add("DeploymentBranchPolicy", "name", apierr.CodeMissingField)
	case f.MaxLength("DeploymentBranchPolicy", "name", *b.Name, MaxBranchPolicyNameLength):
		if _, err := patternRegexp(*b.Name); err != nil {
			f.Add("DeploymentBranchPolicy", "name", apierr.CodeInvalid)
		}
	}
	if err := f.Err(); err != nil {
		return "", err
	}
	return *b.Name, nil
}

// customEnvironment reads the route's environment, which must have a
// custom branch policy: a 404 otherwise, as the platform answers.
func (h *Handler) customEnvironment(r *http.Request) (*Environment, error) {
	e, err := h.environment(r)
	if err != nil {
		return nil, err
	}
	if e.BranchPolicy != PolicyCustom {
		return nil, apierr.NotFound()
	}
	return e, nil
}

// policy reads the route's {branch_policy_id} of its environment.
func (h *Handler) policy(r *http.Request) (*BranchPolicy, error) {
	e, err := h.environment(r)
	if err != nil {
		return nil, err
	}
	id, err := httpapi.PathInt64(r, "branch_policy_id")
	if err != nil {
		return nil, err
	}
	p, err := h.Service.BranchPolicyByID(r.Context(), e.ID, id)
	if isNotFound(err) {
		return nil, apierr.NotFound()
	}
	return p, err
}

// policyURL is the API URL of the pattern.
func policyURL(r *http.Request, p *BranchPolicy) string {
	repo := repos.From(r.Context())
	return httpapi.BaseURL(r.Context()) + "/repos/" + repo.FullName() + "/environments/" +
		url.PathEscape(r.PathValue("environment_name")) + "/deployment-branch-policies/" + wire.Itoa(p.ID)
}

// listPolicies answers GET .../deployment-branch-policies: total_count
// and a page of the environment's patterns.
func (h *Handler) listPolicies(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	e, err := h.environment(r)
	if err != nil {
		return err
	}
	all, err := h.Service.BranchPolicies(r.Context(), e.ID)
	if err != nil {
		return err
	}
	out := []policyJSON{}
	for _, p := range httpapi.Slice(page, all) {
		out = append(out, toPolicyJSON(p))
	}
	httpapi.SetLinks(w, r, page, len(all))
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"total_count": len(all), "branch_policies": out})
	return nil
}

// createPolicy answers POST .../deployment-branch-policies: 200 with the
// new pattern, 303 to the existing one when the environment has it, 404
// when the environment has no custom branch policy.
func (h *Handler) createPolicy(w http.ResponseWriter, r *http.Request) error {
	e, err := h.customEnvironment(r)
	if err != nil {
		return err
	}
	var body policyRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	name, err := body.validName()
	if err != nil {
		return err
	}
	kind := "branch"
	if body.Type != nil {
		if *body.Type != "branch" && *body.Type != "tag" {
			return apierr.Invalid("DeploymentBranchPolicy", "type", apierr.CodeInvalid)
		}
		kind = *body.Type
	}
	existing, err := h.Service.BranchPolicies(r.Context(), e.ID)
	if err != nil {
		return err
	}
	if len(existing) >= MaxBranchPoliciesPerTarget {
		return apierr.Custom("DeploymentBranchPolicy", "name", "An environment may have at most %d branch and tag policies.", MaxBranchPoliciesPerTarget)
	}
	p, created, err := h.Service.CreateBranchPolicy(r.Context(), BranchPolicy{EnvironmentID: e.ID, Name: name, Kind: kind})
	if err != nil {
		return err
	}
	if !created {
		w.Header().Set("Location", policyURL(r, p))
		w.WriteHeader(http.StatusSeeOther)
		return nil
	}
	httpapi.WriteJSON(w, http.StatusOK, toPolicyJSON(p))
	return nil
}

// getPolicy answers GET .../deployment-branch-policies/{id}.
func (h *Handler) getPolicy(w http.ResponseWriter, r *http.Request) error {
	p, err := h.policy(r)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toPolicyJSON(p))
	return nil
}

// updatePolicy answers PUT .../deployment-branch-policies/{id}: the
// pattern renamed.
func (h *Handler) updatePolicy(w http.ResponseWriter, r *http.Request) error {
	p, err := h.policy(r)
	if err != nil {
		return err
	}
	var body policyRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	name, err := body.validName()
	if err != nil {
		return err
	}
	err = h.Service.RenameBranchPolicy(r.Context(), p, name)
	if errors.Is(err, store.ErrConflict) {
		return apierr.Invalid("DeploymentBranchPolicy", "name", apierr.CodeAlreadyExists)
	}
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toPolicyJSON(p))
	return nil
}

// deletePolicy answers DELETE .../deployment-branch-policies/{id}: 204.
func (h *Handler) deletePolicy(w http.ResponseWriter, r *http.Request) error {
	p, err := h.policy(r)
	if err != nil {
		return err
	}
	if err := h.Service.DeleteBranchPolicy(r.Context(), p); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

package deployments

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// environmentRequest is the body of PUT .../environments/{name}. The PUT
// sets the whole protection, as go-github and Terraform send it: an absent
// or null field is its default (no wait timer, no reviewers, any branch).
type environmentRequest struct {
	WaitTimer         *int               `json:"wait_timer"`
	PreventSelfReview *bool              `json:"prevent_self_review"`
	Reviewers         *[]reviewerRequest `json:"reviewers"`
	BranchPolicy      json.RawMessage    `json:"deployment_branch_policy"`
}

// reviewerRequest is one required reviewer of the request.
type reviewerRequest struct {
	Type string `json:"type"`
	ID   int64  `json:"id"`
}

// change validates the body into an EnvironmentChange; reviewers must
// exist (users, or teams of the repository's organization).
func (h *Handler) change(r *http.Request, repo *repos.Repository, b environmentRequest) (EnvironmentChange, error) {
	var f apierr.Fields
	zero, no, all, none := 0, false, PolicyAll, []Reviewer{}
	c := EnvironmentChange{WaitTimer: &zero, PreventSelfReview: &no, BranchPolicy: &all, Reviewers: &none}
	if b.WaitTimer != nil {
		c.WaitTimer = b.WaitTimer
	}
	if b.PreventSelfReview != nil {
		c.PreventSelfReview = b.PreventSelfReview
	}
	if b.WaitTimer != nil && (*b.WaitTimer < 0 || *b.WaitTimer > MaxWaitTimer) {
		f.Addf("Environment", "wait_timer", "wait_timer must be an integer between 0 and %d", MaxWaitTimer)
	}
	if b.Reviewers != nil {
		list, err := h.reviewers(r, repo, *b.Reviewers, &f)
		if err != nil {
			return c, err
		}
		c.Reviewers = &list
	}
	if raw := bytes.TrimSpace(b.BranchPolicy); len(raw) > 0 {
		policy, ok := branchPolicyOf(raw)
		if !ok {
			f.Addf("Environment", "deployment_branch_policy",
				"Exactly one of protected_branches and custom_branch_policies must be true, or deployment_branch_policy null")
		}
		c.BranchPolicy = &policy
	}
	return c, f.Err()
}

// branchPolicyOf reads a request's deployment_branch_policy: null is
// PolicyAll; an object must set exactly one of its two booleans.
func branchPolicyOf(raw json.RawMessage) (string, bool) {
	if string(raw) == "null" {
		return PolicyAll, true
	}
	var s struct {
		Protected *bool `json:"protected_branches"`
		Custom    *bool `json:"custom_branch_policies"`
	}
	if err := json.Unmarshal(raw, &s); err != nil || s.Protected == nil || s.Custom == nil || *s.Protected == *s.Custom {
		return "", false
	}
	if *s.Protected {
		return PolicyProtected, true
	}
	return PolicyCustom, true
}

// reviewers checks the requested reviewers, adding field errors for the
// ones that are not, and returns them.
func (h *Handler) reviewers(r *http.Request, repo *repos.Repository, req []reviewerRequest, f *apierr.Fields) ([]Reviewer, error) {
	if len(req) > MaxReviewers {
		f.Addf("Environment", "reviewers", "reviewers may list at most %d users or teams", MaxReviewers)
		return nil, nil
	}
	out := []Reviewer{}
	for _, rv := range req {
		switch rv.Type {
		case "User":
			if _, err := accounts.ByID(r.Context(), h.Service.DB, rv.ID); isNotFound(err) {
				f.Addf("Environment", "reviewers", "Reviewer user %d not found", rv.ID)
				continue
			} else if err != nil {
				return nil, err
			}
		case "Team":
			if h.Teams == nil || !repo.Owner.IsOrg() {
				f.Addf("Environment", "reviewers", "Reviewer team %d not found", rv.ID)
				continue
			}
			if _, ok, err := h.Teams.TeamJSON(r.Context(), h.Service.DB, httpapi.BaseURL(r.Context()), repo.Owner.ID, rv.ID); err != nil {
				return nil, err
			} else if !ok {
				f.Addf("Environment", "reviewers", "Reviewer team %d not found", rv.ID)
				continue
			}
		default:
			f.Add("Environment", "reviewers", apierr.CodeInvalid)
			continue
		}
		out = append(out, Reviewer{Kind: rv.Type, ID: rv.ID})
	}
	return out, nil
}

// environmentJSON renders an environment with its reviewers' objects.
func (h *Handler) environmentJSON(r *http.Request, repo *repos.Repository, e *Environment) (environmentJSON, error) {
	base := httpapi.BaseURL(r.Context())
	list, err := h.reviewersJSON(r.Context(), h.Service.DB, base, repo, e)
	if err != nil {
		return environmentJSON{}, err
	}
	return toEnvironmentJSON(base, repo, e, list), nil
}

// reviewersJSON renders the environment's required reviewers that still
// exist: users as simple users, teams as the platform's team object. It
// reads through q: the caller's transaction when it has one, else the
// service's DB.
func (h *Handler) reviewersJSON(ctx context.Context, q store.Q, base string, repo *repos.Repository, e *Environment) ([]reviewerJSON, error) {
	var list []reviewerJSON
	for _, rv := range e.Reviewers {
		var obj any
		switch rv.Kind {
		case "User":
			a, err := accounts.ByID(ctx, q, rv.ID)
			if isNotFound(err) {
				continue
			}
			if err != nil {
				return nil, err
			}
			obj = accounts.ToSimpleUser(base, a)
		case "Team":
			if h.Teams == nil {
				continue
			}
			t, ok, err := h.Teams.TeamJSON(ctx, q, base, repo.Owner.ID, rv.ID)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
			obj = t
		}
		list = append(list, reviewerJSON{Type: rv.Kind, Reviewer: obj})
	}
	return list, nil
}

// environment reads the route's {environment_name}: a 404 when the
// repository has no such environment.
func (h *Handler) environment(r *http.Request) (*Environment, error) {
	e, err := h.Service.Environment(r.Context(), repos.From(r.Context()).ID, r.PathValue("environment_name"))
	if isNotFound(err) {
		return nil, apierr.NotFound()
	}
	return e, err
}

// listEnvironments answers GET .../environments: total_count and a page
// of environments by name.
func (h *Handler) listEnvironments(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	repo := repos.From(r.Context())
	list, total, err := h.Service.Environments(r.Context(), repo.ID, page.Limit(), page.Offset())
	if err != nil {
		return err
	}
	out := make([]environmentJSON, 0, len(list))
	for _, e := range list {
		j, err := h.environmentJSON(r, repo, e)
		if err != nil {
			return err
		}
		out = append(out, j)
	}
	httpapi.SetLinks(w, r, page, total)
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"total_count": total, "environments": out})
	return nil
}

// getEnvironment answers GET .../environments/{environment_name}.
func (h *Handler) getEnvironment(w http.ResponseWriter, r *http.Request) error {
	e, err := h.environment(r)
	if err != nil {
		return err
	}
	j, err := h.environmentJSON(r, repos.From(r.Context()), e)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, j)
	return nil
}

// putEnvironment answers PUT .../environments/{environment_name}: it
// creates the environment or changes it, 200 with it.
func (h *Handler) putEnvironment(w http.ResponseWriter, r *http.Request) error {
	var body environmentRequest
	if r.ContentLength != 0 {
		if err := httpapi.DecodeJSON(r, &body); err != nil {
			return err
		}
	}
	name := r.PathValue("environment_name")
	var f apierr.Fields
	if name == "" || !f.MaxLength("Environment", "name", name, MaxEnvironmentNameLength) {
		if len(f) == 0 {
			f.Add("Environment", "name", apierr.CodeInvalid)
		}
		return f.Err()
	}
	repo := repos.From(r.Context())
	c, err := h.change(r, repo, body)
	if err != nil {
		return err
	}
	e, err := h.Service.PutEnvironment(r.Context(), repo.ID, name, c)
	if err != nil {
		return err
	}
	j, err := h.environmentJSON(r, repo, e)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, j)
	return nil
}

// deleteEnvironment answers DELETE .../environments/{environment_name}:
// 204 (404 for an environment that does not exist).
func (h *Handler) deleteEnvironment(w http.ResponseWriter, r *http.Request) error {
	e, err := h.environment(r)
	if err != nil {
		return err
	}
	if err := h.Service.DeleteEnvironment(r.Context(), e); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

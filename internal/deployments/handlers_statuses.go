package deployments

import (
	"net/http"
	"net/url"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
)

// statusRequest is the body of POST .../deployments/{id}/statuses.
type statusRequest struct {
	State          *string `json:"state"`
	TargetURL      *string `json:"target_url"`
	LogURL         *string `json:"log_url"`
	Description    *string `json:"description"`
	Environment    *string `json:"environment"`
	EnvironmentURL *string `json:"environment_url"`
	AutoInactive   *bool   `json:"auto_inactive"`
}

// validate checks the body and returns the status it asks for, in the
// deployment's environment unless it names another. log_url sets
// target_url too, as on the platform.
func (b statusRequest) validate(d *Deployment) (Status, error) {
	var f apierr.Fields
	st := Status{Environment: d.Environment}
	switch {
	case b.State == nil:
		f.Add("DeploymentStatus", "state", apierr.CodeMissingField)
	case !validState(*b.State):
		f.Add("DeploymentStatus", "state", apierr.CodeInvalid)
	default:
		st.State = *b.State
	}
	if b.Description != nil {
		st.Description = *b.Description
		f.MaxLength("DeploymentStatus", "description", st.Description, MaxDescriptionLength)
	}
	if b.Environment != nil && *b.Environment != "" {
		st.Environment = *b.Environment
		f.MaxLength("DeploymentStatus", "environment", st.Environment, MaxEnvironmentNameLength)
	}
	st.TargetURL = checkURL(&f, "target_url", b.TargetURL)
	st.LogURL = checkURL(&f, "log_url", b.LogURL)
	st.EnvironmentURL = checkURL(&f, "environment_url", b.EnvironmentURL)
	if st.LogURL != "" {
		st.TargetURL = st.LogURL
	} else {
		st.LogURL = st.TargetURL
	}
	return st, f.Err()
}

// checkURL returns an optional http(s) URL field, adding an invalid
// field error for anything else.
func checkURL(f *apierr.Fields, field string, v *string) string {
	if v == nil || *v == "" {
		return ""
	}
	if !f.MaxLength("DeploymentStatus", field, *v, MaxURLLength) {
		return ""
	}
	if u, err := url.Parse(*v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		f.Add("DeploymentStatus", field, apierr.CodeInvalid)
		return ""
	}
	return *v
}

// createStatus answers POST .../deployments/{id}/statuses: 201 with the
// status and its Location.
func (h *Handler) createStatus(w http.ResponseWriter, r *http.Request) error {
	d, err := h.deployment(r)
	if err != nil {
		return err
	}
	var body statusRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	st, err := body.validate(d)
	if err != nil {
		return err
	}
	ctx, repo := r.Context(), repos.From(r.Context())
	actor, err := accounts.ByID(ctx, h.Service.DB, auth.PrincipalFrom(ctx).UserID())
	if err != nil {
		return err
	}
	base := httpapi.BaseURL(ctx)
	created, err := h.Service.CreateStatus(ctx, repo, d, actor, st, body.AutoInactive == nil || *body.AutoInactive,
		func(st *Status, d *Deployment) map[string]any {
			return map[string]any{"action": "created", "deployment_status": toStatusJSON(base, repo, st),
				"deployment": toDeploymentJSON(base, repo, d)}
		})
	if err != nil {
		return err
	}
	j := toStatusJSON(base, repo, created)
	httpapi.WriteCreated(w, j.URL, j)
	return nil
}

// listStatuses answers GET .../deployments/{id}/statuses: newest first,
// paged.
func (h *Handler) listStatuses(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	d, err := h.deployment(r)
	if err != nil {
		return err
	}
	list, more, err := h.Service.Statuses(r.Context(), d.ID, page.Limit(), page.Offset())
	if err != nil {
		return err
	}
	base, repo := httpapi.BaseURL(r.Context()), repos.From(r.Context())
	out := make([]statusJSON, 0, len(list))
	for _, st := range list {
		out = append(out, toStatusJSON(base, repo, st))
	}
	httpapi.SetLinksMore(w, r, page, more)
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// getStatus answers GET .../deployments/{id}/statuses/{status_id}.
func (h *Handler) getStatus(w http.ResponseWriter, r *http.Request) error {
	d, err := h.deployment(r)
	if err != nil {
		return err
	}
	id, err := httpapi.PathInt64(r, "status_id")
	if err != nil {
		return err
	}
	st, err := h.Service.Status(r.Context(), d.ID, id)
	if isNotFound(err) {
		return apierr.NotFound()
	}
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toStatusJSON(httpapi.BaseURL(r.Context()), repos.From(r.Context()), st))
	return nil
}

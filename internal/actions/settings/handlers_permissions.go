package settings

import (
	"net/http"
	"slices"
	"strconv"

	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
)

// permissionRoutes are the Actions permissions of repositories and
// organizations.
func (h *Handler) permissionRoutes() []httpapi.Route {
	const repo = "/repos/{owner}/{repo}/actions/permissions"
	const org = "/orgs/{org}/actions/permissions"
	const ent = "/enterprises/{enterprise}/actions/permissions"
	read, write := repoRule(auth.RoleAdmin, "administration:read"), repoRule(auth.RoleAdmin, "administration:write")
	orgRead, orgWrite := orgRule("organization_administration:read"), orgRule("organization_administration:write")
	entRule := auth.Rule{Target: auth.TargetEnterprise, Role: auth.RoleAdmin, Scopes: []string{"admin:enterprise"}}
	out := []httpapi.Route{
		{Method: "GET", Pattern: repo, Handle: h.getRepoPermissions, Auth: read},
		{Method: "PUT", Pattern: repo, Handle: h.setRepoPermissions, Auth: write},
		{Method: "GET", Pattern: repo + "/access", Handle: h.getAccess, Auth: read},
		{Method: "PUT", Pattern: repo + "/access", Handle: h.setAccess, Auth: write},
		{Method: "GET", Pattern: org, Handle: h.getOrgPermissions, Auth: orgRead},
		{Method: "PUT", Pattern: org, Handle: h.setOrgPermissions, Auth: orgWrite},
		{Method: "GET", Pattern: org + "/repositories", Handle: h.listOrgRepos(orgEnabledRepos), Auth: orgRead},
		{Method: "PUT", Pattern: org + "/repositories", Handle: h.setOrgRepos(orgEnabledRepos, "ActionsPermissions"), Auth: orgWrite},
		{Method: "PUT", Pattern: org + "/repositories/{repository_id}", Handle: h.changeOrgRepo(orgEnabledRepos, true), Auth: orgWrite},
		{Method: "DELETE", Pattern: org + "/repositories/{repository_id}", Handle: h.changeOrgRepo(orgEnabledRepos, false), Auth: orgWrite},
		{Method: "GET", Pattern: ent, Handle: h.getEnterprisePermissions, Auth: entRule},
		{Method: "PUT", Pattern: ent, Handle: h.setEnterprisePermissions, Auth: entRule},
		{Method: "GET", Pattern: ent + "/organizations", Handle: h.listEnabledOrgs, Auth: entRule},
		{Method: "PUT", Pattern: ent + "/organizations", Handle: h.setEnabledOrgs, Auth: entRule},
		{Method: "PUT", Pattern: ent + "/organizations/{org_id}", Handle: h.enabledOrg((*Service).Enable), Auth: entRule},
		{Method: "DELETE", Pattern: ent + "/organizations/{org_id}", Handle: h.enabledOrg((*Service).Disable), Auth: entRule},
	}
	for _, p := range []struct {
		path        string
		place       placeFunc
		read, write auth.Rule
	}{{repo, repoPlaceOf, read, write}, {org, orgPlaceOf, orgRead, orgWrite}, {ent, enterprisePlaceOf, entRule, entRule}} {
		out = append(out,
			httpapi.Route{Method: "GET", Pattern: p.path + "/selected-actions", Handle: h.getSelectedActions(p.place), Auth: p.read},
			httpapi.Route{Method: "PUT", Pattern: p.path + "/selected-actions", Handle: h.setSelectedActions(p.place), Auth: p.write},
			httpapi.Route{Method: "GET", Pattern: p.path + "/workflow", Handle: h.getWorkflow(p.place), Auth: p.read},
			httpapi.Route{Method: "PUT", Pattern: p.path + "/workflow", Handle: h.setWorkflow(p.place), Auth: p.write},
			httpapi.Route{Method: "GET", Pattern: p.path + "/artifact-and-log-retention", Handle: h.getRetention(p.place), Auth: p.read},
			httpapi.Route{Method: "PUT", Pattern: p.path + "/artifact-and-log-retention", Handle: h.setRetention(p.place), Auth: p.write},
		)
	}
	return out
}

// permissionsJSON is actions-repository-permissions (Enabled) and
// actions-organization-permissions (EnabledRepositories).
type permissionsJSON struct {
	Enabled                 *bool  `json:"enabled,omitempty"`
	EnabledRepositories     string `json:"enabled_repositories,omitempty"`
	SelectedRepositoriesURL string `json:"selected_repositories_url,omitempty"`
	AllowedActions          string `json:"allowed_actions,omitempty"`
	SelectedActionsURL      string `json:"selected_actions_url,omitempty"`
	SHAPinningRequired      bool   `json:"sha_pinning_required"`
}

// permissionsRequest is the body of PUT .../actions/permissions.
type permissionsRequest struct {
	Enabled             *bool   `json:"enabled"`
	EnabledRepositories *string `json:"enabled_repositories"`
	AllowedActions      *string `json:"allowed_actions"`
	SHAPinningRequired  *bool   `json:"sha_pinning_required"`
}

// checkAllowed adds a field error for an allowed_actions the platform
// does not know.
func checkAllowed(f *apierr.Fields, v *string) {
	if v != nil && !slices.Contains([]string{"all", "local_only", "selected"}, *v) {
		f.Addf("ActionsPermissions", "allowed_actions", "allowed_actions must be one of all, local_only or selected")
	}
}

// getRepoPermissions answers GET /repos/{owner}/{repo}/actions/permissions.
func (h *Handler) getRepoPermissions(w http.ResponseWriter, r *http.Request) error {
	p, _, _ := repoPlaceOf(r)
	pol, err := h.Service.Policy(r.Context(), p)
	if err != nil {
		return err
	}
	repo := repos.From(r.Context())
	j := permissionsJSON{Enabled: &pol.Enabled, SHAPinningRequired: pol.SHAPinningRequired}
	if pol.Enabled {
		j.AllowedActions = pol.AllowedActions
		if pol.AllowedActions == "selected" {
			j.SelectedActionsURL = httpapi.BaseURL(r.Context()) + "/repos/" + repo.Owner.Login + "/" + repo.Name +
				"/actions/permissions/selected-actions"
		}
	}
	httpapi.WriteJSON(w, http.StatusOK, j)
	return nil
}

// setRepoPermissions answers PUT /repos/{owner}/{repo}/actions/permissions:
// enabled is required.
func (h *Handler) setRepoPermissions(w http.ResponseWriter, r *http.Request) error {
	var body permissionsRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	var f apierr.Fields
	if body.Enabled == nil {
		f.Add("ActionsPermissions", "enabled", apierr.CodeMissingField)
	}
	checkAllowed(&f, body.AllowedActions)
	if err := f.Err(); err != nil {
		return err
	}
	p, _, _ := repoPlaceOf(r)
	return h.update(w, r, p, func(pol *Policy) {
		pol.Enabled = *body.Enabled
		setIf(&pol.AllowedActions, body.AllowedActions)
		setIf(&pol.SHAPinningRequired, body.SHAPinningRequired)
	})
}

// setIf sets *dst to *v when v is not nil.
func setIf[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// update stores the place's policy as change says, and answers 204.
func (h *Handler) update(w http.ResponseWriter, r *http.Request, p Place, change func(*Policy)) error {
	if err := h.Service.UpdatePolicy(r.Context(), p, change); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

// getOrgPermissions answers GET /orgs/{org}/actions/permissions.
func (h *Handler) getOrgPermissions(w http.ResponseWriter, r *http.Request) error {
	p, org, _ := orgPlaceOf(r)
	pol, err := h.Service.Policy(r.Context(), p)
	if err != nil {
		return err
	}
	base := httpapi.BaseURL(r.Context()) + "/orgs/" + org + "/actions/permissions"
	j := permissionsJSON{EnabledRepositories: pol.EnabledRepositories, SHAPinningRequired: pol.SHAPinningRequired}
	if pol.EnabledRepositories == "selected" {
		j.SelectedRepositoriesURL = base + "/repositories"
	}
	if pol.EnabledRepositories != "none" {
		j.AllowedActions = pol.AllowedActions
		if pol.AllowedActions == "selected" {
			j.SelectedActionsURL = base + "/selected-actions"
		}
	}
	httpapi.WriteJSON(w, http.StatusOK, j)
	return nil
}

// setOrgPermissions answers PUT /orgs/{org}/actions/permissions:
// enabled_repositories is required.
func (h *Handler) setOrgPermissions(w http.ResponseWriter, r *http.Request) error {
	var body permissionsRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	var f apierr.Fields
	if body.EnabledRepositories == nil {
		f.Add("ActionsPermissions", "enabled_repositories", apierr.CodeMissingField)
	} else if !slices.Contains([]string{"all", "none", "selected"}, *body.EnabledRepositories) {
		f.Addf("ActionsPermissions", "enabled_repositories", "enabled_repositories must be one of all, none or selected")
	}
	checkAllowed(&f, body.AllowedActions)
	if err := f.Err(); err != nil {
		return err
	}
	p, _, _ := orgPlaceOf(r)
	return h.update(w, r, p, func(pol *Policy) {
		pol.EnabledRepositories = *body.EnabledRepositories
		setIf(&pol.AllowedActions, body.AllowedActions)
		setIf(&pol.SHAPinningRequired, body.SHAPinningRequired)
	})
}

// getAccess answers GET .../actions/permissions/access.
func (h *Handler) getAccess(w http.ResponseWriter, r *http.Request) error {
	p, _, _ := repoPlaceOf(r)
	pol, err := h.Service.Policy(r.Context(), p)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]string{"access_level": pol.AccessLevel})
	return nil
}

// setAccess answers PUT .../actions/permissions/access: for private
// repositories only; organization needs an organization's repository.
func (h *Handler) setAccess(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		AccessLevel *string `json:"access_level"`
	}
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	repo := repos.From(r.Context())
	var f apierr.Fields
	switch {
	case body.AccessLevel == nil:
		f.Add("ActionsPermissions", "access_level", apierr.CodeMissingField)
	case !slices.Contains([]string{"none", "user", "organization", "enterprise"}, *body.AccessLevel):
		f.Addf("ActionsPermissions", "access_level", "access_level must be one of none, user, organization or enterprise")
	case !repo.Private:
		f.Addf("ActionsPermissions", "access_level", "Access to a repository's actions can only be set for private repositories")
	case *body.AccessLevel == "user" && repo.Owner.IsOrg(), *body.AccessLevel == "organization" && !repo.Owner.IsOrg():
		f.Addf("ActionsPermissions", "access_level", "access_level %s does not apply to a repository of this owner", *body.AccessLevel)
	}
	if err := f.Err(); err != nil {
		return err
	}
	p, _, _ := repoPlaceOf(r)
	return h.update(w, r, p, func(pol *Policy) { pol.AccessLevel = *body.AccessLevel })
}

// selectedActionsJSON is selected-actions.
type selectedActionsJSON struct {
	GitHubOwnedAllowed *bool     `json:"github_owned_allowed"`
	VerifiedAllowed    *bool     `json:"verified_allowed"`
	PatternsAllowed    *[]string `json:"patterns_allowed"`
}

// getSelectedActions answers GET .../actions/permissions/selected-actions.
func (h *Handler) getSelectedActions(place placeFunc) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		p, _, _ := place(r)
		pol, err := h.Service.Policy(r.Context(), p)
		if err != nil {
			return err
		}
		httpapi.WriteJSON(w, http.StatusOK, selectedActionsJSON{GitHubOwnedAllowed: &pol.GitHubOwnedAllowed,
			VerifiedAllowed: &pol.VerifiedAllowed, PatternsAllowed: &pol.PatternsAllowed})
		return nil
	}
}

// MaxPatterns is the most patterns_allowed a place may list.
const MaxPatterns = 1000

// setSelectedActions answers PUT .../actions/permissions/selected-actions:
// absent fields stay as they are; patterns are non-empty strings.
func (h *Handler) setSelectedActions(place placeFunc) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var body selectedActionsJSON
		if err := httpapi.DecodeJSON(r, &body); err != nil {
			return err
		}
		var f apierr.Fields
		if body.PatternsAllowed != nil {
			if len(*body.PatternsAllowed) > MaxPatterns {
				f.Addf("SelectedActions", "patterns_allowed", "patterns_allowed may list at most %d patterns", MaxPatterns)
			}
			for _, pat := range *body.PatternsAllowed {
				if pat == "" || len(pat) > 255 {
					f.Addf("SelectedActions", "patterns_allowed", "patterns must be 1 to 255 characters long")
					break
				}
			}
		}
		if err := f.Err(); err != nil {
			return err
		}
		p, _, _ := place(r)
		return h.update(w, r, p, func(pol *Policy) {
			setIf(&pol.GitHubOwnedAllowed, body.GitHubOwnedAllowed)
			setIf(&pol.VerifiedAllowed, body.VerifiedAllowed)
			setIf(&pol.PatternsAllowed, body.PatternsAllowed)
		})
	}
}

// workflowJSON is actions-get-default-workflow-permissions and its set
// form.
type workflowJSON struct {
	DefaultWorkflowPermissions *string `json:"default_workflow_permissions"`
	CanApprove                 *bool   `json:"can_approve_pull_request_reviews"`
}

// getWorkflow answers GET .../actions/permissions/workflow.
func (h *Handler) getWorkflow(place placeFunc) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		p, _, _ := place(r)
		pol, err := h.Service.Policy(r.Context(), p)
		if err != nil {
			return err
		}
		httpapi.WriteJSON(w, http.StatusOK, workflowJSON{DefaultWorkflowPermissions: &pol.DefaultWorkflowPermissions,
			CanApprove: &pol.CanApproveReviews})
		return nil
	}
}

// setWorkflow answers PUT .../actions/permissions/workflow: read or write;
// absent fields stay as they are.
func (h *Handler) setWorkflow(place placeFunc) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var body workflowJSON
		if err := httpapi.DecodeJSON(r, &body); err != nil {
			return err
		}
		if v := body.DefaultWorkflowPermissions; v != nil && *v != "read" && *v != "write" {
			return apierr.Validation(apierr.FieldError{Resource: "WorkflowPermissions", Field: "default_workflow_permissions",
				Code: apierr.CodeInvalid, Message: "default_workflow_permissions must be read or write"})
		}
		p, _, _ := place(r)
		return h.update(w, r, p, func(pol *Policy) {
			setIf(&pol.DefaultWorkflowPermissions, body.DefaultWorkflowPermissions)
			setIf(&pol.CanApproveReviews, body.CanApprove)
		})
	}
}

// getRetention answers GET .../actions/permissions/artifact-and-log-retention.
func (h *Handler) getRetention(place placeFunc) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		p, _, _ := place(r)
		pol, err := h.Service.Policy(r.Context(), p)
		if err != nil {
			return err
		}
		max, err := h.Service.MaxRetentionDays(r.Context(), p)
		if err != nil {
			return err
		}
		httpapi.WriteJSON(w, http.StatusOK, map[string]int{"days": min(pol.RetentionDays, max), "maximum_allowed_days": max})
		return nil
	}
}

// setRetention answers PUT .../actions/permissions/artifact-and-log-retention:
// days from 1 to the place's maximum.
func (h *Handler) setRetention(place placeFunc) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var body struct {
			Days *int `json:"days"`
		}
		if err := httpapi.DecodeJSON(r, &body); err != nil {
			return err
		}
		p, _, _ := place(r)
		max, err := h.Service.MaxRetentionDays(r.Context(), p)
		if err != nil {
			return err
		}
		if body.Days == nil {
			return apierr.Invalid("ArtifactAndLogRetention", "days", apierr.CodeMissingField)
		}
		if *body.Days < 1 || *body.Days > max {
			return apierr.Validation(apierr.FieldError{Resource: "ArtifactAndLogRetention", Field: "days", Code: apierr.CodeInvalid,
				Message: "days must be between 1 and " + strconv.Itoa(max)})
		}
		return h.update(w, r, p, func(pol *Policy) { pol.RetentionDays = *body.Days })
	}
}

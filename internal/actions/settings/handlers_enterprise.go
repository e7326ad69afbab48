package settings

import (
	"context"
	"errors"
	"net/http"
	"slices"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/store"
)

// enterprisePlaceOf is the route's enterprise.
func enterprisePlaceOf(r *http.Request) (Place, string, error) {
	e := accounts.EnterpriseFrom(r.Context())
	return EnterprisePlace(e.ID), e.Slug, nil
}

// enterprisePermissionsJSON is actions-enterprise-permissions.
type enterprisePermissionsJSON struct {
	EnabledOrganizations     string `json:"enabled_organizations"`
	SelectedOrganizationsURL string `json:"selected_organizations_url,omitempty"`
	AllowedActions           string `json:"allowed_actions,omitempty"`
	SelectedActionsURL       string `json:"selected_actions_url,omitempty"`
	SHAPinningRequired       bool   `json:"sha_pinning_required"`
}

// getEnterprisePermissions answers GET /enterprises/{enterprise}/actions/permissions.
func (h *Handler) getEnterprisePermissions(w http.ResponseWriter, r *http.Request) error {
	p, slug, _ := enterprisePlaceOf(r)
	pol, err := h.Service.Policy(r.Context(), p)
	if err != nil {
		return err
	}
	base := httpapi.BaseURL(r.Context()) + "/enterprises/" + slug + "/actions/permissions"
	j := enterprisePermissionsJSON{EnabledOrganizations: pol.EnabledRepositories, SHAPinningRequired: pol.SHAPinningRequired}
	if pol.EnabledRepositories == "selected" {
		j.SelectedOrganizationsURL = base + "/organizations"
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

// setEnterprisePermissions answers PUT /enterprises/{enterprise}/actions/permissions:
// enabled_organizations is required.
func (h *Handler) setEnterprisePermissions(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		EnabledOrganizations *string `json:"enabled_organizations"`
		AllowedActions       *string `json:"allowed_actions"`
		SHAPinningRequired   *bool   `json:"sha_pinning_required"`
	}
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	var f apierr.Fields
	if body.EnabledOrganizations == nil {
		f.Add("ActionsPermissions", "enabled_organizations", apierr.CodeMissingField)
	} else if !slices.Contains([]string{"all", "none", "selected"}, *body.EnabledOrganizations) {
		f.Addf("ActionsPermissions", "enabled_organizations", "enabled_organizations must be one of all, none or selected")
	}
	checkAllowed(&f, body.AllowedActions)
	if err := f.Err(); err != nil {
		return err
	}
	p, _, _ := enterprisePlaceOf(r)
	return h.update(w, r, p, func(pol *Policy) {
		pol.EnabledRepositories = *body.EnabledOrganizations
		setIf(&pol.AllowedActions, body.AllowedActions)
		setIf(&pol.SHAPinningRequired, body.SHAPinningRequired)
	})
}

// listEnabledOrgs answers GET /enterprises/{enterprise}/actions/permissions/organizations.
func (h *Handler) listEnabledOrgs(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	p, _, _ := enterprisePlaceOf(r)
	ids, total, err := h.Service.Enabled(r.Context(), p, page.Limit(), page.Offset())
	if err != nil {
		return err
	}
	out := make([]accounts.SimpleOrg, 0, len(ids))
	for _, id := range ids {
		a, err := accounts.ByID(r.Context(), h.Service.DB, id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		out = append(out, accounts.ToSimpleOrg(httpapi.BaseURL(r.Context()), a))
	}
	httpapi.SetLinks(w, r, page, total)
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"total_count": total, "organizations": out})
	return nil
}

// checkEnterpriseOrgs refuses ids that are not organizations of the
// enterprise with a 422.
func (h *Handler) checkEnterpriseOrgs(r *http.Request, entID int64, ids ...int64) error {
	var f apierr.Fields
	for _, id := range ids {
		var n int
		if err := h.Service.DB.QueryRowContext(r.Context(), `SELECT count(*) FROM enterprise_orgs WHERE enterprise_id = $1 AND org_id = $2`,
			entID, id).Scan(&n); err != nil {
			return store.Normalize(err)
		}
		if n == 0 {
			f.Addf("Organization", "selected_organization_ids", "Organization %d is not an organization of the enterprise", id)
		}
	}
	return f.Err()
}

// setEnabledOrgs answers PUT /enterprises/{enterprise}/actions/permissions/organizations.
func (h *Handler) setEnabledOrgs(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Selected *repoIDs `json:"selected_organization_ids"`
	}
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.Selected == nil {
		return apierr.Invalid("ActionsPermissions", "selected_organization_ids", apierr.CodeMissingField)
	}
	p, _, _ := enterprisePlaceOf(r)
	if err := h.checkEnterpriseOrgs(r, p.ID, *body.Selected...); err != nil {
		return err
	}
	if err := h.Service.SetEnabled(r.Context(), p, *body.Selected); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

// enabledOrg adds or removes the route's {org_id}: 204.
func (h *Handler) enabledOrg(change func(*Service, context.Context, Place, int64) error) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := httpapi.PathInt64(r, "org_id")
		if err != nil {
			return err
		}
		p, _, _ := enterprisePlaceOf(r)
		if err := h.checkEnterpriseOrgs(r, p.ID, id); err != nil {
			return err
		}
		if err := change(h.Service, r.Context(), p, id); err != nil {
			return err
		}
		httpapi.NoContent(w)
		return nil
	}
}

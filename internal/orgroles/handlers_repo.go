package orgroles

import (
	"encoding/json"
	"net/http"

	"forgeapi/internal/accounts"
	"forgeapi/internal/httpapi"
)

// listRepoRoles answers GET /orgs/{org}/custom-repository-roles.
func (h *Handler) listRepoRoles(w http.ResponseWriter, r *http.Request) error {
	org := accounts.OrgFrom(r.Context())
	list, err := RepoRoles(r.Context(), h.Service.DB, org.ID)
	if err != nil {
		return err
	}
	base := httpapi.BaseURL(r.Context())
	out := make([]repoRoleJSON, 0, len(list))
	for _, role := range list {
		out = append(out, toRepoRoleJSON(base, org, role))
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"total_count": len(out), "custom_roles": out})
	return nil
}

// getRepoRole answers GET /orgs/{org}/custom-repository-roles/{role_id}.
func (h *Handler) getRepoRole(w http.ResponseWriter, r *http.Request) error {
	org := accounts.OrgFrom(r.Context())
	id, err := roleID(r)
	if err != nil {
		return err
	}
	role, err := RepoRoleByID(r.Context(), h.Service.DB, org.ID, id)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toRepoRoleJSON(httpapi.BaseURL(r.Context()), org, role))
	return nil
}

// createRepoRole answers POST /orgs/{org}/custom-repository-roles.
func (h *Handler) createRepoRole(w http.ResponseWriter, r *http.Request) error {
	var in RoleInput
	if err := httpapi.DecodeJSON(r, &in); err != nil {
		return err
	}
	org := accounts.OrgFrom(r.Context())
	role, err := h.Service.CreateRepoRole(r.Context(), org, in)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusCreated, toRepoRoleJSON(httpapi.BaseURL(r.Context()), org, role))
	return nil
}

// updateRepoRole answers PATCH /orgs/{org}/custom-repository-roles/{role_id}.
func (h *Handler) updateRepoRole(w http.ResponseWriter, r *http.Request) error {
	id, err := roleID(r)
	if err != nil {
		return err
	}
	var in RoleInput
	if err := httpapi.DecodeJSON(r, &in); err != nil {
		return err
	}
	org := accounts.OrgFrom(r.Context())
	role, err := h.Service.UpdateRepoRole(r.Context(), org, id, in)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toRepoRoleJSON(httpapi.BaseURL(r.Context()), org, role))
	return nil
}

// deleteRepoRole answers DELETE /orgs/{org}/custom-repository-roles/{role_id}.
func (h *Handler) deleteRepoRole(w http.ResponseWriter, r *http.Request) error {
	id, err := roleID(r)
	if err != nil {
		return err
	}
	if err := h.Service.DeleteRepoRole(r.Context(), accounts.OrgFrom(r.Context()), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// listSecurityManagers answers GET /orgs/{org}/security-managers: the
// teams that hold the security_manager role.
func (h *Handler) listSecurityManagers(w http.ResponseWriter, r *http.Request) error {
	ctx, org := r.Context(), accounts.OrgFrom(r.Context())
	role, err := h.securityManager(r)
	if err != nil {
		return err
	}
	list, err := Teams(ctx, h.Service.DB, org, role.ID)
	if err != nil {
		return err
	}
	base := httpapi.BaseURL(ctx)
	out := []json.RawMessage{}
	for _, t := range list {
		j, err := teamJSON(ctx, h.Service.DB, base, t)
		if err != nil {
			return err
		}
		out = append(out, j)
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// addSecurityManager answers PUT /orgs/{org}/security-managers/teams/{team_slug}.
func (h *Handler) addSecurityManager(w http.ResponseWriter, r *http.Request) error {
	t, err := h.team(r)
	if err != nil {
		return err
	}
	role, err := h.securityManager(r)
	if err != nil {
		return err
	}
	if err := h.Service.AssignTeam(r.Context(), accounts.OrgFrom(r.Context()), t, role.ID); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// removeSecurityManager answers DELETE /orgs/{org}/security-managers/teams/{team_slug}.
func (h *Handler) removeSecurityManager(w http.ResponseWriter, r *http.Request) error {
	t, err := h.team(r)
	if err != nil {
		return err
	}
	role, err := h.securityManager(r)
	if err != nil {
		return err
	}
	if err := h.Service.RevokeTeam(r.Context(), t, role.ID); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

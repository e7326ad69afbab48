package orgroles

import (
	"encoding/json"
	"net/http"

	"forgeapi/internal/accounts"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/teams"
)

// roleID reads {role_id}, absent (0) on the routes that revoke every role.
func roleID(r *http.Request) (int64, error) {
	if r.PathValue("role_id") == "" {
		return 0, nil
	}
	return httpapi.PathInt64(r, "role_id")
}

// team is the organization's {team_slug}, or a 404.
func (h *Handler) team(r *http.Request) (*teams.Team, error) {
	return teams.BySlug(r.Context(), h.Service.DB, accounts.OrgFrom(r.Context()), r.PathValue("team_slug"))
}

// user is the {username} user, or a 404.
func (h *Handler) user(r *http.Request) (*accounts.Account, error) {
	return accounts.UserByLogin(r.Context(), h.Service.DB, r.PathValue("username"))
}

// listRoles answers GET /orgs/{org}/organization-roles.
func (h *Handler) listRoles(w http.ResponseWriter, r *http.Request) error {
	org := accounts.OrgFrom(r.Context())
	list, err := Roles(r.Context(), h.Service.DB, org.ID)
	if err != nil {
		return err
	}
	base := httpapi.BaseURL(r.Context())
	out := make([]roleJSON, 0, len(list))
	for _, role := range list {
		out = append(out, toRoleJSON(base, org, role))
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"total_count": len(out), "roles": out})
	return nil
}

// getRole answers GET /orgs/{org}/organization-roles/{role_id}.
func (h *Handler) getRole(w http.ResponseWriter, r *http.Request) error {
	org := accounts.OrgFrom(r.Context())
	id, err := roleID(r)
	if err != nil {
		return err
	}
	role, err := RoleByID(r.Context(), h.Service.DB, org.ID, id)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toRoleJSON(httpapi.BaseURL(r.Context()), org, role))
	return nil
}

// createRole answers POST /orgs/{org}/organization-roles.
func (h *Handler) createRole(w http.ResponseWriter, r *http.Request) error {
	var in RoleInput
	if err := httpapi.DecodeJSON(r, &in); err != nil {
		return err
	}
	org := accounts.OrgFrom(r.Context())
	role, err := h.Service.CreateRole(r.Context(), org, in)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusCreated, toRoleJSON(httpapi.BaseURL(r.Context()), org, role))
	return nil
}

// updateRole answers PATCH /orgs/{org}/organization-roles/{role_id}.
func (h *Handler) updateRole(w http.ResponseWriter, r *http.Request) error {
	id, err := roleID(r)
	if err != nil {
		return err
	}
	var in RoleInput
	if err := httpapi.DecodeJSON(r, &in); err != nil {
		return err
	}
	org := accounts.OrgFrom(r.Context())
	role, err := h.Service.UpdateRole(r.Context(), org, id, in)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toRoleJSON(httpapi.BaseURL(r.Context()), org, role))
	return nil
}

// deleteRole answers DELETE /orgs/{org}/organization-roles/{role_id}.
func (h *Handler) deleteRole(w http.ResponseWriter, r *http.Request) error {
	id, err := roleID(r)
	if err != nil {
		return err
	}
	if err := h.Service.DeleteRole(r.Context(), accounts.OrgFrom(r.Context()), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// listRoleTeams answers GET /orgs/{org}/organization-roles/{role_id}/teams.
func (h *Handler) listRoleTeams(w http.ResponseWriter, r *http.Request) error {
	ctx, org := r.Context(), accounts.OrgFrom(r.Context())
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	id, err := roleID(r)
	if err != nil {
		return err
	}
	if _, err := RoleByID(ctx, h.Service.DB, org.ID, id); err != nil {
		return err
	}
	list, err := Teams(ctx, h.Service.DB, org, id)
	if err != nil {
		return err
	}
	base := httpapi.BaseURL(ctx)
	out := []json.RawMessage{}
	for _, t := range httpapi.Slice(page, list) {
		j, err := teamJSON(ctx, h.Service.DB, base, t)
		if err != nil {
			return err
		}
		out = append(out, withAssignment(j, "direct"))
	}
	httpapi.SetLinks(w, r, page, len(list))
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// listRoleUsers answers GET /orgs/{org}/organization-roles/{role_id}/users.
func (h *Handler) listRoleUsers(w http.ResponseWriter, r *http.Request) error {
	ctx, org := r.Context(), accounts.OrgFrom(r.Context())
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	id, err := roleID(r)
	if err != nil {
		return err
	}
	if _, err := RoleByID(ctx, h.Service.DB, org.ID, id); err != nil {
		return err
	}
	list, err := Users(ctx, h.Service.DB, org, id)
	if err != nil {
		return err
	}
	base := httpapi.BaseURL(ctx)
	out := []userHolderJSON{}
	for _, u := range httpapi.Slice(page, list) {
		j := userHolderJSON{Assignment: u.Assignment(), SimpleUser: accounts.ToSimpleUser(base, u.User), InheritedFrom: []json.RawMessage{}}
		for _, t := range u.InheritedFrom {
			tj, err := teamJSON(ctx, h.Service.DB, base, t)
			if err != nil {
				return err
			}
			j.InheritedFrom = append(j.InheritedFrom, tj)
		}
		out = append(out, j)
	}
	httpapi.SetLinks(w, r, page, len(list))
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// assignTeam answers PUT /orgs/{org}/organization-roles/teams/{team_slug}/{role_id}.
func (h *Handler) assignTeam(w http.ResponseWriter, r *http.Request) error {
	t, err := h.team(r)
	if err != nil {
		return err
	}
	id, err := roleID(r)
	if err != nil {
		return err
	}
	if err := h.Service.AssignTeam(r.Context(), accounts.OrgFrom(r.Context()), t, id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// revokeTeam answers DELETE /orgs/{org}/organization-roles/teams/{team_slug}[/{role_id}].
func (h *Handler) revokeTeam(w http.ResponseWriter, r *http.Request) error {
	t, err := h.team(r)
	if err != nil {
		return err
	}
	id, err := roleID(r)
	if err != nil {
		return err
	}
	if err := h.Service.RevokeTeam(r.Context(), t, id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// assignUser answers PUT /orgs/{org}/organization-roles/users/{username}/{role_id}.
func (h *Handler) assignUser(w http.ResponseWriter, r *http.Request) error {
	u, err := h.user(r)
	if err != nil {
		return err
	}
	id, err := roleID(r)
	if err != nil {
		return err
	}
	if err := h.Service.AssignUser(r.Context(), accounts.OrgFrom(r.Context()), u, id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// revokeUser answers DELETE /orgs/{org}/organization-roles/users/{username}[/{role_id}].
func (h *Handler) revokeUser(w http.ResponseWriter, r *http.Request) error {
	u, err := h.user(r)
	if err != nil {
		return err
	}
	id, err := roleID(r)
	if err != nil {
		return err
	}
	if err := h.Service.RevokeUser(r.Context(), accounts.OrgFrom(r.Context()), u, id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// listOrgPermissions answers GET /orgs/{org}/organization-fine-grained-permissions.
func (h *Handler) listOrgPermissions(w http.ResponseWriter, r *http.Request) error {
	httpapi.WriteJSON(w, http.StatusOK, orgPermissions)
	return nil
}

// listRepoPermissions answers GET /orgs/{org}/repository-fine-grained-permissions.
func (h *Handler) listRepoPermissions(w http.ResponseWriter, r *http.Request) error {
	httpapi.WriteJSON(w, http.StatusOK, repoPermissions)
	return nil
}

// securityManager is the organization's security_manager role.
func (h *Handler) securityManager(r *http.Request) (*Role, error) {
	return RoleByName(r.Context(), h.Service.DB, accounts.OrgFrom(r.Context()).ID, SecurityManager)
}

// Package orgroles serves organization roles, custom repository roles
// and security manager teams.
//
// Organization roles are the platform's predefined roles (all_repo_read,
// all_repo_triage, all_repo_write, all_repo_maintain, all_repo_admin,
// security_manager) and an organization's custom ones, held by members
// directly or through teams. A role's base role is enforced: its holders
// get that access to every repository of the organization, through the
// repo_grants view that the access guard, git and the repository lists
// read (migration 00143). Custom repository roles name a base role and
// extra fine-grained permissions; a collaborator or team given one gets
// the base role's access. The security manager endpoints give teams the
// security_manager role.
package orgroles

import (
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
)

// Handler serves the organization role endpoints.
type Handler struct {
	Service *Service
}

// Routes is the organization roles route table. Organization owners read
// and change roles, their holders, custom repository roles and security
// manager teams (admin:org; fine-grained: Custom organization roles for
// organization roles, Administration for custom repository roles and
// security managers).
func (h *Handler) Routes() []httpapi.Route {
	rule := func(perm string) auth.Rule {
		return auth.Rule{Target: auth.TargetOrg, Role: auth.RoleAdmin, Scopes: []string{"admin:org"},
			Permissions: auth.Perm(perm), TokenTypes: auth.AllTokenTypes}
	}
	readRoles, writeRoles := rule("organization_custom_org_roles:read"), rule("organization_custom_org_roles:write")
	readAdmin, writeAdmin := rule("organization_administration:read"), rule("organization_administration:write")
	roles := "/orgs/{org}/organization-roles"
	repoRoles := "/orgs/{org}/custom-repository-roles"
	return []httpapi.Route{
		{Method: "GET", Pattern: roles, Handle: h.listRoles, Auth: readRoles},
		{Method: "POST", Pattern: roles, Handle: h.createRole, Auth: writeRoles},
		{Method: "GET", Pattern: roles + "/{role_id}", Handle: h.getRole, Auth: readRoles},
		{Method: "PATCH", Pattern: roles + "/{role_id}", Handle: h.updateRole, Auth: writeRoles},
		{Method: "DELETE", Pattern: roles + "/{role_id}", Handle: h.deleteRole, Auth: writeRoles},
		{Method: "GET", Pattern: roles + "/{role_id}/teams", Handle: h.listRoleTeams, Auth: readRoles},
		{Method: "GET", Pattern: roles + "/{role_id}/users", Handle: h.listRoleUsers, Auth: readRoles},
		{Method: "PUT", Pattern: roles + "/teams/{team_slug}/{role_id}", Handle: h.assignTeam, Auth: writeRoles},
		{Method: "DELETE", Pattern: roles + "/teams/{team_slug}/{role_id}", Handle: h.revokeTeam, Auth: writeRoles},
		{Method: "DELETE", Pattern: roles + "/teams/{team_slug}", Handle: h.revokeTeam, Auth: writeRoles},
		{Method: "PUT", Pattern: roles + "/users/{username}/{role_id}", Handle: h.assignUser, Auth: writeRoles},
		{Method: "DELETE", Pattern: roles + "/users/{username}/{role_id}", Handle: h.revokeUser, Auth: writeRoles},
		{Method: "DELETE", Pattern: roles + "/users/{username}", Handle: h.revokeUser, Auth: writeRoles},
		{Method: "GET", Pattern: "/orgs/{org}/organization-fine-grained-permissions", Handle: h.listOrgPermissions, Auth: readRoles},

		{Method: "GET", Pattern: repoRoles, Handle: h.listRepoRoles, Auth: readAdmin},
		{Method: "POST", Pattern: repoRoles, Handle: h.createRepoRole, Auth: writeAdmin},
		{Method: "GET", Pattern: repoRoles + "/{role_id}", Handle: h.getRepoRole, Auth: readAdmin},
		{Method: "PATCH", Pattern: repoRoles + "/{role_id}", Handle: h.updateRepoRole, Auth: writeAdmin},
		{Method: "DELETE", Pattern: repoRoles + "/{role_id}", Handle: h.deleteRepoRole, Auth: writeAdmin},
		{Method: "GET", Pattern: "/orgs/{org}/repository-fine-grained-permissions", Handle: h.listRepoPermissions, Auth: readAdmin},

		{Method: "GET", Pattern: "/orgs/{org}/security-managers", Handle: h.listSecurityManagers, Auth: readAdmin},
		{Method: "PUT", Pattern: "/orgs/{org}/security-managers/teams/{team_slug}", Handle: h.addSecurityManager, Auth: writeAdmin},
		{Method: "DELETE", Pattern: "/orgs/{org}/security-managers/teams/{team_slug}", Handle: h.removeSecurityManager, Auth: writeAdmin},
	}
}

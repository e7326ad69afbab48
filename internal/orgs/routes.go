// Package orgs serves organization lists and memberships as the platform
// has them: the organizations of the authenticated user, of a user (public
// memberships) and of the server, an organization's members (concealed
// ones only to its members) and public members, a member showing or
// concealing a membership, and memberships managed by owners: invitations
// (pending until the user accepts them), roles and removals, with the
// organization webhook events. Membership rows live in internal/accounts
// and decide access everywhere through internal/access.
package orgs

import (
	"forgeapi/internal/auth"
	"forgeapi/internal/collaborators"
	"forgeapi/internal/httpapi"
)

// Handler serves the organizations and members endpoints.
type Handler struct {
	Service *Service
	// Collaborators changes repository collaborators (outside
	// collaborators).
	Collaborators *collaborators.Service
}

// Routes is the organizations and members route table. Listing members
// needs the organization permission Members (read) for private
// memberships; showing or concealing one's own membership needs Members
// (write), which the platform grants app user tokens and not installation
// tokens, and for classic tokens the user scope.
func (h *Handler) Routes() []httpapi.Route {
	readMembers := auth.Rule{Target: auth.TargetOrg, Public: true, Permissions: auth.Perm("members:read"), TokenTypes: auth.AllTokenTypes}
	publicize := auth.Rule{Target: auth.TargetOrg, Role: auth.RoleRead, Scopes: []string{"user", "write:org"},
		Permissions: auth.Perm("members:write"), TokenTypes: auth.UAT | auth.FPAT}
	manage := auth.Rule{Target: auth.TargetOrg, Role: auth.RoleAdmin, Scopes: []string{"admin:org"},
		Permissions: auth.Perm("members:write"), TokenTypes: auth.AllTokenTypes}
	ownOrg := func(perm string) auth.Rule {
		return auth.Rule{Target: auth.TargetOrg, Permissions: auth.Perm(perm), TokenTypes: auth.UAT | auth.FPAT}
	}
	return []httpapi.Route{
		{Method: "GET", Pattern: "/organizations", Handle: h.listAllOrgs,
			Auth: auth.Rule{Public: true, TokenTypes: auth.AllTokenTypes}},
		{Method: "GET", Pattern: "/user/orgs", Handle: h.listOwnOrgs,
			Auth: auth.Rule{Target: auth.TargetSelf, Unauthorized401: true, TokenTypes: auth.UAT | auth.FPAT}},
		{Method: "GET", Pattern: "/users/{username}/orgs", Handle: h.listUserOrgs,
			Auth: auth.Rule{Target: auth.TargetUser, Public: true, TokenTypes: auth.AllTokenTypes}},

		{Method: "DELETE", Pattern: "/orgs/{org}", Handle: h.deleteOrg,
			Auth: auth.Rule{Target: auth.TargetOrg, Role: auth.RoleAdmin, Scopes: []string{"admin:org"},
				Permissions: auth.Perm("organization_administration:write"), TokenTypes: auth.AllTokenTypes}},

		// Site administrators only (checked by the handler); classic
		// tokens need admin:org, the catalog having no site_admin scope.
		{Method: "PATCH", Pattern: "/admin/organizations/{org}", Handle: h.renameOrg,
			Auth: auth.Rule{Target: auth.TargetOrg, Scopes: []string{"admin:org"}}},

		{Method: "GET", Pattern: "/orgs/{org}/members", Handle: h.listMembers, Auth: readMembers},
		{Method: "GET", Pattern: "/orgs/{org}/members/{username}", Handle: h.checkMember, Auth: readMembers},
		{Method: "GET", Pattern: "/orgs/{org}/public_members", Handle: h.listPublicMembers, Auth: readMembers},
		{Method: "GET", Pattern: "/orgs/{org}/public_members/{username}", Handle: h.checkPublicMember, Auth: readMembers},
		{Method: "PUT", Pattern: "/orgs/{org}/public_members/{username}", Handle: h.publicize, Auth: publicize},
		{Method: "DELETE", Pattern: "/orgs/{org}/public_members/{username}", Handle: h.conceal, Auth: publicize},
		{Method: "DELETE", Pattern: "/orgs/{org}/members/{username}", Handle: h.removeMember, Auth: manage},

		{Method: "GET", Pattern: "/orgs/{org}/outside_collaborators", Handle: h.listOutsideCollaborators,
			Auth: auth.Rule{Target: auth.TargetOrg, Role: auth.RoleRead, Scopes: []string{"read:org", "repo"},
				Permissions: auth.Perm("members:read"), TokenTypes: auth.AllTokenTypes}},
		{Method: "PUT", Pattern: "/orgs/{org}/outside_collaborators/{username}", Handle: h.convertToOutside, Auth: manage},
		{Method: "DELETE", Pattern: "/orgs/{org}/outside_collaborators/{username}", Handle: h.removeOutsideCollaborator, Auth: manage},

		{Method: "GET", Pattern: "/orgs/{org}/memberships/{username}", Handle: h.getMembership,
			Auth: auth.Rule{Target: auth.TargetOrg, Role: auth.RoleRead, Permissions: auth.Perm("members:read"), TokenTypes: auth.AllTokenTypes}},
		{Method: "PUT", Pattern: "/orgs/{org}/memberships/{username}", Handle: h.setMembership, Auth: manage},
		{Method: "DELETE", Pattern: "/orgs/{org}/memberships/{username}", Handle: h.removeMembership, Auth: manage},
		{Method: "GET", Pattern: "/orgs/{org}/invitations", Handle: h.listInvitations,
			Auth: auth.Rule{Target: auth.TargetOrg, Role: auth.RoleAdmin, Permissions: auth.Perm("members:read"), TokenTypes: auth.AllTokenTypes}},
		{Method: "GET", Pattern: "/user/memberships/orgs", Handle: h.listOwnMemberships,
			Auth: auth.Rule{Target: auth.TargetSelf, Unauthorized401: true, TokenTypes: auth.UAT | auth.FPAT}},
		{Method: "GET", Pattern: "/user/memberships/orgs/{org}", Handle: h.getOwnMembership, Auth: ownOrg("members:read")},
		{Method: "PATCH", Pattern: "/user/memberships/orgs/{org}", Handle: h.acceptMembership, Auth: ownOrg("members:write")},
	}
}

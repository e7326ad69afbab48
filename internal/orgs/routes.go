// Package orgs serves organization lists and memberships as the platform
// has them: the organizations of the authenticated user, of a user (public
// memberships) and of the server, an organization's members (concealed
// ones only to its members) and public members, and a member showing or
// concealing a membership. Membership itself lives in internal/accounts
// and decides access everywhere through internal/access.
package orgs

import (
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/store"
)

// Handler serves the organizations and members endpoints.
type Handler struct {
	DB *store.DB
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
	return []httpapi.Route{
		{Method: "GET", Pattern: "/organizations", Handle: h.listAllOrgs,
			Auth: auth.Rule{Public: true, TokenTypes: auth.AllTokenTypes}},
		{Method: "GET", Pattern: "/user/orgs", Handle: h.listOwnOrgs,
			Auth: auth.Rule{Target: auth.TargetSelf, Unauthorized401: true, TokenTypes: auth.UAT | auth.FPAT}},
		{Method: "GET", Pattern: "/users/{username}/orgs", Handle: h.listUserOrgs,
			Auth: auth.Rule{Target: auth.TargetUser, Public: true, TokenTypes: auth.AllTokenTypes}},

		{Method: "GET", Pattern: "/orgs/{org}/members", Handle: h.listMembers, Auth: readMembers},
		{Method: "GET", Pattern: "/orgs/{org}/members/{username}", Handle: h.checkMember, Auth: readMembers},
		{Method: "GET", Pattern: "/orgs/{org}/public_members", Handle: h.listPublicMembers, Auth: readMembers},
		{Method: "GET", Pattern: "/orgs/{org}/public_members/{username}", Handle: h.checkPublicMember, Auth: readMembers},
		{Method: "PUT", Pattern: "/orgs/{org}/public_members/{username}", Handle: h.publicize, Auth: publicize},
		{Method: "DELETE", Pattern: "/orgs/{org}/public_members/{username}", Handle: h.conceal, Auth: publicize},
	}
}

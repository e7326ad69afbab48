package accounts

import (
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
)

// Routes is the accounts area's route table.
func (h *Handler) Routes() []httpapi.Route {
	return []httpapi.Route{
		{Method: "GET", Pattern: "/user", Handle: h.getAuthenticatedUser,
			Auth: auth.Rule{Target: auth.TargetSelf, Unauthorized401: true, TokenTypes: auth.UAT | auth.FPAT}},
		{Method: "GET", Pattern: "/users/{username}", Handle: h.getUser,
			Auth: auth.Rule{Target: auth.TargetUser, Public: true, TokenTypes: auth.AllTokenTypes}},
		{Method: "GET", Pattern: "/orgs/{org}", Handle: h.getOrg,
			Auth: auth.Rule{Target: auth.TargetOrg, Public: true, TokenTypes: auth.AllTokenTypes}},
		{Method: "PATCH", Pattern: "/user", Handle: h.updateAuthenticatedUser,
			Auth: auth.Rule{Target: auth.TargetSelf, Unauthorized401: true, Scopes: []string{"user"},
				Permissions: auth.Perm("profile:write"), TokenTypes: auth.UAT | auth.FPAT}},
		{Method: "PATCH", Pattern: "/orgs/{org}", Handle: h.updateOrg,
			Auth: auth.Rule{Target: auth.TargetOrg, Role: auth.RoleAdmin, Scopes: []string{"admin:org"},
				Permissions: auth.Perm("organization_administration:write"), TokenTypes: auth.AllTokenTypes}},
	}
}

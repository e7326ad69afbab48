package accounts

import (
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
)

// emails is the rule of the email address endpoints: the caller's own
// addresses; classic and OAuth tokens need user or user:email (read)
// or user (write), fine-grained tokens the user permission Email
// addresses, which the platform grants app user tokens (not
// installations).
func emails(level auth.Level) auth.Rule {
	scopes := []string{"user"}
	if level == auth.Read {
		scopes = append(scopes, "user:email")
	}
	return auth.Rule{Target: auth.TargetSelf, Unauthorized401: true, Scopes: scopes,
		Permissions: auth.Perm("email_addresses:" + string(level)), TokenTypes: auth.UAT | auth.FPAT}
}

// Routes is the accounts area's route table.
func (h *Handler) Routes() []httpapi.Route {
	return []httpapi.Route{
		{Method: "GET", Pattern: "/user", Handle: h.getAuthenticatedUser,
			Auth: auth.Rule{Target: auth.TargetSelf, Unauthorized401: true, TokenTypes: auth.UAT | auth.FPAT}},
		{Method: "GET", Pattern: "/users/{username}", Handle: h.getUser,
			Auth: auth.Rule{Target: auth.TargetUser, Public: true, TokenTypes: auth.AllTokenTypes}},
		{Method: "GET", Pattern: "/user/social_accounts", Handle: h.listOwnSocial, Auth: socialRule(false)},
		{Method: "POST", Pattern: "/user/social_accounts", Handle: h.addSocial, Auth: socialRule(true)},
		{Method: "DELETE", Pattern: "/user/social_accounts", Handle: h.deleteSocial, Auth: socialRule(true)},
		{Method: "GET", Pattern: "/users/{username}/social_accounts", Handle: h.listUserSocial,
			Auth: auth.Rule{Target: auth.TargetUser, Public: true, TokenTypes: auth.AllTokenTypes}},
		{Method: "GET", Pattern: "/users", Handle: h.listUsers, Auth: auth.Rule{Public: true, TokenTypes: auth.AllTokenTypes}},
		{Method: "GET", Pattern: "/search/users", Handle: h.searchUsers, Rate: httpapi.Search,
			Auth: auth.Rule{Public: true, TokenTypes: auth.AllTokenTypes}},
		{Method: "GET", Pattern: "/user/{account_id}", Handle: h.getUserByID, Auth: auth.Rule{Public: true, TokenTypes: auth.AllTokenTypes}},
		{Method: "GET", Pattern: "/orgs/{org}", Handle: h.getOrg,
			Auth: auth.Rule{Target: auth.TargetOrg, Public: true, TokenTypes: auth.AllTokenTypes}},
		{Method: "PATCH", Pattern: "/user", Handle: h.updateAuthenticatedUser,
			Auth: auth.Rule{Target: auth.TargetSelf, Unauthorized401: true, Scopes: []string{"user"},
				Permissions: auth.Perm("profile:write"), TokenTypes: auth.UAT | auth.FPAT}},
		{Method: "GET", Pattern: "/user/emails", Handle: h.listEmails, Auth: emails(auth.Read)},
		{Method: "POST", Pattern: "/user/emails", Handle: h.addEmails, Auth: emails(auth.Write)},
		{Method: "DELETE", Pattern: "/user/emails", Handle: h.deleteEmails, Auth: emails(auth.Write)},
		{Method: "PATCH", Pattern: "/user/email/visibility", Handle: h.setEmailVisibility, Auth: emails(auth.Write)},
		{Method: "GET", Pattern: "/user/public_emails", Handle: h.listPublicEmails, Auth: emails(auth.Read)},
		{Method: "PATCH", Pattern: "/orgs/{org}", Handle: h.updateOrg,
			Auth: auth.Rule{Target: auth.TargetOrg, Role: auth.RoleAdmin, Scopes: []string{"admin:org"},
				Permissions: auth.Perm("organization_administration:write"), TokenTypes: auth.AllTokenTypes}},
	}
}

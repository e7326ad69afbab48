package dependabot

import (
	"net/http"

	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
)

// Handler serves Dependabot alerts and the vulnerability-alerts switch.
type Handler struct {
	Service *Service
}

// Routes is the Dependabot alerts route table, with the platform's
// access: a repository's alerts are read and updated with write access
// (classic tokens: security_events, or repo; public_repo for public
// repositories; fine-grained: Dependabot alerts), switched on and off by
// administrators (Administration); an organization's alerts are its
// owners', an enterprise's its owners' (classic tokens only).
func (h *Handler) Routes() []httpapi.Route {
	read := auth.Rule{Target: auth.TargetRepo, Role: auth.RoleWrite, Scopes: []string{"security_events", "public_repo"},
		Permissions: auth.Perm("vulnerability_alerts:read"), TokenTypes: auth.AllTokenTypes}
	write := auth.Rule{Target: auth.TargetRepo, Role: auth.RoleWrite, Scopes: []string{"security_events", "public_repo"},
		Permissions: auth.Perm("vulnerability_alerts:write"), TokenTypes: auth.AllTokenTypes}
	adminRead := auth.Rule{Target: auth.TargetRepo, Role: auth.RoleAdmin, Scopes: []string{"repo"},
		Permissions: auth.Perm("administration:read"), TokenTypes: auth.AllTokenTypes}
	adminWrite := auth.Rule{Target: auth.TargetRepo, Role: auth.RoleAdmin, Scopes: []string{"repo"},
		Permissions: auth.Perm("administration:write"), TokenTypes: auth.AllTokenTypes}
	orgRead := auth.Rule{Target: auth.TargetOrg, Role: auth.RoleAdmin, Scopes: []string{"security_events", "repo"},
		Permissions: auth.Perm("vulnerability_alerts:read"), TokenTypes: auth.AllTokenTypes}
	entRead := auth.Rule{Target: auth.TargetEnterprise, Role: auth.RoleAdmin, Scopes: []string{"security_events", "repo"}}
	const repo = "/repos/{owner}/{repo}"
	return []httpapi.Route{
		{Method: http.MethodGet, Pattern: repo + "/vulnerability-alerts", Handle: h.check, Auth: adminRead},
		{Method: http.MethodPut, Pattern: repo + "/vulnerability-alerts", Handle: h.enable, Auth: adminWrite},
		{Method: http.MethodDelete, Pattern: repo + "/vulnerability-alerts", Handle: h.disable, Auth: adminWrite},
		{Method: http.MethodGet, Pattern: repo + "/dependabot/alerts", Handle: h.listRepo, Auth: read},
		{Method: http.MethodGet, Pattern: repo + "/dependabot/alerts/{alert_number}", Handle: h.get, Auth: read},
		{Method: http.MethodPatch, Pattern: repo + "/dependabot/alerts/{alert_number}", Handle: h.update, Auth: write},
		{Method: http.MethodGet, Pattern: "/orgs/{org}/dependabot/alerts", Handle: h.listOrg, Auth: orgRead},
		{Method: http.MethodGet, Pattern: "/enterprises/{enterprise}/dependabot/alerts", Handle: h.listEnterprise, Auth: entRead},
	}
}

package secretscanning

import (
	"net/http"

	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
)

// Handler serves the secret scanning alerts API.
type Handler struct {
	Service *Service
}

// The notes of the rules whose role the handlers check: the platform
// answers 404, not 403, to readers and members below it.
const (
	adminOnly  = "repository administrators; others get 404"
	ownersOnly = "organization owners; members get 404"
)

// Routes is the secret scanning route table, with the platform's access:
// a repository's alerts are read and updated by its administrators
// (classic tokens: repo or security_events, public_repo for public
// repositories; fine-grained: Secret scanning alerts read or write), an
// organization's by its owners, an enterprise's by its owners (classic
// tokens only).
func (h *Handler) Routes() []httpapi.Route {
	read := auth.Rule{Target: auth.TargetRepo, Role: auth.RoleRead, Scopes: []string{"security_events", "public_repo"},
		Permissions: auth.Perm("secret_scanning_alerts:read"), TokenTypes: auth.AllTokenTypes, Extra: adminOnly}
	write := auth.Rule{Target: auth.TargetRepo, Role: auth.RoleRead, Scopes: []string{"security_events", "public_repo"},
		Permissions: auth.Perm("secret_scanning_alerts:write"), TokenTypes: auth.AllTokenTypes, Extra: adminOnly}
	orgRead := auth.Rule{Target: auth.TargetOrg, Role: auth.RoleRead, Scopes: []string{"security_events", "repo"},
		Permissions: auth.Perm("secret_scanning_alerts:read"), TokenTypes: auth.AllTokenTypes, Extra: ownersOnly}
	entRead := auth.Rule{Target: auth.TargetEnterprise, Role: auth.RoleAdmin, Scopes: []string{"security_events", "repo"}}
	const alerts = "/repos/{owner}/{repo}/secret-scanning/alerts"
	return []httpapi.Route{
		{Method: http.MethodGet, Pattern: alerts, Handle: h.listRepo, Auth: read},
		{Method: http.MethodGet, Pattern: alerts + "/{alert_number}", Handle: h.get, Auth: read},
		{Method: http.MethodPatch, Pattern: alerts + "/{alert_number}", Handle: h.update, Auth: write},
		{Method: http.MethodGet, Pattern: alerts + "/{alert_number}/locations", Handle: h.locations, Auth: read},
		{Method: http.MethodGet, Pattern: "/repos/{owner}/{repo}/secret-scanning/scan-history", Handle: h.scanHistory, Auth: read},
		{Method: http.MethodGet, Pattern: "/orgs/{org}/secret-scanning/alerts", Handle: h.listOrg, Auth: orgRead},
		{Method: http.MethodGet, Pattern: "/enterprises/{enterprise}/secret-scanning/alerts", Handle: h.listEnterprise, Auth: entRead},
	}
}

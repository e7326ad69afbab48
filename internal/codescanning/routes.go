package codescanning

import (
	"net/http"

	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
)

// Handler serves the code scanning API.
type Handler struct {
	Service *Service
}

// ownersOnly notes the organization list's role, which the handler
// checks: the platform answers members 404, not 403.
const ownersOnly = "organization owners; members get 404"

// Routes is the code scanning route table, with the platform's access:
// reading alerts and analyses needs write access (classic tokens:
// security_events, or repo; public_repo for public repositories;
// fine-grained: Code scanning alerts read), uploads, updates and
// deletions Code scanning alerts write; an organization's alerts are its
// owners'.
func (h *Handler) Routes() []httpapi.Route {
	read := auth.Rule{Target: auth.TargetRepo, Role: auth.RoleWrite, Scopes: []string{"security_events", "public_repo"},
		Permissions: auth.Perm("security_events:read"), TokenTypes: auth.AllTokenTypes}
	write := auth.Rule{Target: auth.TargetRepo, Role: auth.RoleWrite, Scopes: []string{"security_events", "public_repo"},
		Permissions: auth.Perm("security_events:write"), TokenTypes: auth.AllTokenTypes}
	orgRead := auth.Rule{Target: auth.TargetOrg, Role: auth.RoleRead, Scopes: []string{"security_events", "repo"},
		Permissions: auth.Perm("security_events:read"), TokenTypes: auth.AllTokenTypes, Extra: ownersOnly}
	const cs = "/repos/{owner}/{repo}/code-scanning"
	return []httpapi.Route{
		{Method: http.MethodPost, Pattern: cs + "/sarifs", Handle: h.upload, Auth: write, MaxBody: 16 << 20},
		{Method: http.MethodGet, Pattern: cs + "/sarifs/{sarif_id}", Handle: h.getUpload, Auth: read},
		{Method: http.MethodGet, Pattern: cs + "/analyses", Handle: h.listAnalyses, Auth: read},
		{Method: http.MethodGet, Pattern: cs + "/analyses/{analysis_id}", Handle: h.getAnalysis, Auth: read},
		{Method: http.MethodDelete, Pattern: cs + "/analyses/{analysis_id}", Handle: h.deleteAnalysis, Auth: write},
		{Method: http.MethodGet, Pattern: cs + "/alerts", Handle: h.listRepoAlerts, Auth: read},
		{Method: http.MethodGet, Pattern: cs + "/alerts/{alert_number}", Handle: h.getAlert, Auth: read},
		{Method: http.MethodPatch, Pattern: cs + "/alerts/{alert_number}", Handle: h.updateAlert, Auth: write},
		{Method: http.MethodGet, Pattern: cs + "/alerts/{alert_number}/instances", Handle: h.listInstances, Auth: read},
		{Method: http.MethodGet, Pattern: "/orgs/{org}/code-scanning/alerts", Handle: h.listOrgAlerts, Auth: orgRead},
	}
}

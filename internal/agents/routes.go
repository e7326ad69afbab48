package agents

import (
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
)

// Handler serves the custom agents endpoints.
type Handler struct {
	Service *Service
}

// Routes is the custom agents area's route table (spec endpoints 11-14).
// Callers are enterprise owners: classic and OAuth tokens need the
// admin:enterprise scope; fine-grained personal and app user tokens, whose
// resource owner must be their own user (see access.EnterpriseRole), need
// the enterprise permission enterprise_ai_controls, read to look and write
// to change. Installation tokens act for no user and are refused.
func (h *Handler) Routes() []httpapi.Route {
	read := auth.Rule{Target: auth.TargetEnterprise, Role: auth.RoleAdmin, Scopes: []string{"admin:enterprise"},
		Permissions: auth.Perm("enterprise_ai_controls:read"), TokenTypes: auth.UAT | auth.FPAT,
		Extra: "The caller must be an enterprise owner, and the token's resource owner its own user."}
	write := read
	write.Permissions = auth.Perm("enterprise_ai_controls:write")
	// The list and the PUT document a 401 for anonymous callers; the
	// other two answer them 404.
	read401, write401 := read, write
	read401.Unauthorized401, write401.Unauthorized401 = true, true
	return []httpapi.Route{
		{Method: "GET", Pattern: "/enterprises/{enterprise}/assistant/custom-agents", Handle: h.listAgents, Auth: read401},
		{Method: "GET", Pattern: "/enterprises/{enterprise}/assistant/custom-agents/source", Handle: h.getSource, Auth: read},
		{Method: "PUT", Pattern: "/enterprises/{enterprise}/assistant/custom-agents/source", Handle: h.putSource, Auth: write401},
		{Method: "DELETE", Pattern: "/enterprises/{enterprise}/assistant/custom-agents/source", Handle: h.deleteSource, Auth: write},
	}
}

package api

import (
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
)

// Routes is the dependency review route table. It reads no field of h, so
// a nil *Handler lists the routes too (the permission tables use that).
func (h *Handler) Routes() []httpapi.Route {
	return []httpapi.Route{
		// {basehead...}: branch names in BASE...HEAD may contain "/".
		{Method: "GET", Pattern: "/repos/{owner}/{repo}/dependency-graph/compare/{basehead...}", Handle: h.compare,
			Auth: auth.Rule{Target: auth.TargetRepo, Role: auth.RoleRead, Public: true,
				Permissions: auth.Perm("contents:read"), TokenTypes: auth.AllTokenTypes}},
	}
}

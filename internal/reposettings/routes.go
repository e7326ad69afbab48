// Package reposettings serves two settings of a repository beyond the
// repository object: autolink references (a key prefix that, followed by
// a number or an alphanumeric key, names an outside resource through a
// URL template) and tag protection rules (glob patterns of tags that only
// the repository's admins and maintainers may create, move or delete,
// enforced on every push by CheckPush).
package reposettings

import (
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/store"
)

// Handler serves the autolinks and tag protection endpoints.
type Handler struct {
	DB *store.DB
}

// Routes is the route table: both settings are the repository admins'
// alone (classic tokens: repo; fine-grained: Administration read to
// list and get, write to change).
func (h *Handler) Routes() []httpapi.Route {
	read := auth.Rule{Target: auth.TargetRepo, Role: auth.RoleAdmin, Permissions: auth.Perm("administration:read"),
		TokenTypes: auth.AllTokenTypes}
	write := auth.Rule{Target: auth.TargetRepo, Role: auth.RoleAdmin, Permissions: auth.Perm("administration:write"),
		TokenTypes: auth.AllTokenTypes}
	links := "/repos/{owner}/{repo}/autolinks"
	tags := "/repos/{owner}/{repo}/tags/protection"
	return []httpapi.Route{
		{Method: "GET", Pattern: links, Handle: h.listAutolinks, Auth: read},
		{Method: "POST", Pattern: links, Handle: h.createAutolink, Auth: write},
		{Method: "GET", Pattern: links + "/{autolink_id}", Handle: h.getAutolink, Auth: read},
		{Method: "DELETE", Pattern: links + "/{autolink_id}", Handle: h.deleteAutolink, Auth: write},
		{Method: "GET", Pattern: tags, Handle: h.listTagProtections, Auth: read},
		{Method: "POST", Pattern: tags, Handle: h.createTagProtection, Auth: write},
		{Method: "DELETE", Pattern: tags + "/{tag_protection_id}", Handle: h.deleteTagProtection, Auth: write},
	}
}

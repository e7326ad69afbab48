package orgmigration

import (
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
)

// ownersOnly is the rule of every migration endpoint (rule 5): organization
// owners, with a classic or OAuth token holding admin:org (the platform's
// guide asks for repo and admin:org; the endpoints that read repository
// contents check repo too). Fine-grained, installation and app user tokens
// are refused.
var ownersOnly = auth.Rule{Target: auth.TargetOrg, Role: auth.RoleAdmin, Scopes: []string{"admin:org"}, TokenTypes: 0,
	Extra: "organization owners only; classic tokens need admin:org (and repo to start a migration or download its archive)"}

// Routes is the organization migrations area's route table.
func (h *Handler) Routes() []httpapi.Route {
	return []httpapi.Route{
		{Method: "GET", Pattern: "/orgs/{org}/migrations", Handle: h.list, Auth: ownersOnly},
		{Method: "POST", Pattern: "/orgs/{org}/migrations", Handle: h.start, Auth: ownersOnly},
		{Method: "GET", Pattern: "/orgs/{org}/migrations/{migration_id}", Handle: h.get, Auth: ownersOnly},
		{Method: "GET", Pattern: "/orgs/{org}/migrations/{migration_id}/archive", Handle: h.downloadArchive,
			Auth: ownersOnly, Stream: true},
		{Method: "DELETE", Pattern: "/orgs/{org}/migrations/{migration_id}/archive", Handle: h.deleteArchive, Auth: ownersOnly},
		{Method: "DELETE", Pattern: "/orgs/{org}/migrations/{migration_id}/repos/{repo_name}/lock", Handle: h.unlock,
			Auth: ownersOnly},
		{Method: "GET", Pattern: "/orgs/{org}/migrations/{migration_id}/repositories", Handle: h.listRepositories,
			Auth: ownersOnly},
	}
}

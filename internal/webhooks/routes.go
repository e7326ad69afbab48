package webhooks

import (
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
)

// Handler serves the webhooks API.
type Handler struct {
	Service *Service
}

// The access rules of the hook endpoints. Every hook
// endpoint needs the repository's admin (or owner) or the organization's
// owner.
var (
	// repoHookRead: GET endpoints, and ping and tests (fine-grained read).
	repoHookRead = auth.Rule{Target: auth.TargetRepo, Role: auth.RoleAdmin,
		Scopes: []string{"read:repo_hook", "repo"}, Permissions: auth.Perm("repository_hooks:read"), TokenTypes: auth.AllTokenTypes}
	// repoHookPing: ping and tests, which fine-grained tokens may call
	// with read access while classic tokens need write:repo_hook.
	repoHookPing = auth.Rule{Target: auth.TargetRepo, Role: auth.RoleAdmin,
		Scopes: []string{"write:repo_hook", "repo"}, Permissions: auth.Perm("repository_hooks:read"), TokenTypes: auth.AllTokenTypes}
	// repoHookWrite: POST, PATCH, redelivery.
	repoHookWrite = auth.Rule{Target: auth.TargetRepo, Role: auth.RoleAdmin,
		Scopes: []string{"write:repo_hook", "repo"}, Permissions: auth.Perm("repository_hooks:write"), TokenTypes: auth.AllTokenTypes}
	// repoHookDelete: DELETE needs admin:repo_hook (or repo).
	repoHookDelete = auth.Rule{Target: auth.TargetRepo, Role: auth.RoleAdmin,
		Scopes: []string{"admin:repo_hook", "repo"}, Permissions: auth.Perm("repository_hooks:write"), TokenTypes: auth.AllTokenTypes}

	orgHookRead = auth.Rule{Target: auth.TargetOrg, Role: auth.RoleAdmin,
		Scopes: []string{"admin:org_hook"}, Permissions: auth.Perm("organization_hooks:read"), TokenTypes: auth.AllTokenTypes,
		Extra: "organization owners; OAuth apps see only the hooks they created, users only the hooks no OAuth app created"}
	orgHookWrite = auth.Rule{Target: auth.TargetOrg, Role: auth.RoleAdmin,
		Scopes: []string{"admin:org_hook"}, Permissions: auth.Perm("organization_hooks:write"), TokenTypes: auth.AllTokenTypes,
		Extra: "organization owners; OAuth apps see only the hooks they created, users only the hooks no OAuth app created"}

	// appHook: an app's own webhook, which only the app's JWT reaches.
	appHook = auth.Rule{AppJWT: true}
)

// Routes is the webhooks area's route table.
func (h *Handler) Routes() []httpapi.Route {
	const repo = "/repos/{owner}/{repo}/hooks"
	const org = "/orgs/{org}/hooks"
	return append([]httpapi.Route{
		{Method: "GET", Pattern: repo, Handle: h.listHooks, Auth: repoHookRead},
		{Method: "POST", Pattern: repo, Handle: h.createHook, Auth: repoHookWrite},
		{Method: "GET", Pattern: repo + "/{hook_id}", Handle: h.getHook, Auth: repoHookRead},
		{Method: "PATCH", Pattern: repo + "/{hook_id}", Handle: h.updateHook, Auth: repoHookWrite},
		{Method: "DELETE", Pattern: repo + "/{hook_id}", Handle: h.deleteHook, Auth: repoHookDelete},
		{Method: "GET", Pattern: repo + "/{hook_id}/config", Handle: h.getConfig, Auth: repoHookRead},
		{Method: "PATCH", Pattern: repo + "/{hook_id}/config", Handle: h.updateConfig, Auth: repoHookWrite},
		{Method: "GET", Pattern: repo + "/{hook_id}/deliveries", Handle: h.listDeliveries, Auth: repoHookRead},
		{Method: "GET", Pattern: repo + "/{hook_id}/deliveries/{delivery_id}", Handle: h.getDelivery, Auth: repoHookRead},
		{Method: "POST", Pattern: repo + "/{hook_id}/deliveries/{delivery_id}/attempts", Handle: h.redeliver, Auth: repoHookWrite},
		{Method: "POST", Pattern: repo + "/{hook_id}/pings", Handle: h.ping, Auth: repoHookPing},
		{Method: "POST", Pattern: repo + "/{hook_id}/tests", Handle: h.test, Auth: repoHookPing},

		{Method: "GET", Pattern: org, Handle: h.listHooks, Auth: orgHookRead},
		{Method: "POST", Pattern: org, Handle: h.createHook, Auth: orgHookWrite},
		{Method: "GET", Pattern: org + "/{hook_id}", Handle: h.getHook, Auth: orgHookRead},
		{Method: "PATCH", Pattern: org + "/{hook_id}", Handle: h.updateHook, Auth: orgHookWrite},
		{Method: "DELETE", Pattern: org + "/{hook_id}", Handle: h.deleteHook, Auth: orgHookWrite},
		{Method: "GET", Pattern: org + "/{hook_id}/config", Handle: h.getConfig, Auth: orgHookRead},
		{Method: "PATCH", Pattern: org + "/{hook_id}/config", Handle: h.updateConfig, Auth: orgHookWrite},
		{Method: "GET", Pattern: org + "/{hook_id}/deliveries", Handle: h.listDeliveries, Auth: orgHookRead},
		{Method: "GET", Pattern: org + "/{hook_id}/deliveries/{delivery_id}", Handle: h.getDelivery, Auth: orgHookRead},
		{Method: "POST", Pattern: org + "/{hook_id}/deliveries/{delivery_id}/attempts", Handle: h.redeliver, Auth: orgHookWrite},
		{Method: "POST", Pattern: org + "/{hook_id}/pings", Handle: h.ping, Auth: orgHookWrite},

		// The app's webhook: the same handlers, whose target is the calling app.
		{Method: "GET", Pattern: "/app/hook/config", Handle: h.getConfig, Auth: appHook},
		{Method: "PATCH", Pattern: "/app/hook/config", Handle: h.updateConfig, Auth: appHook},
		{Method: "GET", Pattern: "/app/hook/deliveries", Handle: h.listDeliveries, Auth: appHook},
		{Method: "GET", Pattern: "/app/hook/deliveries/{delivery_id}", Handle: h.getDelivery, Auth: appHook},
		{Method: "POST", Pattern: "/app/hook/deliveries/{delivery_id}/attempts", Handle: h.redeliver, Auth: appHook},
	}, h.globalRoutes()...)
}

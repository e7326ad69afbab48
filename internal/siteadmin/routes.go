package siteadmin

import (
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
)

// Routes is the site administration's route table. Every route is a site
// administrator's alone (requireSiteAdmin, in the handler: the 403 names
// what is missing); classic and OAuth tokens need the site_admin scope;
// permission-based tokens are refused (no fine-grained permission opens
// site administration); the statistics are a 404 to anyone else, as on
// the platform. Routes that name {username} resolve it first
// (an unknown login is a 404).
func (h *Handler) Routes() []httpapi.Route {
	site := auth.Rule{Scopes: []string{"site_admin"}, Unauthorized401: true}
	user := auth.Rule{Target: auth.TargetUser, Scopes: []string{"site_admin"}, Unauthorized401: true}
	route := func(method, pattern string, handle httpapi.HandlerFunc, rule auth.Rule) httpapi.Route {
		return httpapi.Route{Method: method, Pattern: pattern, Handle: requireSiteAdmin(handle), Auth: rule}
	}
	routes := []httpapi.Route{
		route("POST", "/admin/users", h.createUser, site),
		route("PATCH", "/admin/users/{username}", h.renameUser, user),
		route("DELETE", "/admin/users/{username}", h.deleteUser, user),
		route("POST", "/admin/users/{username}/authorizations", h.createImpersonation, user),
		route("DELETE", "/admin/users/{username}/authorizations", h.deleteImpersonation, user),
		route("PUT", "/users/{username}/suspended", h.suspend, user),
		route("DELETE", "/users/{username}/suspended", h.unsuspend, user),
		route("PUT", "/users/{username}/site_admin", h.promote, user),
		route("DELETE", "/users/{username}/site_admin", h.demote, user),

		route("POST", "/admin/organizations", h.createOrg, site),

		route("GET", "/admin/keys", h.listKeys, site),
		route("DELETE", "/admin/keys/{key_ids}", h.deleteKey, site),
		route("GET", "/admin/tokens", h.listTokens, site),
		route("DELETE", "/admin/tokens/{token_id}", h.deleteToken, site),

		route("GET", "/enterprise/announcement", h.getAnnouncement, site),
		route("PATCH", "/enterprise/announcement", h.setAnnouncement, site),
		route("DELETE", "/enterprise/announcement", h.removeAnnouncement, site),
		route("GET", "/enterprise/settings/license", h.getLicense, site),
	}
	for _, g := range statGroups {
		routes = append(routes, httpapi.Route{Method: "GET", Pattern: "/enterprise/stats/" + g.name,
			Handle: hiddenFromOthers(h.stats(g)), Auth: site})
	}
	return routes
}

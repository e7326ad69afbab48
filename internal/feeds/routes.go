package feeds

import (
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
)

// Routes is the feeds' route table. Most feeds need no fine-grained
// permission; the repository feeds need Metadata (read) for private
// repositories, the organization dashboard the organization permission
// Events (read), and private events in a user's own feeds the user
// permission Events (read), checked by the handlers.
func (h *Handler) Routes() []httpapi.Route {
	public := auth.Rule{Public: true, TokenTypes: auth.AllTokenTypes}
	user := auth.Rule{Target: auth.TargetUser, Public: true, TokenTypes: auth.AllTokenTypes}
	self := auth.Rule{Target: auth.TargetUser, Public: true, TokenTypes: auth.AllTokenTypes,
		Permissions: auth.Perm("user_events:read"), Extra: "needed only for the user's private events, when the token is the user's own"}
	repo := auth.Rule{Target: auth.TargetRepo, Role: auth.RoleRead, Public: true,
		Permissions: auth.Perm("metadata:read"), TokenTypes: auth.AllTokenTypes}
	return []httpapi.Route{
		{Method: "GET", Pattern: "/events", Handle: h.publicEvents, Auth: public},
		{Method: "GET", Pattern: "/networks/{owner}/{repo}/events", Handle: h.networkEvents, Auth: repo},
		{Method: "GET", Pattern: "/orgs/{org}/events", Handle: h.orgEvents,
			Auth: auth.Rule{Target: auth.TargetOrg, Public: true, TokenTypes: auth.AllTokenTypes}},
		{Method: "GET", Pattern: "/repos/{owner}/{repo}/events", Handle: h.repoEvents, Auth: repo},
		{Method: "GET", Pattern: "/users/{username}/events", Handle: h.userEvents, Auth: self},
		{Method: "GET", Pattern: "/users/{username}/events/orgs/{org}", Handle: h.userOrgEvents,
			Auth: auth.Rule{Target: auth.TargetUser, Permissions: auth.Perm("organization_events:read"),
				TokenTypes: auth.UAT | auth.FPAT, Extra: "only the user themself; the token must be on the organization"}},
		{Method: "GET", Pattern: "/users/{username}/events/public", Handle: h.userPublicEvents, Auth: user},
		{Method: "GET", Pattern: "/users/{username}/received_events", Handle: h.receivedEvents, Auth: self},
		{Method: "GET", Pattern: "/users/{username}/received_events/public", Handle: h.receivedPublicEvents, Auth: user},
	}
}

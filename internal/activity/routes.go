package activity

import (
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
)

// Routes is the starring, watching and following route table. Classic
// and OAuth tokens need public_repo or repo to star, user:follow (or
// user) to follow, and notifications or repo to watch; fine-grained
// tokens need the user permissions Starring, Followers and Watching.
func (h *Handler) Routes() []httpapi.Route {
	starring := []string{"public_repo", "repo"}
	watching := []string{"notifications", "repo"}
	following := []string{"user:follow"}
	return []httpapi.Route{
		{Method: "PUT", Pattern: "/user/starred/{owner}/{repo}", Handle: h.star,
			Auth: auth.Rule{Target: auth.TargetRepo, Role: auth.RoleRead, Scopes: starring, Unauthorized401: true,
				Permissions: auth.Perm("starring:write"), TokenTypes: auth.UAT | auth.FPAT}},
		{Method: "DELETE", Pattern: "/user/starred/{owner}/{repo}", Handle: h.unstar,
			Auth: auth.Rule{Target: auth.TargetRepo, Role: auth.RoleRead, Scopes: starring, Unauthorized401: true,
				Permissions: auth.Perm("starring:write"), TokenTypes: auth.UAT | auth.FPAT}},
		{Method: "GET", Pattern: "/user/starred/{owner}/{repo}", Handle: h.checkStarred,
			Auth: auth.Rule{Target: auth.TargetRepo, Role: auth.RoleRead, Unauthorized401: true,
				Permissions: auth.Perm("starring:read"), TokenTypes: auth.UAT | auth.FPAT}},

		{Method: "PUT", Pattern: "/user/following/{username}", Handle: h.follow,
			Auth: auth.Rule{Target: auth.TargetUser, Scopes: following, Unauthorized401: true,
				Permissions: auth.Perm("followers:write"), TokenTypes: auth.UAT | auth.FPAT}},
		{Method: "DELETE", Pattern: "/user/following/{username}", Handle: h.unfollow,
			Auth: auth.Rule{Target: auth.TargetUser, Scopes: following, Unauthorized401: true,
				Permissions: auth.Perm("followers:write"), TokenTypes: auth.UAT | auth.FPAT}},
		{Method: "GET", Pattern: "/user/following/{username}", Handle: h.checkFollowing,
			Auth: auth.Rule{Target: auth.TargetUser, Unauthorized401: true,
				Permissions: auth.Perm("followers:read"), TokenTypes: auth.UAT | auth.FPAT}},

		{Method: "PUT", Pattern: "/repos/{owner}/{repo}/subscription", Handle: h.setSubscription,
			Auth: auth.Rule{Target: auth.TargetRepo, Role: auth.RoleRead, Scopes: watching,
				Permissions: auth.Perm("watching:write"), TokenTypes: auth.UAT | auth.FPAT}},
		{Method: "DELETE", Pattern: "/repos/{owner}/{repo}/subscription", Handle: h.deleteSubscription,
			Auth: auth.Rule{Target: auth.TargetRepo, Role: auth.RoleRead, Scopes: watching,
				Permissions: auth.Perm("watching:write"), TokenTypes: auth.UAT | auth.FPAT}},
		{Method: "GET", Pattern: "/repos/{owner}/{repo}/subscription", Handle: h.getSubscription,
			Auth: auth.Rule{Target: auth.TargetRepo, Role: auth.RoleRead,
				Permissions: auth.Perm("watching:read"), TokenTypes: auth.UAT | auth.FPAT}},

		{Method: "GET", Pattern: "/repos/{owner}/{repo}/stargazers", Handle: h.listStargazers,
			Auth: auth.Rule{Target: auth.TargetRepo, Role: auth.RoleRead, Public: true, Permissions: auth.Perm("metadata:read"), TokenTypes: auth.AllTokenTypes}},
		{Method: "GET", Pattern: "/repos/{owner}/{repo}/subscribers", Handle: h.listWatchers,
			Auth: auth.Rule{Target: auth.TargetRepo, Role: auth.RoleRead, Public: true, Permissions: auth.Perm("metadata:read"), TokenTypes: auth.AllTokenTypes}},
		{Method: "GET", Pattern: "/user/followers", Handle: h.listOwnFollowers,
			Auth: auth.Rule{Target: auth.TargetSelf, Unauthorized401: true, Permissions: auth.Perm("followers:read"), TokenTypes: auth.UAT | auth.FPAT}},
		{Method: "GET", Pattern: "/user/following", Handle: h.listOwnFollowing,
			Auth: auth.Rule{Target: auth.TargetSelf, Unauthorized401: true, Permissions: auth.Perm("followers:read"), TokenTypes: auth.UAT | auth.FPAT}},
		{Method: "GET", Pattern: "/users/{username}/followers", Handle: h.listFollowers,
			Auth: auth.Rule{Target: auth.TargetUser, Public: true, TokenTypes: auth.AllTokenTypes}},
		{Method: "GET", Pattern: "/users/{username}/following", Handle: h.listFollowing,
			Auth: auth.Rule{Target: auth.TargetUser, Public: true, TokenTypes: auth.AllTokenTypes}},
		{Method: "GET", Pattern: "/users/{username}/following/{target_user}", Handle: h.checkUserFollows,
			Auth: auth.Rule{Target: auth.TargetUser, Public: true, TokenTypes: auth.AllTokenTypes}},
	}
}

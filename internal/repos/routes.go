package repos

import (
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
)

// Routes is the repositories area's route table.
func (h *Handler) Routes() []httpapi.Route {
	return []httpapi.Route{
		{Method: "GET", Pattern: "/repos/{owner}/{repo}", Handle: h.get,
			Auth: auth.Rule{Target: auth.TargetRepo, Role: auth.RoleRead, Public: true,
				Permissions: auth.Perm("metadata:read"), TokenTypes: auth.AllTokenTypes}},
		{Method: "PATCH", Pattern: "/repos/{owner}/{repo}", Handle: h.update,
			Auth: auth.Rule{Target: auth.TargetRepo, Role: auth.RoleAdmin,
				Permissions: auth.Perm("administration:write"), TokenTypes: auth.AllTokenTypes,
				Extra: "making a repository private needs the repo scope"}},
		{Method: "DELETE", Pattern: "/repos/{owner}/{repo}", Handle: h.delete,
			Auth: auth.Rule{Target: auth.TargetRepo, Role: auth.RoleAdmin, Scopes: []string{"delete_repo"},
				Permissions: auth.Perm("administration:write"), TokenTypes: auth.AllTokenTypes}},
		{Method: "POST", Pattern: "/repos/{owner}/{repo}/transfer", Handle: h.transfer,
			Auth: auth.Rule{Target: auth.TargetRepo, Role: auth.RoleAdmin,
				Permissions: auth.Perm("administration:write"), TokenTypes: auth.UAT}},
		{Method: "GET", Pattern: "/user/repos", Handle: h.listForAuthenticatedUser,
			Auth: auth.Rule{Target: auth.TargetSelf, Unauthorized401: true, Permissions: auth.Perm("metadata:read"),
				TokenTypes: auth.UAT | auth.FPAT}},
		{Method: "GET", Pattern: "/repositories", Handle: h.listPublic,
			Auth: auth.Rule{Public: true, TokenTypes: auth.AllTokenTypes}},
		{Method: "GET", Pattern: "/users/{username}/repos", Handle: h.listForUser,
			Auth: auth.Rule{Target: auth.TargetUser, Public: true, Permissions: auth.Perm("metadata:read"), TokenTypes: auth.AllTokenTypes}},
		{Method: "GET", Pattern: "/orgs/{org}/repos", Handle: h.listForOrg,
			Auth: auth.Rule{Target: auth.TargetOrg, Public: true, Permissions: auth.Perm("metadata:read"),
				TokenTypes: auth.AllTokenTypes}},
		{Method: "POST", Pattern: "/user/repos", Handle: h.createForUser, Auth: CreateForUserRule()},
		{Method: "GET", Pattern: "/user/starred", Handle: h.listByQuery(starredQuery, true),
			Auth: auth.Rule{Target: auth.TargetSelf, Unauthorized401: true, Permissions: auth.Perm("starring:read"), TokenTypes: auth.UAT | auth.FPAT}},
		{Method: "GET", Pattern: "/users/{username}/starred", Handle: h.listByQuery(starredQuery, false),
			Auth: auth.Rule{Target: auth.TargetUser, Public: true, TokenTypes: auth.AllTokenTypes}},
		{Method: "GET", Pattern: "/user/subscriptions", Handle: h.listByQuery(watchedQuery, true),
			Auth: auth.Rule{Target: auth.TargetSelf, Unauthorized401: true, Permissions: auth.Perm("watching:read"), TokenTypes: auth.UAT | auth.FPAT}},
		{Method: "GET", Pattern: "/users/{username}/subscriptions", Handle: h.listByQuery(watchedQuery, false),
			Auth: auth.Rule{Target: auth.TargetUser, Public: true, TokenTypes: auth.AllTokenTypes}},
		{Method: "POST", Pattern: "/repos/{owner}/{repo}/forks", Handle: h.createFork,
			Auth: auth.Rule{Target: auth.TargetRepo, Role: auth.RoleRead, Scopes: []string{"repo", "public_repo"},
				Permissions: auth.Perm("administration:write"), TokenTypes: auth.UAT | auth.FPAT}},
		{Method: "GET", Pattern: "/repos/{owner}/{repo}/forks", Handle: h.listForks,
			Auth: auth.Rule{Target: auth.TargetRepo, Role: auth.RoleRead, Public: true, Permissions: auth.Perm("metadata:read"), TokenTypes: auth.AllTokenTypes}},
		{Method: "POST", Pattern: "/orgs/{org}/repos", Handle: h.createForOrg, Auth: CreateForOrgRule()},
		{Method: "GET", Pattern: "/repos/{owner}/{repo}/topics", Handle: h.topics,
			Auth: auth.Rule{Target: auth.TargetRepo, Role: auth.RoleRead, Public: true,
				Permissions: auth.Perm("metadata:read"), TokenTypes: auth.AllTokenTypes}},
		{Method: "PUT", Pattern: "/repos/{owner}/{repo}/topics", Handle: h.replaceTopics,
			Auth: auth.Rule{Target: auth.TargetRepo, Role: auth.RoleAdmin,
				Permissions: auth.Perm("administration:write"), TokenTypes: auth.AllTokenTypes}},
		{Method: "GET", Pattern: "/search/repositories", Handle: h.searchRepositories, Rate: httpapi.Search,
			Auth: auth.Rule{Public: true, TokenTypes: auth.AllTokenTypes}},
		{Method: "GET", Pattern: "/search/topics", Handle: h.searchTopics, Rate: httpapi.Search,
			Auth: auth.Rule{Public: true, TokenTypes: auth.AllTokenTypes}},
		{Method: "POST", Pattern: "/repos/{owner}/{repo}/generate", Handle: h.generate, Auth: GenerateRule()},
	}
}

// CreateForUserRule is the rule of POST /user/repos, which GraphQL's
// createRepository applies too: the user's own credentials, repo or
// public_repo of a classic token, Administration write of a
// fine-grained one made for the user.
func CreateForUserRule() auth.Rule {
	return auth.Rule{Target: auth.TargetSelf, Unauthorized401: true, Scopes: []string{"repo", "public_repo"},
		Permissions: auth.Perm("administration:write"), TokenTypes: auth.UAT | auth.FPAT,
		Extra: "The token's resource owner must be the authenticated user."}
}

// CreateForOrgRule is the rule of POST /orgs/{org}/repos, which
// GraphQL's createRepository applies too: a member of the organization
// (CreateRefusal adds the organization's setting).
func CreateForOrgRule() auth.Rule {
	return auth.Rule{Target: auth.TargetOrg, Role: auth.RoleRead, Scopes: []string{"repo", "public_repo"},
		Permissions: auth.Perm("administration:write"), TokenTypes: auth.AllTokenTypes}
}

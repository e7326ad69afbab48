package teams

import (
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
)

// Handler serves the teams endpoints.
type Handler struct {
	Service *Service
}

// Routes is the teams route table. Organization members read the teams
// they can see (closed teams, and secret teams they belong to; owners see
// all) with read:org or the organization permission Members (read), and
// any member may create a team; editing, deleting and managing a team's
// members and repositories needs admin:org or Members (write), and the
// handler checks that the caller is an owner or one of the team's
// maintainers (adding a repository: admin rights on it instead).
func (h *Handler) Routes() []httpapi.Route {
	read := auth.Rule{Target: auth.TargetOrg, Role: auth.RoleRead, Scopes: []string{"read:org"},
		Permissions: auth.Perm("members:read"), TokenTypes: auth.AllTokenTypes}
	write := func(extra string) auth.Rule {
		return auth.Rule{Target: auth.TargetOrg, Role: auth.RoleRead, Scopes: []string{"admin:org"},
			Permissions: auth.Perm("members:write"), TokenTypes: auth.AllTokenTypes, Extra: extra}
	}
	manage := write("Organization owners and the team's maintainers only.")
	team := "/orgs/{org}/teams/{team_slug}"
	return append([]httpapi.Route{
		{Method: "GET", Pattern: "/orgs/{org}/teams", Handle: h.list, Auth: read},
		{Method: "POST", Pattern: "/orgs/{org}/teams", Handle: h.create, Auth: write("")},
		{Method: "GET", Pattern: team, Handle: h.get, Auth: read},
		{Method: "PATCH", Pattern: team, Handle: h.update, Auth: manage},
		{Method: "DELETE", Pattern: team, Handle: h.delete, Auth: manage},
		{Method: "GET", Pattern: team + "/members", Handle: h.members, Auth: read},
		{Method: "GET", Pattern: team + "/memberships/{username}", Handle: h.getMembership, Auth: read},
		{Method: "PUT", Pattern: team + "/memberships/{username}", Handle: h.setMembership,
			Auth: write("Organization owners and the team's maintainers; only owners add users outside the organization (who are invited).")},
		{Method: "DELETE", Pattern: team + "/memberships/{username}", Handle: h.removeMembership, Auth: manage},
		{Method: "GET", Pattern: team + "/teams", Handle: h.children, Auth: read},
		{Method: "GET", Pattern: team + "/repos", Handle: h.repos, Auth: read},
		{Method: "GET", Pattern: team + "/repos/{owner}/{repo}", Handle: h.checkRepo, Auth: read},
		{Method: "PUT", Pattern: team + "/repos/{owner}/{repo}", Handle: h.setRepo,
			Auth: write("Admin rights on the repository, and a team the caller can see.")},
		{Method: "DELETE", Pattern: team + "/repos/{owner}/{repo}", Handle: h.removeRepo,
			Auth: write("Organization owners and the team's maintainers, or admin rights on the repository.")},
		{Method: "GET", Pattern: "/user/teams", Handle: h.userTeams,
			Auth: auth.Rule{Target: auth.TargetSelf, Scopes: []string{"user", "repo", "read:org"},
				Permissions: auth.Perm("members:read"), TokenTypes: auth.UAT | auth.FPAT}},
		{Method: "GET", Pattern: "/repos/{owner}/{repo}/teams", Handle: h.repoTeams,
			Auth: auth.Rule{Target: auth.TargetRepo, Role: auth.RoleRead, Public: true, Permissions: auth.Perm("metadata:read"),
				TokenTypes: auth.AllTokenTypes}},
	}, h.legacyRoutes(read, write, manage)...)
}

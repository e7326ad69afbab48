package protection

import (
	"net/http"

	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
)

// Routes is the branch protection route table: all of it needs the
// administration of the repository (classic and OAuth tokens: repo;
// fine-grained: Administration read for reads, write for changes). The
// branch is one path segment: a branch name with a slash is sent escaped
// (feature%2Fx), as go-github and octokit send it; unescaped,
// .../branches/feature/x/protection is read by the branches route as a
// branch named "feature/x/protection".
func (h *Handler) Routes() []httpapi.Route {
	read := auth.Rule{Target: auth.TargetRepo, Role: auth.RoleAdmin,
		Permissions: auth.Perm("administration:read"), TokenTypes: auth.AllTokenTypes}
	write := auth.Rule{Target: auth.TargetRepo, Role: auth.RoleAdmin,
		Permissions: auth.Perm("administration:write"), TokenTypes: auth.AllTokenTypes}
	const p = "/repos/{owner}/{repo}/branches/{branch}/protection"
	route := func(method, path string, handle func(http.ResponseWriter, *http.Request) error) httpapi.Route {
		rule := write
		if method == "GET" {
			rule = read
		}
		return httpapi.Route{Method: method, Pattern: p + path, Handle: handle, Auth: rule}
	}
	checks, contexts, restrictions := "/required_status_checks", "/required_status_checks/contexts", "/restrictions"
	routes := []httpapi.Route{
		route("GET", "", h.view(showAll)),
		route("PUT", "", h.edit(true, h.decodePut, showAll)),
		route("DELETE", "", h.deleteProtection),
		route("GET", "/enforce_admins", h.view(showAdmins)),
		route("POST", "/enforce_admins", h.edit(false, noBody(setAdmins(true)), showAdmins)),
		route("DELETE", "/enforce_admins", h.edit(false, noBody(setAdmins(false)), nil)),
		route("GET", "/required_pull_request_reviews", h.view(showReviews)),
		route("PATCH", "/required_pull_request_reviews", h.edit(false, h.decodeReviews, showReviews)),
		route("DELETE", "/required_pull_request_reviews", h.edit(false, noBody(dropReviews), nil)),
		route("GET", "/required_signatures", h.view(showSignatures)),
		route("POST", "/required_signatures", h.edit(false, noBody(setSignatures(true)), showSignatures)),
		route("DELETE", "/required_signatures", h.edit(false, noBody(setSignatures(false)), nil)),
		route("GET", checks, h.view(showChecks)),
		route("PATCH", checks, h.edit(false, decodeChecks, showChecks)),
		route("DELETE", checks, h.edit(false, noBody(dropChecks), nil)),
		route("GET", contexts, h.view(showContexts)),
		route("POST", contexts, h.edit(false, decodeContexts(opAdd), showContexts)),
		route("PUT", contexts, h.edit(false, decodeContexts(opSet), showContexts)),
		route("DELETE", contexts, h.edit(false, decodeContexts(opRemove), showContexts)),
		route("GET", restrictions, h.view(showRestrictions)),
		route("DELETE", restrictions, h.edit(false, noBody(dropRestrictions), nil)),
	}
	for _, kind := range []string{"apps", "teams", "users"} {
		path := restrictions + "/" + kind
		routes = append(routes,
			route("GET", path, h.view(showActors(kind))),
			route("POST", path, h.edit(false, h.decodeActors(kind, opAdd), showActors(kind))),
			route("PUT", path, h.edit(false, h.decodeActors(kind, opSet), showActors(kind))),
			route("DELETE", path, h.edit(false, h.decodeActors(kind, opRemove), showActors(kind))))
	}
	return routes
}

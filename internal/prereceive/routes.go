package prereceive

import (
	"net/http"

	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
)

// Handler serves the pre-receive hooks' routes.
type Handler struct {
	Service *Service
}

// Routes is the route table: every route is a site administrator's alone
// (requireSiteAdmin: the platform's 403 to anyone else; anonymous callers
// get the 404 of what is not revealed); classic and OAuth tokens need the
// site_admin scope and permission-based tokens are refused. The
// organization and repository routes resolve {org} and {owner}/{repo}
// first.
func (h *Handler) Routes() []httpapi.Route {
	site := auth.Rule{Scopes: []string{"site_admin"}}
	org := auth.Rule{Target: auth.TargetOrg, Scopes: []string{"site_admin"}}
	repo := auth.Rule{Target: auth.TargetRepo, Scopes: []string{"site_admin"}}
	route := func(method, pattern string, handle httpapi.HandlerFunc, rule auth.Rule) httpapi.Route {
		return httpapi.Route{Method: method, Pattern: pattern, Handle: requireSiteAdmin(handle), Auth: rule}
	}
	envs, hooks := "/admin/pre-receive-environments", "/admin/pre-receive-hooks"
	return []httpapi.Route{
		route("GET", envs, h.listEnvironments, site),
		route("POST", envs, h.createEnvironment, site),
		route("GET", envs+"/{pre_receive_environment_id}", h.getEnvironment, site),
		route("PATCH", envs+"/{pre_receive_environment_id}", h.updateEnvironment, site),
		route("DELETE", envs+"/{pre_receive_environment_id}", h.deleteEnvironment, site),
		route("GET", envs+"/{pre_receive_environment_id}/downloads/latest", h.getDownload, site),

		route("GET", hooks, h.listHooks, site),
		route("POST", hooks, h.createHook, site),
		route("GET", hooks+"/{pre_receive_hook_id}", h.getHook, site),
		route("PATCH", hooks+"/{pre_receive_hook_id}", h.updateHook, site),
		route("DELETE", hooks+"/{pre_receive_hook_id}", h.deleteHook, site),

		route("GET", "/orgs/{org}/pre-receive-hooks", h.listOrgHooks, org),
		route("GET", "/orgs/{org}/pre-receive-hooks/{pre_receive_hook_id}", h.getOrgHook, org),
		route("PATCH", "/orgs/{org}/pre-receive-hooks/{pre_receive_hook_id}", h.updateOrgHook, org),
		route("DELETE", "/orgs/{org}/pre-receive-hooks/{pre_receive_hook_id}", h.removeOrgHook, org),

		route("GET", "/repos/{owner}/{repo}/pre-receive-hooks", h.listRepoHooks, repo),
		route("GET", "/repos/{owner}/{repo}/pre-receive-hooks/{pre_receive_hook_id}", h.getRepoHook, repo),
		route("PATCH", "/repos/{owner}/{repo}/pre-receive-hooks/{pre_receive_hook_id}", h.updateRepoHook, repo),
		route("DELETE", "/repos/{owner}/{repo}/pre-receive-hooks/{pre_receive_hook_id}", h.removeRepoHook, repo),
	}
}

// notSiteAdmin is the platform's answer to anyone but a site
// administrator.
const notSiteAdmin = "You must be a site administrator to do this."

// requireSiteAdmin wraps a handler so that only a site administrator
// reaches it.
func requireSiteAdmin(next httpapi.HandlerFunc) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		p := auth.PrincipalFrom(r.Context())
		if p == nil || p.Account == nil || !p.Account.SiteAdmin {
			return apierr.Forbidden(notSiteAdmin)
		}
		return next(w, r)
	}
}

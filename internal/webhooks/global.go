package webhooks

import (
	"context"
	"net/http"

	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
)

// The global webhooks of the self-managed edition (/admin/hooks): hooks
// of the installation that site administrators keep, sent the user and
// organization events of every account by the same engine (enqueue,
// Dispatcher, hookshot signing, the delivery log) as every other hook.

// globalHookRule is the rule of the /admin/hooks routes: classic and OAuth
// tokens need the site_admin scope, and the caller must be a site
// administrator (globalRoute).
var globalHookRule = auth.Rule{Scopes: []string{"site_admin"}, Unauthorized401: true}

// globalKey marks a request of the /admin/hooks routes: its target is the
// installation's global webhooks (targetFrom).
type globalKey struct{}

// globalRoute wraps a hook handler for the /admin/hooks routes: anyone but
// a site administrator gets the platform's 403, and the handler's target
// is the global webhooks.
func globalRoute(next httpapi.HandlerFunc) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		p := auth.PrincipalFrom(r.Context())
		if p == nil || p.Account == nil || !p.Account.SiteAdmin {
			return apierr.Forbidden("You must be a site administrator to do this.")
		}
		return next(w, r.WithContext(context.WithValue(r.Context(), globalKey{}, true)))
	}
}

// isGlobal reports whether the request is one of the /admin/hooks routes.
func isGlobal(ctx context.Context) bool {
	g, _ := ctx.Value(globalKey{}).(bool)
	return g
}

// The queries of one page of the global webhooks a caller may see; $1 is
// the 0 that stands for the target's id.
const (
	globalHooksPage = `SELECT ` + hookColumns + ` FROM ` + hooksFrom + ` WHERE global AND $1 = 0 AND deleted_at IS NULL
		AND COALESCE(app_id, 0) = $2 ORDER BY id LIMIT $3 OFFSET $4`
	globalHooksCount = `SELECT COUNT(*) FROM hooks WHERE global AND $1 = 0 AND deleted_at IS NULL AND COALESCE(app_id, 0) = $2`
)

// globalRoutes are the /admin/hooks routes: the repository and
// organization hooks' handlers, on the global target.
func (h *Handler) globalRoutes() []httpapi.Route {
	const hooks = "/admin/hooks"
	route := func(method, pattern string, handle httpapi.HandlerFunc) httpapi.Route {
		return httpapi.Route{Method: method, Pattern: pattern, Handle: globalRoute(handle), Auth: globalHookRule}
	}
	return []httpapi.Route{
		route("GET", hooks, h.listHooks),
		route("POST", hooks, h.createHook),
		route("GET", hooks+"/{hook_id}", h.getHook),
		route("PATCH", hooks+"/{hook_id}", h.updateHook),
		route("DELETE", hooks+"/{hook_id}", h.deleteHook),
		route("POST", hooks+"/{hook_id}/pings", h.ping),
	}
}

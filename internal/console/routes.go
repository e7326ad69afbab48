package console

import "net/http"

// Register parses the templates and adds the console's routes to mux.
// It panics when a template does not parse (they are embedded, so a test
// catches it) and, as ServeMux does, on a pattern that collides.
func (h *Handler) Register(mux interface{ Handle(string, http.Handler) }) {
	h.pages = parsePages()
	handle := func(pattern string, fn pageFunc) { mux.Handle(pattern, h.page(fn)) }
	mux.Handle("GET "+StylesheetPath, http.HandlerFunc(serveStylesheet))

	handle("GET "+LoginPath, h.loginForm)
	handle("POST "+SessionPath, h.signIn)
	handle("GET "+TwoFactorPath, h.twoFactorForm)
	handle("POST "+TwoFactorPath, h.twoFactor)
	handle("POST "+LogoutPath, h.signOut)
	handle("GET "+SettingsPath, h.settings)

	handle("GET "+TokensPath, h.tokens)
	handle("POST "+TokensPath, h.createToken)
	handle("POST "+TokensPath+"/{token_id}/revoke", h.revokeToken)
	handle("GET "+ApplicationsPath, h.applications)
	handle("POST "+ApplicationsPath+"/{grant_id}/revoke", h.revokeGrant)

	handle("GET "+AuthorizePath, h.authorizeForm)
	handle("POST "+AuthorizePath, h.authorize)
	handle("GET "+DevicePath, h.deviceForm)
	handle("POST "+DevicePath, h.deviceLookup)
	handle("POST "+DeviceDecidePath, h.deviceDecide)

	for _, base := range []string{RepoPrefix + repoHooksPath, OrgPrefix + "/{org}/settings/hooks"} {
		h.hookPages(mux, base)
		handle("POST "+base, h.createHook)
		handle("POST "+base+"/{hook_id}", h.updateHook)
		handle("POST "+base+"/{hook_id}/ping", h.pingHook)
		handle("POST "+base+"/{hook_id}/delete", h.deleteHook)
		handle("POST "+base+"/{hook_id}/deliveries/{delivery_id}/redeliver", h.redeliver)
	}
	h.repoHooks = http.NewServeMux()
	h.hookPages(h.repoHooks, repoHooksPath)
}

// repoHooksPath is the platform's path of a repository's hooks page.
const repoHooksPath = "/{owner}/{repo}/settings/hooks"

// hookPages adds the GET pages of the hooks under base to mux.
func (h *Handler) hookPages(mux interface{ Handle(string, http.Handler) }, base string) {
	handle := func(pattern string, fn pageFunc) { mux.Handle(pattern, h.page(fn)) }
	handle("GET "+base, h.hooks)
	handle("GET "+base+"/new", h.newHookForm)
	handle("GET "+base+"/{hook_id}", h.hook)
	handle("GET "+base+"/{hook_id}/deliveries", h.deliveries)
	handle("GET "+base+"/{hook_id}/deliveries/{delivery_id}", h.delivery)
}

// RepoHooksPages returns the handler of a repository's hooks pages at
// the platform's paths, /{owner}/{repo}/settings/hooks[/new, /{hook_id},
// /{hook_id}/deliveries[/{delivery_id}]] (GET only), and whether it serves
// r's path. The host's /{owner}/{repo}/... is git's route, which hands
// its pages to internal/web, so these are served from there; their forms
// post under RepoPrefix. Register must have run first.
func (h *Handler) RepoHooksPages(r *http.Request) (http.Handler, bool) {
	if h.repoHooks == nil {
		return nil, false
	}
	_, pattern := h.repoHooks.Handler(r)
	return h.repoHooks, pattern != ""
}

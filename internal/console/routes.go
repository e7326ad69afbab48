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

	for _, base := range []string{RepoPrefix + "/{owner}/{repo}/settings/hooks", OrgPrefix + "/{org}/settings/hooks"} {
		handle("GET "+base, h.hooks)
		handle("GET "+base+"/new", h.newHookForm)
		handle("POST "+base, h.createHook)
		handle("GET "+base+"/{hook_id}", h.hook)
		handle("POST "+base+"/{hook_id}", h.updateHook)
		handle("POST "+base+"/{hook_id}/ping", h.pingHook)
		handle("POST "+base+"/{hook_id}/delete", h.deleteHook)
		handle("GET "+base+"/{hook_id}/deliveries", h.deliveries)
		handle("GET "+base+"/{hook_id}/deliveries/{delivery_id}", h.delivery)
		handle("POST "+base+"/{hook_id}/deliveries/{delivery_id}/redeliver", h.redeliver)
	}
}

package oauthweb

import (
	"net/http"

	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
)

// Handler serves the flows' endpoints that are not pages (Register) and
// the API route that scopes an app's user token (Routes). The former are plain
// handlers at the host root (https://HOST/login/...), as on the
// self-managed platform: not API routes, not under /api/v3, with no
// Authorization header (the client authenticates in the body or with
// HTTP Basic client_id:client_secret). The pages (GET
// /login/oauth/authorize, /login/device) are internal/console's.
type Handler struct {
	Service *Service
}

// Register adds the route table to a server.
func (h *Handler) Register(mux interface{ Handle(string, http.Handler) }) {
	mux.Handle("POST /login/oauth/access_token", http.HandlerFunc(h.accessToken))
	mux.Handle("POST /login/device/code", http.HandlerFunc(h.deviceCode))
}

// clientCredentials is the rule of the scoped token route: the app
// authenticates with HTTP Basic client_id:client_secret, which the
// handler checks (a 401 when they are missing or wrong, as documented).
var clientCredentials = auth.Rule{ClientCredentials: true}

// Routes is the API route table: POST /applications/{client_id}/token/scoped.
func (h *Handler) Routes() []httpapi.Route {
	return []httpapi.Route{
		{Method: "POST", Pattern: "/applications/{client_id}/token/scoped", Handle: h.scopeToken, Auth: clientCredentials},
	}
}

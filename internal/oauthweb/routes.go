package oauthweb

import "net/http"

// Handler serves the flows' endpoints that are not pages. They are plain
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

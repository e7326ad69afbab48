package oauth

import (
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
)

// The states of the grants and authorizations API (`--authorizations-api`).
const (
	APIEnabled = "enabled" // the default
	APIRemoved = "removed" // POST /authorizations answers 410, the rest 404
)

// Handler serves the grants and authorizations endpoints.
type Handler struct {
	Service *Service
	// Removed serves the API as removed: POST /authorizations answers 410
	// Gone and the other endpoints do not exist (404).
	Removed bool
}

// basic is the rule of every endpoint: HTTP Basic with a login and a
// password, never a token.
var basic = auth.Rule{PasswordOnly: true, Unauthorized401: true}

// basicOTP adds the one-time password of users with two-factor
// authentication (endpoints 5, 6, 7 and 9).
var basicOTP = auth.Rule{PasswordOnly: true, OTP: true, Unauthorized401: true}

// basicOTPNo401 is basicOTP for the two endpoints whose description
// documents no 401: anonymous callers get a 404.
var basicOTPNo401 = auth.Rule{PasswordOnly: true, OTP: true}

// Routes is the grants and authorizations route table, with the
// application token endpoints (see applicationRoutes).
func (h *Handler) Routes() []httpapi.Route {
	routes := h.applicationRoutes()
	if h.Removed {
		return append(routes, httpapi.Route{Method: "POST", Pattern: "/authorizations", Handle: h.gone,
			Auth: auth.Rule{Public: true, TokenTypes: auth.AllTokenTypes}})
	}
	return append(routes, []httpapi.Route{
		{Method: "GET", Pattern: "/applications/grants", Handle: h.listGrants, Auth: basic},
		{Method: "GET", Pattern: "/applications/grants/{grant_id}", Handle: h.getGrant, Auth: basic},
		{Method: "DELETE", Pattern: "/applications/grants/{grant_id}", Handle: h.deleteGrant, Auth: basic},
		{Method: "GET", Pattern: "/authorizations", Handle: h.listAuthorizations, Auth: basic},
		{Method: "POST", Pattern: "/authorizations", Handle: h.createAuthorization, Auth: basicOTP},
		{Method: "PUT", Pattern: "/authorizations/clients/{client_id}", Handle: h.getOrCreateForApp, Auth: basicOTP},
		{Method: "PUT", Pattern: "/authorizations/clients/{client_id}/{fingerprint}", Handle: h.getOrCreateForFingerprint, Auth: basicOTPNo401},
		{Method: "GET", Pattern: "/authorizations/{authorization_id}", Handle: h.getAuthorization, Auth: basic},
		{Method: "PATCH", Pattern: "/authorizations/{authorization_id}", Handle: h.updateAuthorization, Auth: basicOTPNo401},
		{Method: "DELETE", Pattern: "/authorizations/{authorization_id}", Handle: h.deleteAuthorization, Auth: basic},
	}...)
}

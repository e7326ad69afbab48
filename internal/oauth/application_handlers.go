package oauth

import (
	"net/http"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
)

// appTokenRequest is the body of the application token endpoints.
type appTokenRequest struct {
	AccessToken string `json:"access_token"`
}

// clientCredentials is the rule of the application token endpoints: the
// application authenticates with HTTP Basic client_id:client_secret. No
// 401 is documented for them: wrong credentials are a 404.
var clientCredentials = auth.Rule{ClientCredentials: true}

// applicationRoutes are the application token endpoints, served whether
// or not the authorizations API is.
func (h *Handler) applicationRoutes() []httpapi.Route {
	return []httpapi.Route{
		{Method: "POST", Pattern: "/applications/{client_id}/token", Handle: h.checkAppToken, Auth: clientCredentials},
		{Method: "PATCH", Pattern: "/applications/{client_id}/token", Handle: h.resetAppToken, Auth: clientCredentials},
		// DELETE /applications/{client_id}/token and
		// DELETE /applications/{client_id}/grant share one pattern:
		// ServeMux refuses them beside DELETE /applications/grants/{grant_id}
		// (/applications/grants/token would match two patterns of which
		// neither is more specific), but takes this one, which that grants
		// pattern is more specific than.
		{Method: "DELETE", Pattern: "/applications/{client_id}/{token_or_grant}", Handle: h.revokeAppTokenOrGrant, Auth: clientCredentials},
	}
}

// callingApp returns the application whose client id the path names and
// whose client id and secret the request's HTTP Basic credentials are; a
// 404 when they are missing or wrong.
func (h *Handler) callingApp(r *http.Request) (*accounts.App, error) {
	clientID := r.PathValue("client_id")
	login, secret, ok := r.BasicAuth()
	if !ok || login != clientID {
		return nil, apierr.NotFound()
	}
	app, err := appByClientID(r.Context(), h.Service.DB, clientID)
	if err != nil {
		return nil, err
	}
	match, err := accounts.CheckAppSecret(r.Context(), h.Service.DB, app.ID, secret)
	if err != nil {
		return nil, err
	}
	if !match {
		return nil, apierr.NotFound()
	}
	return app, nil
}

// appTokenCall authenticates the application and reads the token value
// of the body (422 when it is missing).
func (h *Handler) appTokenCall(r *http.Request) (*accounts.App, string, error) {
	app, err := h.callingApp(r)
	if err != nil {
		return nil, "", err
	}
	var body appTokenRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return nil, "", err
	}
	if body.AccessToken == "" {
		return nil, "", apierr.Invalid(resource, "access_token", apierr.CodeMissingField)
	}
	return app, body.AccessToken, nil
}

// writeAppAuthorization answers the authorization of an application's
// token, with its owner.
func (h *Handler) writeAppAuthorization(w http.ResponseWriter, r *http.Request, z *Authorization) error {
	user, err := accounts.ByID(r.Context(), h.Service.DB, z.UserID)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toSingleAuthorizationJSON(httpapi.BaseURL(r.Context()), z, user))
	return nil
}

func (h *Handler) checkAppToken(w http.ResponseWriter, r *http.Request) error {
	app, token, err := h.appTokenCall(r)
	if err != nil {
		return err
	}
	z, err := h.Service.AppToken(r.Context(), app, token)
	if err != nil {
		return err
	}
	return h.writeAppAuthorization(w, r, z)
}

func (h *Handler) resetAppToken(w http.ResponseWriter, r *http.Request) error {
	app, token, err := h.appTokenCall(r)
	if err != nil {
		return err
	}
	z, err := h.Service.ResetAppToken(r.Context(), app, token)
	if err != nil {
		return err
	}
	return h.writeAppAuthorization(w, r, z)
}

func (h *Handler) revokeAppTokenOrGrant(w http.ResponseWriter, r *http.Request) error {
	what := r.PathValue("token_or_grant")
	if what != "token" && what != "grant" {
		return apierr.NotFound()
	}
	app, token, err := h.appTokenCall(r)
	if err != nil {
		return err
	}
	if what == "token" {
		err = h.Service.RevokeAppToken(r.Context(), app, token)
	} else {
		err = h.Service.RevokeAppGrant(r.Context(), app, token)
	}
	if err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

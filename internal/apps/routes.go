package apps

import (
	"net/http"

	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
)

// Handler serves the apps API.
type Handler struct {
	Service *Service
}

// The rules of the apps API: routes an app calls with its JWT (the
// platform documents a 401 on minting a token only), routes an
// installation token calls as itself, and the public app lookup.
var (
	appJWT          = auth.Rule{AppJWT: true}
	appJWT401       = auth.Rule{AppJWT: true, Unauthorized401: true}
	installation    = auth.Rule{TokenTypes: auth.IAT, FineGrainedOnly: true}
	installation401 = auth.Rule{TokenTypes: auth.IAT, FineGrainedOnly: true, Unauthorized401: true}
	publicApp       = auth.Rule{Public: true, TokenTypes: auth.AllTokenTypes}
)

// Routes returns the apps API's route table.
func (h *Handler) Routes() []httpapi.Route {
	return []httpapi.Route{
		{Method: http.MethodGet, Pattern: "/app", Handle: h.getApp, Auth: appJWT},
		{Method: http.MethodGet, Pattern: "/app/installations", Handle: h.listInstallations, Auth: appJWT},
		{Method: http.MethodGet, Pattern: "/app/installations/{installation_id}", Handle: h.getInstallation, Auth: appJWT},
		{Method: http.MethodDelete, Pattern: "/app/installations/{installation_id}", Handle: h.deleteInstallation, Auth: appJWT},
		{Method: http.MethodPut, Pattern: "/app/installations/{installation_id}/suspended", Handle: h.suspend, Auth: appJWT},
		{Method: http.MethodDelete, Pattern: "/app/installations/{installation_id}/suspended", Handle: h.unsuspend, Auth: appJWT},
		{Method: http.MethodPost, Pattern: "/app/installations/{installation_id}/access_tokens", Handle: h.createToken, Auth: appJWT401},
		{Method: http.MethodGet, Pattern: "/repos/{owner}/{repo}/installation", Handle: h.getRepoInstallation, Auth: appJWT},
		{Method: http.MethodGet, Pattern: "/orgs/{org}/installation", Handle: h.getOrgInstallation, Auth: appJWT},
		{Method: http.MethodGet, Pattern: "/users/{username}/installation", Handle: h.getUserInstallation, Auth: appJWT},
		{Method: http.MethodGet, Pattern: "/apps/{app_slug}", Handle: h.getAppBySlug, Auth: publicApp},
		{Method: http.MethodGet, Pattern: "/installation/repositories", Handle: h.listInstallationRepos, Auth: installation401},
		{Method: http.MethodDelete, Pattern: "/installation/token", Handle: h.revokeToken, Auth: installation},
	}
}

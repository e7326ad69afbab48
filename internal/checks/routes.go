package checks

import (
	"net/http"

	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
)

// Handler serves the Checks API.
type Handler struct {
	Service *Service
	Repos   *repos.Service
}

// The rules of the Checks API: reading needs read access (Checks read;
// public repositories anonymously); creating and updating runs and
// creating suites needs an app's installation token with Checks write
// (any other credential gets the platform's 403 "You must authenticate
// via a GitHub App."); rerequesting needs write access; the suites'
// preferences need admin access.
var (
	readChecks = auth.Rule{Target: auth.TargetRepo, Role: auth.RoleRead, Public: true,
		Permissions: auth.Perm("checks:read"), TokenTypes: auth.AllTokenTypes}
	appWritesChecks = auth.Rule{Target: auth.TargetRepo, Role: auth.RoleWrite, Scopes: []string{"repo"},
		Permissions: auth.Perm("checks:write"), TokenTypes: auth.IAT, Extra: "GitHub Apps only"}
	rerequestChecks = auth.Rule{Target: auth.TargetRepo, Role: auth.RoleWrite, Scopes: []string{"repo"},
		Permissions: auth.Perm("checks:write"), TokenTypes: auth.AllTokenTypes}
	suitePreferences = auth.Rule{Target: auth.TargetRepo, Role: auth.RoleAdmin, Scopes: []string{"repo"},
		Permissions: auth.Perm("administration:write"), TokenTypes: auth.AllTokenTypes}
)

// Routes is the Checks API's route table.
func (h *Handler) Routes() []httpapi.Route {
	return []httpapi.Route{
		{Method: http.MethodPost, Pattern: "/repos/{owner}/{repo}/check-runs", Handle: h.createRun, Auth: appWritesChecks},
		{Method: http.MethodGet, Pattern: "/repos/{owner}/{repo}/check-runs/{check_run_id}", Handle: h.getRun, Auth: readChecks},
		{Method: http.MethodPatch, Pattern: "/repos/{owner}/{repo}/check-runs/{check_run_id}", Handle: h.updateRun, Auth: appWritesChecks},
		{Method: http.MethodGet, Pattern: "/repos/{owner}/{repo}/check-runs/{check_run_id}/annotations", Handle: h.listAnnotations, Auth: readChecks},
		{Method: http.MethodPost, Pattern: "/repos/{owner}/{repo}/check-runs/{check_run_id}/rerequest", Handle: h.rerequestRun, Auth: rerequestChecks},
		{Method: http.MethodPost, Pattern: "/repos/{owner}/{repo}/check-suites", Handle: h.createSuite, Auth: appWritesChecks},
		{Method: http.MethodPatch, Pattern: "/repos/{owner}/{repo}/check-suites/preferences", Handle: h.setPreferences, Auth: suitePreferences},
		{Method: http.MethodGet, Pattern: "/repos/{owner}/{repo}/check-suites/{check_suite_id}", Handle: h.getSuite, Auth: readChecks},
		{Method: http.MethodGet, Pattern: "/repos/{owner}/{repo}/check-suites/{check_suite_id}/check-runs", Handle: h.listRunsForSuite, Auth: readChecks},
		{Method: http.MethodPost, Pattern: "/repos/{owner}/{repo}/check-suites/{check_suite_id}/rerequest", Handle: h.rerequestSuite, Auth: rerequestChecks},
		{Method: http.MethodGet, Pattern: "/repos/{owner}/{repo}/commits/{ref}/check-runs", Handle: h.listRunsForRef, Auth: readChecks},
		{Method: http.MethodGet, Pattern: "/repos/{owner}/{repo}/commits/{ref}/check-suites", Handle: h.listSuitesForRef, Auth: readChecks},
	}
}

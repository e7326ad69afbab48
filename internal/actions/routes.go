package actions

import (
	"net/http"

	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
)

// Handler serves the Actions API's workflows, runs and jobs.
type Handler struct {
	Service *Service
}

// The rules of the Actions API: reading needs read access (Actions read;
// public repositories anonymously); dispatching, enabling, disabling,
// cancelling, rerunning and deleting need write access (Actions write).
var (
	readActions = auth.Rule{Target: auth.TargetRepo, Role: auth.RoleRead, Public: true,
		Permissions: auth.Perm("actions:read"), TokenTypes: auth.AllTokenTypes}
	writeActions = auth.Rule{Target: auth.TargetRepo, Role: auth.RoleWrite, Scopes: []string{"repo"},
		Permissions: auth.Perm("actions:write"), TokenTypes: auth.AllTokenTypes}
)

// Routes is the route table of workflows, runs, jobs, artifacts and
// caches (the organizations' and enterprises' cache usage in
// caches_usage.go, the cache usage policies in caches_policy.go).
func (h *Handler) Routes() []httpapi.Route {
	const base = "/repos/{owner}/{repo}/actions"
	routes := []httpapi.Route{
		{Method: http.MethodGet, Pattern: base + "/workflows", Handle: h.listWorkflows, Auth: readActions},
		{Method: http.MethodGet, Pattern: base + "/workflows/{workflow_id}", Handle: h.getWorkflow, Auth: readActions},
		{Method: http.MethodPut, Pattern: base + "/workflows/{workflow_id}/disable", Handle: h.disableWorkflow, Auth: writeActions},
		{Method: http.MethodPut, Pattern: base + "/workflows/{workflow_id}/enable", Handle: h.enableWorkflow, Auth: writeActions},
		{Method: http.MethodPost, Pattern: base + "/workflows/{workflow_id}/dispatches", Handle: h.dispatch, Auth: writeActions},
		{Method: http.MethodGet, Pattern: base + "/workflows/{workflow_id}/runs", Handle: h.listWorkflowRuns, Auth: readActions},
		{Method: http.MethodGet, Pattern: base + "/runs", Handle: h.listRuns, Auth: readActions},
		{Method: http.MethodGet, Pattern: base + "/runs/{run_id}", Handle: h.getRun, Auth: readActions},
		{Method: http.MethodDelete, Pattern: base + "/runs/{run_id}", Handle: h.deleteRun, Auth: writeActions},
		{Method: http.MethodGet, Pattern: base + "/runs/{run_id}/attempts/{attempt_number}", Handle: h.getAttempt, Auth: readActions},
		{Method: http.MethodGet, Pattern: base + "/runs/{run_id}/attempts/{attempt_number}/jobs", Handle: h.listAttemptJobs, Auth: readActions},
		{Method: http.MethodGet, Pattern: base + "/runs/{run_id}/attempts/{attempt_number}/logs", Handle: h.attemptLogs, Auth: readActions},
		{Method: http.MethodPost, Pattern: base + "/runs/{run_id}/cancel", Handle: h.cancel, Auth: writeActions},
		{Method: http.MethodPost, Pattern: base + "/runs/{run_id}/force-cancel", Handle: h.cancel, Auth: writeActions},
		{Method: http.MethodPost, Pattern: base + "/runs/{run_id}/approve", Handle: h.approve, Auth: writeActions},
		{Method: http.MethodGet, Pattern: base + "/runs/{run_id}/jobs", Handle: h.listRunJobs, Auth: readActions},
		{Method: http.MethodGet, Pattern: base + "/runs/{run_id}/logs", Handle: h.runLogs, Auth: readActions},
		{Method: http.MethodGet, Pattern: base + "/runs/{run_id}/artifacts", Handle: h.listRunArtifacts, Auth: readActions},
		{Method: http.MethodDelete, Pattern: base + "/runs/{run_id}/logs", Handle: h.deleteLogs, Auth: writeActions},
		{Method: http.MethodPost, Pattern: base + "/runs/{run_id}/rerun", Handle: h.rerun, Auth: writeActions},
		{Method: http.MethodPost, Pattern: base + "/runs/{run_id}/rerun-failed-jobs", Handle: h.rerunFailed, Auth: writeActions},
		{Method: http.MethodGet, Pattern: base + "/artifacts", Handle: h.listArtifacts, Auth: readActions},
		{Method: http.MethodGet, Pattern: base + "/artifacts/{artifact_id}", Handle: h.getArtifact, Auth: readActions},
		{Method: http.MethodDelete, Pattern: base + "/artifacts/{artifact_id}", Handle: h.deleteArtifact, Auth: writeActions},
		{Method: http.MethodGet, Pattern: base + "/artifacts/{artifact_id}/{archive_format}", Handle: h.downloadArtifact, Auth: readActions},
		{Method: http.MethodGet, Pattern: base + "/caches", Handle: h.listCaches, Auth: readActions},
		{Method: http.MethodDelete, Pattern: base + "/caches", Handle: h.deleteCachesByKey, Auth: writeActions},
		{Method: http.MethodDelete, Pattern: base + "/caches/{cache_id}", Handle: h.deleteCache, Auth: writeActions},
		{Method: http.MethodGet, Pattern: base + "/cache/usage", Handle: h.cacheUsage, Auth: readActions},
		{Method: http.MethodGet, Pattern: base + "/jobs/{job_id}", Handle: h.getJob, Auth: readActions},
		{Method: http.MethodGet, Pattern: base + "/jobs/{job_id}/logs", Handle: h.jobLogs, Auth: readActions},
		{Method: http.MethodPost, Pattern: base + "/jobs/{job_id}/rerun", Handle: h.rerunJob, Auth: writeActions},
	}
	routes = append(routes, h.cachePolicyRoutes()...)
	return append(routes, h.cacheUsageRoutes()...)
}

// Register mounts what is not the API's: the results service a job's
// steps call with their runtime token (artifacts and caches, twirp JSON
// at the server's root, as ACTIONS_RESULTS_URL names it) and the signed
// upload addresses of artifacts and caches, and the cache service's v1
// protocol (runtime_caches_v1.go), and the registered runners' protocol
// (remote.go, internal/actions/runnerproto).
func (h *Handler) Register(mux interface{ Handle(string, http.Handler) }) {
	for path, methods := range map[string]map[string]twirpMethod{artifactServicePath: h.Service.artifactMethods(),
		cacheServicePath: h.Service.cacheMethods()} {
		for name, m := range methods {
			mux.Handle("POST "+path+name, h.Service.serveTwirp(m))
		}
	}
	for kind := range uploadKinds {
		mux.Handle("PUT "+uploadPathPrefix+kind+"/{id}", http.HandlerFunc(h.Service.serveUpload))
	}
	h.Service.registerCacheV1(mux)
	h.Service.registerOIDC(mux)           // the jobs' OIDC tokens, their issuer's discovery and keys (oidc.go)
	h.Service.registerRunnerProtocol(mux) // the registered runners' jobs (remote.go)
}

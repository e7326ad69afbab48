package codescanning

import (
	"errors"
	"net/http"
	"strconv"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// enabledRepo is the request's repository, or the platform's 403 for one
// without advanced security.
func enabledRepo(r *http.Request) (*repos.Repository, error) {
	repo := repos.From(r.Context())
	if !Enabled(repo) {
		return nil, apierr.Forbidden("Advanced Security must be enabled for this repository to use code scanning.")
	}
	return repo, nil
}

func (h *Handler) view(r *http.Request, ids ...*int64) (view, error) {
	v := view{base: httpapi.BaseURL(r.Context()), users: map[int64]*accounts.Account{}}
	var want []int64
	for _, id := range ids {
		if id != nil {
			want = append(want, *id)
		}
	}
	if len(want) == 0 {
		return v, nil
	}
	users, err := accounts.ByIDs(r.Context(), h.Service.DB, want)
	v.users = users
	return v, err
}

// upload serves POST .../code-scanning/sarifs: 202 with the upload's id
// and status URL.
func (h *Handler) upload(w http.ResponseWriter, r *http.Request) error {
	repo, err := enabledRepo(r)
	if err != nil {
		return err
	}
	var body UploadRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	uploader, err := accounts.ByID(r.Context(), h.Service.DB, auth.PrincipalFrom(r.Context()).UserID())
	if err != nil {
		return err
	}
	u, err := h.Service.Upload(r.Context(), repo, body, uploader)
	if err != nil {
		return err
	}
	v := view{base: httpapi.BaseURL(r.Context())}
	httpapi.WriteJSON(w, http.StatusAccepted, map[string]string{"id": u.ID, "url": v.api(repo) + "/code-scanning/sarifs/" + u.ID})
	return nil
}

// getUpload serves GET .../code-scanning/sarifs/{sarif_id}.
func (h *Handler) getUpload(w http.ResponseWriter, r *http.Request) error {
	repo, err := enabledRepo(r)
	if err != nil {
		return err
	}
	u, err := uploadByID(r.Context(), h.Service.DB, repo.ID, r.PathValue("sarif_id"))
	if errors.Is(err, store.ErrNotFound) {
		return apierr.NotFound()
	}
	if err != nil {
		return err
	}
	out := map[string]any{"processing_status": u.Status}
	if u.Status == "complete" {
		out["analyses_url"] = view{base: httpapi.BaseURL(r.Context())}.api(repo) + "/code-scanning/analyses?sarif_id=" + u.ID
	}
	if u.Status == "failed" {
		out["errors"] = u.Errors
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// direction reads direction (desc by default; 422 for another value, as
// every bad list parameter).
func direction(r *http.Request) (ascending bool, err error) {
	switch r.URL.Query().Get("direction") {
	case "", "desc":
		return false, nil
	case "asc":
		return true, nil
	}
	return false, apierr.Invalid("CodeScanningAlert", "direction", apierr.CodeInvalid)
}

// listAnalyses serves GET .../code-scanning/analyses (tool_name,
// tool_guid, ref, sarif_id, direction; newest first).
func (h *Handler) listAnalyses(w http.ResponseWriter, r *http.Request) error {
	repo, err := enabledRepo(r)
	if err != nil {
		return err
	}
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	if s := q.Get("sort"); s != "" && s != "created" {
		return apierr.Invalid("CodeScanningAnalysis", "sort", apierr.CodeInvalid)
	}
	if q.Has("pr") {
		return apierr.Custom("CodeScanningAnalysis", "pr", "The pr filter is not supported here; use ref=refs/pull/<number>/merge.")
	}
	f := AnalysisFilter{ToolName: q.Get("tool_name"), ToolGUID: q.Get("tool_guid"), Ref: fullRef(q.Get("ref")), SARIFID: q.Get("sarif_id")}
	if f.Ascending, err = direction(r); err != nil {
		return err
	}
	list, more, err := listAnalyses(r.Context(), h.Service.DB, repo.ID, f, page.Limit(), page.Offset())
	if err != nil {
		return err
	}
	v := view{base: httpapi.BaseURL(r.Context())}
	out := make([]analysisJSON, 0, len(list))
	for _, an := range list {
		out = append(out, v.analysis(repo, an))
	}
	httpapi.SetLinksMore(w, r, page, more)
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// fullRef reads a ref filter: a branch name means refs/heads/<name>.
func fullRef(ref string) string {
	if ref == "" || len(ref) > 5 && ref[:5] == "refs/" {
		return ref
	}
	return "refs/heads/" + ref
}

func (h *Handler) analysis(r *http.Request) (*repos.Repository, *Analysis, error) {
	repo, err := enabledRepo(r)
	if err != nil {
		return nil, nil, err
	}
	id, err := strconv.ParseInt(r.PathValue("analysis_id"), 10, 64)
	if err != nil {
		return nil, nil, apierr.NotFound()
	}
	an, err := analysisByID(r.Context(), h.Service.DB, repo.ID, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, apierr.NotFound()
	}
	return repo, an, err
}

// getAnalysis serves GET .../code-scanning/analyses/{analysis_id}.
func (h *Handler) getAnalysis(w http.ResponseWriter, r *http.Request) error {
	repo, an, err := h.analysis(r)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, view{base: httpapi.BaseURL(r.Context())}.analysis(repo, an))
	return nil
}

// deleteAnalysis serves DELETE .../code-scanning/analyses/{analysis_id}
// (confirm_delete for the last of a set): 200 with the URLs that delete
// the analysis before it, null when there is none.
func (h *Handler) deleteAnalysis(w http.ResponseWriter, r *http.Request) error {
	repo, an, err := h.analysis(r)
	if err != nil {
		return err
	}
	prev, err := h.Service.DeleteAnalysis(r.Context(), repo, an.ID, r.URL.Query().Has("confirm_delete"))
	if err != nil {
		return err
	}
	out := map[string]*string{"next_analysis_url": nil, "confirm_delete_url": nil}
	if prev != nil {
		next := view{base: httpapi.BaseURL(r.Context())}.analysis(repo, prev).URL
		confirm := next + "?confirm_delete"
		out["next_analysis_url"], out["confirm_delete_url"] = &next, &confirm
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// alertFilter reads an alert list's query (422 on unknown values, as the
// platform answers a list's bad parameters).
func alertFilter(r *http.Request, org bool) (AlertFilter, error) {
	q := r.URL.Query()
	f := AlertFilter{ToolName: q.Get("tool_name"), ToolGUID: q.Get("tool_guid"), State: q.Get("state"), Severity: q.Get("severity"),
		Sort: q.Get("sort")}
	if !org {
		f.Ref = fullRef(q.Get("ref"))
	}
	var fields apierr.Fields
	switch f.State {
	case "", StateOpen, StateDismissed, StateFixed, "closed":
	default:
		fields.Add("CodeScanningAlert", "state", apierr.CodeInvalid)
	}
	switch f.Severity {
	case "", "critical", "high", "medium", "low", "warning", "note", "error":
	default:
		fields.Add("CodeScanningAlert", "severity", apierr.CodeInvalid)
	}
	switch {
	case f.Sort == "" || f.Sort == "created" || f.Sort == "updated":
	case f.Sort == "number" && !org:
	default:
		fields.Add("CodeScanningAlert", "sort", apierr.CodeInvalid)
	}
	for _, name := range []string{"before", "after", "pr", "assignees"} {
		if q.Has(name) {
			fields.Addf("CodeScanningAlert", name, "The %s parameter is not supported here.", name)
		}
	}
	if err := fields.Err(); err != nil {
		return f, err
	}
	var err error
	f.Ascending, err = direction(r)
	return f, err
}

// listRepoAlerts serves GET .../code-scanning/alerts.
func (h *Handler) listRepoAlerts(w http.ResponseWriter, r *http.Request) error {
	repo, err := enabledRepo(r)
	if err != nil {
		return err
	}
	return h.listAlerts(w, r, AlertScope{RepoID: repo.ID}, false)
}

// listOrgAlerts serves GET /orgs/{org}/code-scanning/alerts, for owners.
func (h *Handler) listOrgAlerts(w http.ResponseWriter, r *http.Request) error {
	if auth.RoleFrom(r.Context()) < auth.RoleAdmin {
		return apierr.NotFound()
	}
	return h.listAlerts(w, r, AlertScope{OrgID: accounts.OrgFrom(r.Context()).ID}, true)
}

func (h *Handler) listAlerts(w http.ResponseWriter, r *http.Request, s AlertScope, org bool) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	f, err := alertFilter(r, org)
	if err != nil {
		return err
	}
	list, more, err := listAlerts(r.Context(), h.Service.DB, s, f, page.Limit(), page.Offset())
	if err != nil {
		return err
	}
	var ids []*int64
	for _, a := range list {
		ids = append(ids, a.DismissedByID)
	}
	v, err := h.view(r, ids...)
	if err != nil {
		return err
	}
	cache := map[int64]*repos.Repository{}
	out := make([]alertJSON, 0, len(list))
	for _, a := range list {
		repo := repos.From(r.Context())
		if repo == nil || repo.ID != a.RepoID {
			if cache[a.RepoID] == nil {
				if cache[a.RepoID], err = repos.ByID(r.Context(), h.Service.DB, a.RepoID); err != nil {
					return err
				}
			}
			repo = cache[a.RepoID]
		}
		out = append(out, v.alert(repo, a, org))
	}
	httpapi.SetLinksMore(w, r, page, more)
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h *Handler) alert(r *http.Request) (*repos.Repository, *Alert, error) {
	repo, err := enabledRepo(r)
	if err != nil {
		return nil, nil, err
	}
	number, err := httpapi.PathInt64(r, "alert_number")
	if err != nil {
		return nil, nil, apierr.NotFound()
	}
	a, err := alertByNumber(r.Context(), h.Service.DB, repo.ID, number)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, apierr.NotFound()
	}
	return repo, a, err
}

// getAlert serves GET .../code-scanning/alerts/{alert_number}.
func (h *Handler) getAlert(w http.ResponseWriter, r *http.Request) error {
	repo, a, err := h.alert(r)
	if err != nil {
		return err
	}
	v, err := h.view(r, a.DismissedByID)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, v.alert(repo, a, false))
	return nil
}

// updateAlert serves PATCH .../code-scanning/alerts/{alert_number}.
func (h *Handler) updateAlert(w http.ResponseWriter, r *http.Request) error {
	repo, a, err := h.alert(r)
	if err != nil {
		return err
	}
	var body Change
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	actor, err := accounts.ByID(r.Context(), h.Service.DB, auth.PrincipalFrom(r.Context()).UserID())
	if err != nil {
		return err
	}
	if a, err = h.Service.Update(r.Context(), repo, a.Number, body, actor); err != nil {
		return err
	}
	v, err := h.view(r, a.DismissedByID)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, v.alert(repo, a, false))
	return nil
}

// listInstances serves GET .../alerts/{alert_number}/instances (ref).
func (h *Handler) listInstances(w http.ResponseWriter, r *http.Request) error {
	repo, a, err := h.alert(r)
	if err != nil {
		return err
	}
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	if r.URL.Query().Has("pr") {
		return apierr.Custom("CodeScanningAlertInstance", "pr", "The pr filter is not supported here; use ref=refs/pull/<number>/merge.")
	}
	list, more, err := listInstances(r.Context(), h.Service.DB, a.ID, fullRef(r.URL.Query().Get("ref")), page.Limit(), page.Offset())
	if err != nil {
		return err
	}
	v := view{base: httpapi.BaseURL(r.Context())}
	out := make([]instanceJSON, 0, len(list))
	for _, in := range list {
		out = append(out, v.instance(repo, in, a))
	}
	httpapi.SetLinksMore(w, r, page, more)
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

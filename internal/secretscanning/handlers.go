package secretscanning

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// errDisabled is the platform's 404 for a repository without secret
// scanning.
func errDisabled() error {
	return apierr.New(http.StatusNotFound, "Secret scanning is disabled on this repository.")
}

// enabledRepo is the request's repository, or the 404 of a repository
// with secret scanning off.
// Only administrators see alerts: the others get the platform's 404.
func enabledRepo(r *http.Request) (*repos.Repository, error) {
	repo := repos.From(r.Context())
	if auth.RoleFrom(r.Context()) < auth.RoleAdmin {
		return nil, apierr.NotFound()
	}
	if !Enabled(repo) {
		return nil, errDisabled()
	}
	return repo, nil
}

// parseFilter reads a list's query: state, secret_type, resolution,
// sort, direction (422 on values the platform does not know), and the
// filters on what forgeapi never records (validity other than unknown,
// is_publicly_leaked, is_multi_repo), which then select nothing.
func parseFilter(r *http.Request) (f Filter, none bool, err error) {
	q := r.URL.Query()
	var fields apierr.Fields
	switch f.State = q.Get("state"); f.State {
	case "", StateOpen, StateResolved:
	default:
		fields.Add("SecretScanningAlert", "state", apierr.CodeInvalid)
	}
	f.SecretTypes = commaList(q.Get("secret_type"))
	f.Resolutions = commaList(q.Get("resolution"))
	for _, res := range f.Resolutions {
		if !listResolutions[res] {
			fields.Add("SecretScanningAlert", "resolution", apierr.CodeInvalid)
			break
		}
	}
	switch f.Sort = q.Get("sort"); f.Sort {
	case "", "created", "updated":
	default:
		fields.Add("SecretScanningAlert", "sort", apierr.CodeInvalid)
	}
	switch q.Get("direction") {
	case "", "desc":
	case "asc":
		f.Ascending = true
	default:
		fields.Add("SecretScanningAlert", "direction", apierr.CodeInvalid)
	}
	if validity := commaList(q.Get("validity")); len(validity) > 0 {
		none = true
		for _, v := range validity {
			switch v {
			case "unknown":
				none = false
			case "active", "inactive":
			default:
				fields.Add("SecretScanningAlert", "validity", apierr.CodeInvalid)
			}
		}
	}
	for _, name := range []string{"is_publicly_leaked", "is_multi_repo"} {
		on, err := httpapi.QueryBool(r, name, false)
		if err != nil {
			return f, false, err
		}
		none = none || on
	}
	if q.Has("before") || q.Has("after") {
		fields.Addf("SecretScanningAlert", "before", "Cursor paging (before, after) is not supported here; use page and per_page.")
	}
	return f, none, fields.Err()
}

func commaList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// listRepo serves GET /repos/{owner}/{repo}/secret-scanning/alerts.
func (h *Handler) listRepo(w http.ResponseWriter, r *http.Request) error {
	repo, err := enabledRepo(r)
	if err != nil {
		return err
	}
	return h.list(w, r, Scope{RepoID: repo.ID}, false)
}

// listOrg serves GET /orgs/{org}/secret-scanning/alerts: the alerts of
// the organization's repositories with secret scanning on, for its
// owners (members get the platform's 404).
func (h *Handler) listOrg(w http.ResponseWriter, r *http.Request) error {
	if auth.RoleFrom(r.Context()) < auth.RoleAdmin {
		return apierr.NotFound()
	}
	return h.list(w, r, Scope{OrgID: accounts.OrgFrom(r.Context()).ID}, true)
}

// listEnterprise serves GET /enterprises/{enterprise}/secret-scanning/alerts:
// the alerts of the repositories of the enterprise's organizations.
func (h *Handler) listEnterprise(w http.ResponseWriter, r *http.Request) error {
	return h.list(w, r, Scope{EnterpriseID: accounts.EnterpriseFrom(r.Context()).ID}, true)
}

// list writes a page of the scope's alerts; withRepo adds each alert's
// repository (the organization's and enterprise's lists).
func (h *Handler) list(w http.ResponseWriter, r *http.Request, s Scope, withRepo bool) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	f, none, err := parseFilter(r)
	if err != nil {
		return err
	}
	hide, err := httpapi.QueryBool(r, "hide_secret", false)
	if err != nil {
		return err
	}
	out := []alertJSON{}
	var alerts []*Alert
	more := false
	if !none {
		if alerts, more, err = listAlerts(r.Context(), h.Service.DB, s, f, page.Limit(), page.Offset()); err != nil {
			return err
		}
	}
	v, err := h.view(r, alerts, hide)
	if err != nil {
		return err
	}
	repoCache := map[int64]*repos.Repository{}
	for _, a := range alerts {
		repo, err := h.repo(r.Context(), repoCache, a.RepoID)
		if err != nil {
			return err
		}
		j := v.alert(repo, a)
		if withRepo {
			full := repos.ToJSON(repos.URLsOf(r.Context()), repo, repos.Stats{}, auth.RoleNone)
			simple := full.Simple()
			j.Repository = &simple
		}
		out = append(out, j)
	}
	httpapi.SetLinksMore(w, r, page, more)
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h *Handler) repo(ctx context.Context, cache map[int64]*repos.Repository, id int64) (*repos.Repository, error) {
	if r := repos.From(ctx); r != nil && r.ID == id {
		return r, nil
	}
	if cache[id] == nil {
		r, err := repos.ByID(ctx, h.Service.DB, id)
		if err != nil {
			return nil, err
		}
		cache[id] = r
	}
	return cache[id], nil
}

// view loads the accounts that resolved the alerts.
func (h *Handler) view(r *http.Request, alerts []*Alert, hide bool) (view, error) {
	var ids []int64
	for _, a := range alerts {
		if a.ResolvedByID != nil {
			ids = append(ids, *a.ResolvedByID)
		}
	}
	v := view{base: httpapi.BaseURL(r.Context()), users: map[int64]*accounts.Account{}, hide: hide}
	if len(ids) == 0 {
		return v, nil
	}
	users, err := accounts.ByIDs(r.Context(), h.Service.DB, ids)
	v.users = users
	return v, err
}

// alert is the alert {alert_number} of the request's repository.
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

// get serves GET .../secret-scanning/alerts/{alert_number}.
func (h *Handler) get(w http.ResponseWriter, r *http.Request) error {
	repo, a, err := h.alert(r)
	if err != nil {
		return err
	}
	hide, err := httpapi.QueryBool(r, "hide_secret", false)
	if err != nil {
		return err
	}
	v, err := h.view(r, []*Alert{a}, hide)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, v.alert(repo, a))
	return nil
}

// updateRequest is the body of PATCH .../alerts/{alert_number}.
type updateRequest struct {
	State             *string `json:"state"`
	Resolution        *string `json:"resolution"`
	ResolutionComment *string `json:"resolution_comment"`
}

// update serves PATCH .../secret-scanning/alerts/{alert_number}: state
// resolved with a resolution (and a comment), or open again.
func (h *Handler) update(w http.ResponseWriter, r *http.Request) error {
	repo, a, err := h.alert(r)
	if err != nil {
		return err
	}
	var body updateRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	actor, err := accounts.ByID(r.Context(), h.Service.DB, auth.PrincipalFrom(r.Context()).UserID())
	if err != nil {
		return err
	}
	a, err = h.Service.Update(r.Context(), repo, a.Number, Change(body), actor)
	if err != nil {
		return err
	}
	v, err := h.view(r, []*Alert{a}, false)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, v.alert(repo, a))
	return nil
}

// locations serves GET .../alerts/{alert_number}/locations, oldest first.
func (h *Handler) locations(w http.ResponseWriter, r *http.Request) error {
	repo, a, err := h.alert(r)
	if err != nil {
		return err
	}
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	list, more, err := listLocations(r.Context(), h.Service.DB, a.ID, page.Limit(), page.Offset())
	if err != nil {
		return err
	}
	v := view{base: httpapi.BaseURL(r.Context())}
	out := make([]locationJSON, 0, len(list))
	for _, l := range list {
		out = append(out, locationJSON{Type: "commit", Details: v.location(repo, l)})
	}
	httpapi.SetLinksMore(w, r, page, more)
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

package dependabot

import (
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

// check serves GET .../vulnerability-alerts: 204 when on, 404 when off.
func (h *Handler) check(w http.ResponseWriter, r *http.Request) error {
	on, err := h.Service.Enabled(r.Context(), repos.From(r.Context()))
	if err != nil {
		return err
	}
	if !on {
		return apierr.NotFound()
	}
	httpapi.NoContent(w)
	return nil
}

func (h *Handler) actor(r *http.Request) (*accounts.Account, error) {
	return accounts.ByID(r.Context(), h.Service.DB, auth.PrincipalFrom(r.Context()).UserID())
}

// enable serves PUT .../vulnerability-alerts.
func (h *Handler) enable(w http.ResponseWriter, r *http.Request) error {
	actor, err := h.actor(r)
	if err != nil {
		return err
	}
	if err := h.Service.SetEnabled(r.Context(), repos.From(r.Context()), true, actor); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

// disable serves DELETE .../vulnerability-alerts.
func (h *Handler) disable(w http.ResponseWriter, r *http.Request) error {
	actor, err := h.actor(r)
	if err != nil {
		return err
	}
	if err := h.Service.SetEnabled(r.Context(), repos.From(r.Context()), false, actor); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

// enabledRepo is the request's repository, or the platform's 403 for one
// with alerts off.
func (h *Handler) enabledRepo(r *http.Request) (*repos.Repository, error) {
	repo := repos.From(r.Context())
	on, err := h.Service.Enabled(r.Context(), repo)
	if err != nil {
		return nil, err
	}
	if !on {
		return nil, apierr.Forbidden("Dependabot alerts are disabled for this repository.")
	}
	return repo, nil
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

// filter reads a list's query (422, in the platform's simple form, on values the platform does not
// know, and on what forgeapi does not serve: cursors, epss, has,
// assignee, classification other than general).
func filter(r *http.Request, withManifest bool) (Filter, error) {
	q := r.URL.Query()
	f := Filter{States: commaList(q.Get("state")), Severities: commaList(q.Get("severity")), Ecosystems: commaList(q.Get("ecosystem")),
		Packages: commaList(q.Get("package")), Scope: q.Get("scope"), Sort: q.Get("sort")}
	if withManifest {
		f.Manifests = commaList(q.Get("manifest"))
	}
	var fields apierr.Fields
	for _, s := range f.States {
		if s != "open" && s != "fixed" && s != "dismissed" && s != "auto_dismissed" {
			fields.Add("DependabotAlert", "state", apierr.CodeInvalid)
			break
		}
	}
	for _, s := range f.Severities {
		if s != "low" && s != "medium" && s != "high" && s != "critical" {
			fields.Add("DependabotAlert", "severity", apierr.CodeInvalid)
			break
		}
	}
	if f.Scope != "" && f.Scope != "runtime" && f.Scope != "development" {
		fields.Add("DependabotAlert", "scope", apierr.CodeInvalid)
	}
	if f.Sort != "" && f.Sort != "created" && f.Sort != "updated" {
		fields.Add("DependabotAlert", "sort", apierr.CodeInvalid)
	}
	switch q.Get("direction") {
	case "", "desc":
	case "asc":
		f.Ascending = true
	default:
		fields.Add("DependabotAlert", "direction", apierr.CodeInvalid)
	}
	for _, name := range []string{"before", "after", "first", "last", "epss_percentage", "has", "assignee", "relationship", "runtime_risk"} {
		if q.Has(name) {
			fields.Addf("DependabotAlert", name, "The %s parameter is not supported here.", name)
		}
	}
	if c := q.Get("classification"); c != "" && c != "general" {
		fields.Addf("DependabotAlert", "classification", "Only the general classification is served here.")
	}
	return f, fields.Err()
}

// listRepo serves GET .../dependabot/alerts.
func (h *Handler) listRepo(w http.ResponseWriter, r *http.Request) error {
	repo, err := h.enabledRepo(r)
	if err != nil {
		return err
	}
	return h.list(w, r, Scope{RepoID: repo.ID}, false)
}

// listOrg serves GET /orgs/{org}/dependabot/alerts.
func (h *Handler) listOrg(w http.ResponseWriter, r *http.Request) error {
	return h.list(w, r, Scope{OrgID: accounts.OrgFrom(r.Context()).ID}, true)
}

// listEnterprise serves GET /enterprises/{enterprise}/dependabot/alerts.
func (h *Handler) listEnterprise(w http.ResponseWriter, r *http.Request) error {
	return h.list(w, r, Scope{EnterpriseID: accounts.EnterpriseFrom(r.Context()).ID}, true)
}

func (h *Handler) list(w http.ResponseWriter, r *http.Request, s Scope, withRepo bool) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	f, err := filter(r, !withRepo)
	if err != nil {
		return apierr.Simple(err)
	}
	alerts, more, err := listAlerts(r.Context(), h.Service.DB, s, f, page.Limit(), page.Offset())
	if err != nil {
		return err
	}
	v, err := h.view(r, alerts...)
	if err != nil {
		return err
	}
	cache := map[int64]*repos.Repository{}
	out := make([]alertJSON, 0, len(alerts))
	for _, a := range alerts {
		repo := repos.From(r.Context())
		if repo == nil || repo.ID != a.RepoID {
			if cache[a.RepoID] == nil {
				if cache[a.RepoID], err = repos.ByID(r.Context(), h.Service.DB, a.RepoID); err != nil {
					return err
				}
			}
			repo = cache[a.RepoID]
		}
		j, err := v.alert(repo, a, withRepo)
		if err != nil {
			return err
		}
		out = append(out, j)
	}
	httpapi.SetLinksMore(w, r, page, more)
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h *Handler) view(r *http.Request, alerts ...*Alert) (view, error) {
	v := view{base: httpapi.BaseURL(r.Context()), users: map[int64]*accounts.Account{}}
	var ids []int64
	for _, a := range alerts {
		if a.DismissedByID != nil {
			ids = append(ids, *a.DismissedByID)
		}
	}
	if len(ids) == 0 {
		return v, nil
	}
	users, err := accounts.ByIDs(r.Context(), h.Service.DB, ids)
	v.users = users
	return v, err
}

func (h *Handler) alert(r *http.Request) (*repos.Repository, *Alert, error) {
	repo, err := h.enabledRepo(r)
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

// get serves GET .../dependabot/alerts/{alert_number}.
func (h *Handler) get(w http.ResponseWriter, r *http.Request) error {
	repo, a, err := h.alert(r)
	if err != nil {
		return err
	}
	return h.write(w, r, repo, a)
}

func (h *Handler) write(w http.ResponseWriter, r *http.Request, repo *repos.Repository, a *Alert) error {
	v, err := h.view(r, a)
	if err != nil {
		return err
	}
	j, err := v.alert(repo, a, false)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, j)
	return nil
}

// update serves PATCH .../dependabot/alerts/{alert_number}.
func (h *Handler) update(w http.ResponseWriter, r *http.Request) error {
	repo, a, err := h.alert(r)
	if err != nil {
		return err
	}
	var body Change
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	actor, err := h.actor(r)
	if err != nil {
		return err
	}
	if a, err = h.Service.Update(r.Context(), repo, a.Number, body, actor); err != nil {
		return apierr.Simple(err) // the platform's errors[] here are strings
	}
	return h.write(w, r, repo, a)
}

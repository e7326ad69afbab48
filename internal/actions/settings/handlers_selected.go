package settings

import (
	"context"
	"errors"
	"net/http"

	"forgeapi/internal/accounts"

	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// listSelected answers GET .../{name}/repositories of an organization's
// value: total_count and a page of the selected repositories.
func (h *Handler) listSelected(kind, param string) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		page, err := httpapi.ParsePage(r)
		if err != nil {
			return err
		}
		v, _, err := h.lookup(r, kind, orgPlaceOf, param)
		if err != nil {
			return err
		}
		ids, total, err := h.Service.Selected(r.Context(), v, page.Limit(), page.Offset())
		if err != nil {
			return err
		}
		return h.writeRepositoryPage(w, r, page, ids, total)
	}
}

// setSelected answers PUT .../{name}/repositories: 204; ids that are not
// the organization's repositories are a 422, a value whose visibility is
// not selected a 409.
func (h *Handler) setSelected(kind, param string) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var body struct {
			Selected *repoIDs `json:"selected_repository_ids"`
		}
		if err := httpapi.DecodeJSON(r, &body); err != nil {
			return err
		}
		v, _, err := h.lookup(r, kind, orgPlaceOf, param)
		if err != nil {
			return err
		}
		if body.Selected == nil {
			return apierr.Invalid("Secret", "selected_repository_ids", apierr.CodeMissingField)
		}
		if err := h.checkOrgRepos(r, v, *body.Selected...); err != nil {
			return err
		}
		if err := h.Service.SetSelected(r.Context(), v, *body.Selected); err != nil {
			return err
		}
		httpapi.NoContent(w)
		return nil
	}
}

// checkOrgRepos refuses ids that are not repositories of v's
// organization with a 422.
func (h *Handler) checkOrgRepos(r *http.Request, v *Value, ids ...int64) error {
	return h.checkRepos(r, v.Place.ID, ids...)
}

// addSelected answers PUT .../{name}/repositories/{repository_id}: 204,
// 409 unless the value's visibility is selected.
func (h *Handler) addSelected(kind, param string) httpapi.HandlerFunc {
	return h.changeSelected(kind, param, (*Service).AddSelected)
}

// removeSelected answers DELETE .../{name}/repositories/{repository_id}:
// 204, 409 unless the value's visibility is selected.
func (h *Handler) removeSelected(kind, param string) httpapi.HandlerFunc {
	return h.changeSelected(kind, param, (*Service).RemoveSelected)
}

// changeSelected adds or removes the route's {repository_id}.
func (h *Handler) changeSelected(kind, param string, change func(*Service, context.Context, *Value, int64) error) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := httpapi.PathInt64(r, "repository_id")
		if err != nil {
			return err
		}
		v, _, err := h.lookup(r, kind, orgPlaceOf, param)
		if err != nil {
			return err
		}
		if err := h.checkOrgRepos(r, v, id); err != nil {
			return err
		}
		if err := change(h.Service, r.Context(), v, id); err != nil {
			return err
		}
		httpapi.NoContent(w)
		return nil
	}
}

// checkRepos refuses ids that are not repositories of the organization
// with a 422.
func (h *Handler) checkRepos(r *http.Request, orgID int64, ids ...int64) error {
	missing, err := h.Service.notOrgRepositories(r.Context(), orgID, ids)
	if err != nil {
		return err
	}
	var f apierr.Fields
	for _, id := range missing {
		f.Addf("Repository", "selected_repository_ids", "Repository %d is not a repository of the organization", id)
	}
	return f.Err()
}

// writeRepositoryPage answers 200 with a page of selected repositories
// (ids, of total), their Link header and total_count.
func (h *Handler) writeRepositoryPage(w http.ResponseWriter, r *http.Request, page httpapi.Page, ids []int64, total int) error {
	out, err := h.repositoriesJSON(r, ids)
	if err != nil {
		return err
	}
	httpapi.SetLinks(w, r, page, total)
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"total_count": total, "repositories": out})
	return nil
}

// repositoriesJSON renders repositories by id, leaving out those gone.
func (h *Handler) repositoriesJSON(r *http.Request, ids []int64) ([]repos.JSON, error) {
	out := make([]repos.JSON, 0, len(ids))
	for _, id := range ids {
		repo, err := repos.ByID(r.Context(), h.Service.DB, id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		st, err := repos.StatsOf(r.Context(), h.Service.DB, id)
		if err != nil {
			return nil, err
		}
		out = append(out, repos.ToJSON(repos.URLsOf(r.Context()), repo, st, auth.RoleAdmin))
	}
	return out, nil
}

// listOrgRepos answers GET of the organization's repositories selected
// in sel: a page of them and total_count.
func (h *Handler) listOrgRepos(sel selection) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		page, err := httpapi.ParsePage(r)
		if err != nil {
			return err
		}
		org := accounts.OrgFrom(r.Context())
		ids, total, err := sel.page(r.Context(), h.Service.DB, org.ID, page.Limit(), page.Offset())
		if err != nil {
			return err
		}
		return h.writeRepositoryPage(w, r, page, ids, total)
	}
}

// setOrgRepos answers PUT of the organization's repositories selected in
// sel: selected_repository_ids (the organization's own, checked) replace
// the selection; resource names the validation errors' resource. 204.
func (h *Handler) setOrgRepos(sel selection, resource string) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var body struct {
			Selected *repoIDs `json:"selected_repository_ids"`
		}
		if err := httpapi.DecodeJSON(r, &body); err != nil {
			return err
		}
		if body.Selected == nil {
			return apierr.Invalid(resource, "selected_repository_ids", apierr.CodeMissingField)
		}
		org := accounts.OrgFrom(r.Context())
		if err := h.checkRepos(r, org.ID, *body.Selected...); err != nil {
			return err
		}
		if err := sel.replace(r.Context(), h.Service.DB, org.ID, *body.Selected); err != nil {
			return err
		}
		httpapi.NoContent(w)
		return nil
	}
}

// changeOrgRepo answers PUT (add) and DELETE (remove) of the route's
// {repository_id} in the organization's selection sel: 204.
func (h *Handler) changeOrgRepo(sel selection, add bool) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := httpapi.PathInt64(r, "repository_id")
		if err != nil {
			return err
		}
		org := accounts.OrgFrom(r.Context())
		if err := h.checkRepos(r, org.ID, id); err != nil {
			return err
		}
		change := sel.remove
		if add {
			change = sel.add
		}
		if err := change(r.Context(), h.Service.DB, org.ID, id); err != nil {
			return err
		}
		httpapi.NoContent(w)
		return nil
	}
}

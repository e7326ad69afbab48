package repos

import (
	"context"
	"net/http"

	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/store"
)

// PublicSince returns at most limit public repositories with an id after
// since, in the order of their ids.
func PublicSince(ctx context.Context, q store.Q, since int64, limit int) ([]*Repository, error) {
	return list(ctx, q, `SELECT `+repoColumns+repoFrom+`WHERE NOT r.private AND r.id > $1 ORDER BY r.id LIMIT $2`, since, limit)
}

// listPublic serves GET /repositories: every public repository of the
// server in the order of their ids, from the id after `since`, per_page
// of them, with a Link to the next page (since the page's last id);
// `visibility` is `all` or `public` (forgeapi has no internal
// repositories, so both list the public ones).
func (h *Handler) listPublic(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	since, err := httpapi.ParseSince(r)
	if err != nil {
		return err
	}
	if v := r.URL.Query().Get("visibility"); v != "" && v != "all" && v != "public" {
		return apierr.Invalid("", "visibility", apierr.CodeInvalid)
	}
	ctx := r.Context()
	list, err := PublicSince(ctx, h.Service.DB, since, page.PerPage)
	if err != nil {
		return err
	}
	p := auth.PrincipalFrom(ctx)
	urls := URLsOf(ctx)
	out := make([]any, 0, len(list))
	for _, repo := range list {
		role := auth.RoleNone
		if !p.Anonymous() {
			if role, err = h.roleOf(ctx, p, repo); err != nil {
				return err
			}
		}
		st, err := h.Service.Stats(ctx, repo.ID)
		if err != nil {
			return err
		}
		j := ToJSON(urls, repo, st, role)
		out = append(out, &j)
	}
	if len(list) > 0 {
		httpapi.SetNextSince(w, r, page, len(list), list[len(list)-1].ID)
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

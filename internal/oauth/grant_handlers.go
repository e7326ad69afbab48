package oauth

import (
	"net/http"

	"forgeapi/internal/accounts"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
)

// caller returns the authenticated user's account.
func (h *Handler) caller(r *http.Request) (*accounts.Account, error) {
	return accounts.ByID(r.Context(), h.Service.DB, auth.PrincipalFrom(r.Context()).UserID())
}

// listFilter reads the page and the client_id filter of a list.
func listFilter(r *http.Request) (httpapi.Page, Filter, error) {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return page, Filter{}, err
	}
	return page, Filter{ClientID: r.URL.Query().Get("client_id"), Limit: page.Limit(), Offset: page.Offset()}, nil
}

func (h *Handler) listGrants(w http.ResponseWriter, r *http.Request) error {
	page, f, err := listFilter(r)
	if err != nil {
		return err
	}
	user, err := h.caller(r)
	if err != nil {
		return err
	}
	grants, total, err := h.Service.ListGrants(r.Context(), user.ID, f)
	if err != nil {
		return err
	}
	base := httpapi.BaseURL(r.Context())
	out := make([]grantJSON, 0, len(grants))
	for _, g := range grants {
		out = append(out, toGrantJSON(base, g, user))
	}
	httpapi.SetLinks(w, r, page, total)
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h *Handler) getGrant(w http.ResponseWriter, r *http.Request) error {
	id, err := httpapi.PathInt64(r, "grant_id")
	if err != nil {
		return err
	}
	user, err := h.caller(r)
	if err != nil {
		return err
	}
	g, err := h.Service.GetGrant(r.Context(), user.ID, id)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toGrantJSON(httpapi.BaseURL(r.Context()), g, user))
	return nil
}

func (h *Handler) deleteGrant(w http.ResponseWriter, r *http.Request) error {
	id, err := httpapi.PathInt64(r, "grant_id")
	if err != nil {
		return err
	}
	if err := h.Service.DeleteGrant(r.Context(), auth.PrincipalFrom(r.Context()).UserID(), id); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

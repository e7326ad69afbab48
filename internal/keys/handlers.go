package keys

import (
	"net/http"

	"forgeapi/internal/accounts"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
)

// listMine answers GET /user/keys.
func (h *Handler) listMine(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	list, more, err := h.Service.ListUser(r.Context(), auth.PrincipalFrom(r.Context()).UserID(), page)
	if err != nil {
		return err
	}
	base := httpapi.BaseURL(r.Context())
	out := make([]keyJSON, 0, len(list))
	for _, k := range list {
		out = append(out, userJSON(base, k))
	}
	httpapi.SetLinksMore(w, r, page, more)
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// createMine answers POST /user/keys: 201 with the key and its
// Location.
func (h *Handler) createMine(w http.ResponseWriter, r *http.Request) error {
	n, err := decodeNew(r)
	if err != nil {
		return err
	}
	user, err := h.actor(r)
	if err != nil {
		return err
	}
	k, err := h.Service.CreateUser(r.Context(), user, n)
	if err != nil {
		return err
	}
	j := userJSON(httpapi.BaseURL(r.Context()), k)
	w.Header().Set("Location", j.URL)
	httpapi.WriteJSON(w, http.StatusCreated, j)
	return nil
}

// getMine answers GET /user/keys/{key_id}.
func (h *Handler) getMine(w http.ResponseWriter, r *http.Request) error {
	id, err := keyID(r)
	if err != nil {
		return err
	}
	k, err := h.Service.GetUser(r.Context(), auth.PrincipalFrom(r.Context()).UserID(), id)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, userJSON(httpapi.BaseURL(r.Context()), k))
	return nil
}

// deleteMine answers DELETE /user/keys/{key_id}: 204.
func (h *Handler) deleteMine(w http.ResponseWriter, r *http.Request) error {
	id, err := keyID(r)
	if err != nil {
		return err
	}
	if err := h.Service.DeleteUser(r.Context(), auth.PrincipalFrom(r.Context()).UserID(), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// listUser answers GET /users/{username}/keys: the user's public keys,
// id and key alone.
func (h *Handler) listUser(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	list, more, err := h.Service.ListUser(r.Context(), accounts.UserFrom(r.Context()).ID, page)
	if err != nil {
		return err
	}
	out := make([]simpleJSON, 0, len(list))
	for _, k := range list {
		out = append(out, simpleJSON{ID: k.ID, Key: k.Text})
	}
	httpapi.SetLinksMore(w, r, page, more)
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// listDeploy answers GET /repos/{owner}/{repo}/keys.
func (h *Handler) listDeploy(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	repo := repoOf(r)
	list, more, err := h.Service.ListRepo(r.Context(), repo.ID, page)
	if err != nil {
		return err
	}
	base := httpapi.BaseURL(r.Context())
	out := make([]deployKeyJSON, 0, len(list))
	for _, k := range list {
		out = append(out, deployJSON(base, repo, k))
	}
	httpapi.SetLinksMore(w, r, page, more)
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// createDeploy answers POST /repos/{owner}/{repo}/keys: 201 with the
// deploy key (read-only unless read_only is false) and its Location.
func (h *Handler) createDeploy(w http.ResponseWriter, r *http.Request) error {
	n, err := decodeNew(r)
	if err != nil {
		return err
	}
	actor, err := h.actor(r)
	if err != nil {
		return err
	}
	repo := repoOf(r)
	k, err := h.Service.CreateDeploy(r.Context(), repo, actor, n)
	if err != nil {
		return err
	}
	j := deployJSON(httpapi.BaseURL(r.Context()), repo, k)
	w.Header().Set("Location", j.URL)
	httpapi.WriteJSON(w, http.StatusCreated, j)
	return nil
}

// getDeploy answers GET /repos/{owner}/{repo}/keys/{key_id}.
func (h *Handler) getDeploy(w http.ResponseWriter, r *http.Request) error {
	id, err := keyID(r)
	if err != nil {
		return err
	}
	repo := repoOf(r)
	k, err := h.Service.GetRepo(r.Context(), repo.ID, id)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, deployJSON(httpapi.BaseURL(r.Context()), repo, k))
	return nil
}

// deleteDeploy answers DELETE /repos/{owner}/{repo}/keys/{key_id}: 204.
func (h *Handler) deleteDeploy(w http.ResponseWriter, r *http.Request) error {
	id, err := keyID(r)
	if err != nil {
		return err
	}
	actor, err := h.actor(r)
	if err != nil {
		return err
	}
	if err := h.Service.DeleteDeploy(r.Context(), repoOf(r), actor, id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

package keys

import (
	"context"
	"net/http"
	"strings"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
)

// verifiedEmails returns whether an address is one of the user's (every
// address of forgeapi's users counts as verified).
func (h *Handler) verifiedEmails(ctx context.Context, userID int64) (func(string) bool, error) {
	list, err := accounts.Emails(ctx, h.Service.DB, userID, false)
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	for _, e := range list {
		set[strings.ToLower(e.Address)] = true
	}
	return func(a string) bool { return set[strings.ToLower(a)] }, nil
}

// writeGPG answers with the keys of userID.
func (h *Handler) writeGPG(w http.ResponseWriter, r *http.Request, userID int64) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	list, more, err := h.Service.ListGPG(r.Context(), userID, page)
	if err != nil {
		return err
	}
	verified, err := h.verifiedEmails(r.Context(), userID)
	if err != nil {
		return err
	}
	out := make([]gpgKeyJSON, 0, len(list))
	for _, k := range list {
		out = append(out, gpgJSON(k, verified))
	}
	httpapi.SetLinksMore(w, r, page, more)
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// listMyGPG answers GET /user/gpg_keys.
func (h *Handler) listMyGPG(w http.ResponseWriter, r *http.Request) error {
	return h.writeGPG(w, r, auth.PrincipalFrom(r.Context()).UserID())
}

// listUserGPG answers GET /users/{username}/gpg_keys.
func (h *Handler) listUserGPG(w http.ResponseWriter, r *http.Request) error {
	return h.writeGPG(w, r, accounts.UserFrom(r.Context()).ID)
}

// createGPG answers POST /user/gpg_keys: 201 with the key and its
// subkeys.
func (h *Handler) createGPG(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Name             *string `json:"name"`
		ArmoredPublicKey *string `json:"armored_public_key"`
	}
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.ArmoredPublicKey == nil || strings.TrimSpace(*body.ArmoredPublicKey) == "" {
		return apierr.Invalid("GpgKey", "armored_public_key", apierr.CodeMissingField)
	}
	name := ""
	if body.Name != nil {
		name = strings.TrimSpace(*body.Name)
	}
	var f apierr.Fields
	f.MaxLength("GpgKey", "name", name, MaxTitle)
	if err := f.Err(); err != nil {
		return err
	}
	user, err := h.actor(r)
	if err != nil {
		return err
	}
	k, err := h.Service.CreateGPG(r.Context(), user, name, *body.ArmoredPublicKey)
	if err != nil {
		return err
	}
	verified, err := h.verifiedEmails(r.Context(), user.ID)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusCreated, gpgJSON(k, verified))
	return nil
}

// gpgKeyID is {gpg_key_id}: a 404 when it is not a number.
func gpgKeyID(r *http.Request) (int64, error) {
	id, err := httpapi.PathInt64(r, "gpg_key_id")
	if err != nil {
		return 0, apierr.NotFound()
	}
	return id, nil
}

// getGPG answers GET /user/gpg_keys/{gpg_key_id}.
func (h *Handler) getGPG(w http.ResponseWriter, r *http.Request) error {
	id, err := gpgKeyID(r)
	if err != nil {
		return err
	}
	userID := auth.PrincipalFrom(r.Context()).UserID()
	k, err := h.Service.GetGPG(r.Context(), userID, id)
	if err != nil {
		return err
	}
	verified, err := h.verifiedEmails(r.Context(), userID)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, gpgJSON(k, verified))
	return nil
}

// deleteGPG answers DELETE /user/gpg_keys/{gpg_key_id}: 204.
func (h *Handler) deleteGPG(w http.ResponseWriter, r *http.Request) error {
	id, err := gpgKeyID(r)
	if err != nil {
		return err
	}
	if err := h.Service.DeleteGPG(r.Context(), auth.PrincipalFrom(r.Context()).UserID(), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

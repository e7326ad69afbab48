package keys

import (
	"context"
	"errors"
	"net/http"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// signingColumns are the columns of an SSH signing key that scanSigning
// reads, as a Key (no repository, never used to authenticate).
const signingColumns = `id, user_id, title, key_text, fingerprint, created_at`

// querySigning returns the SSH signing keys a WHERE clause selects.
func (s *Service) querySigning(ctx context.Context, where string, args ...any) ([]*Key, error) {
	rows, err := s.DB.QueryContext(ctx, `SELECT `+signingColumns+` FROM ssh_signing_keys `+where, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*Key
	for rows.Next() {
		k := &Key{}
		if err := rows.Scan(&k.ID, &k.UserID, &k.Title, &k.Text, &k.Fingerprint, &k.CreatedAt); err != nil {
			return nil, err
		}
		k.CreatedAt = k.CreatedAt.UTC()
		out = append(out, k)
	}
	return out, rows.Err()
}

// ListSigning returns a page of the user's SSH signing keys, oldest
// first.
func (s *Service) ListSigning(ctx context.Context, userID int64, page httpapi.Page) ([]*Key, bool, error) {
	list, err := s.querySigning(ctx, `WHERE user_id = $1 ORDER BY id LIMIT $2 OFFSET $3`, userID, page.Limit()+1, page.Offset())
	if err != nil {
		return nil, false, err
	}
	more := len(list) > page.Limit()
	if more {
		list = list[:page.Limit()]
	}
	return list, more, nil
}

// GetSigning returns the user's SSH signing key id.
func (s *Service) GetSigning(ctx context.Context, userID, id int64) (*Key, error) {
	list, err := s.querySigning(ctx, `WHERE user_id = $1 AND id = $2`, userID, id)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, store.ErrNotFound
	}
	return list[0], nil
}

// CreateSigning adds an SSH signing key to the user's account; a key
// that signs for anyone already is the platform's 422.
func (s *Service) CreateSigning(ctx context.Context, user *accounts.Account, n NewKey) (*Key, error) {
	k, err := build(n)
	if err != nil {
		return nil, err
	}
	k.UserID = user.ID
	err = s.DB.QueryRowContext(ctx, `INSERT INTO ssh_signing_keys (user_id, title, key_text, fingerprint, created_at)
		VALUES ($1, $2, $3, $4, $5) RETURNING id`, k.UserID, k.Title, k.Text, k.Fingerprint, k.CreatedAt).Scan(&k.ID)
	if err = store.Normalize(err); errors.Is(err, store.ErrConflict) {
		return nil, apierr.Custom("PublicKey", "key", inUseMessage)
	}
	return k, err
}

// DeleteSigning removes the user's SSH signing key id.
func (s *Service) DeleteSigning(ctx context.Context, userID, id int64) error {
	res, err := s.DB.ExecContext(ctx, `DELETE FROM ssh_signing_keys WHERE user_id = $1 AND id = $2`, userID, id)
	return deleted(res, err)
}

// signingJSON is the platform's ssh-signing-key object.
type signingJSON struct {
	Key       string    `json:"key"`
	ID        int64     `json:"id"`
	Title     string    `json:"title"`
	CreatedAt wire.Time `json:"created_at"`
}

func toSigningJSON(k *Key) signingJSON {
	return signingJSON{Key: k.Text, ID: k.ID, Title: k.Title, CreatedAt: wire.T(k.CreatedAt)}
}

// writeSigning answers with a page of the user's SSH signing keys.
func (h *Handler) writeSigning(w http.ResponseWriter, r *http.Request, userID int64) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	list, more, err := h.Service.ListSigning(r.Context(), userID, page)
	if err != nil {
		return err
	}
	out := make([]signingJSON, 0, len(list))
	for _, k := range list {
		out = append(out, toSigningJSON(k))
	}
	httpapi.SetLinksMore(w, r, page, more)
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// listMySigning answers GET /user/ssh_signing_keys.
func (h *Handler) listMySigning(w http.ResponseWriter, r *http.Request) error {
	return h.writeSigning(w, r, auth.PrincipalFrom(r.Context()).UserID())
}

// listUserSigning answers GET /users/{username}/ssh_signing_keys.
func (h *Handler) listUserSigning(w http.ResponseWriter, r *http.Request) error {
	return h.writeSigning(w, r, accounts.UserFrom(r.Context()).ID)
}

// createSigning answers POST /user/ssh_signing_keys: 201 with the key.
func (h *Handler) createSigning(w http.ResponseWriter, r *http.Request) error {
	n, err := decodeNew(r)
	if err != nil {
		return err
	}
	user, err := h.actor(r)
	if err != nil {
		return err
	}
	k, err := h.Service.CreateSigning(r.Context(), user, n)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusCreated, toSigningJSON(k))
	return nil
}

// signingKeyID is {ssh_signing_key_id}: a 404 when it is not a number.
func signingKeyID(r *http.Request) (int64, error) {
	id, err := httpapi.PathInt64(r, "ssh_signing_key_id")
	if err != nil {
		return 0, apierr.NotFound()
	}
	return id, nil
}

// getSigning answers GET /user/ssh_signing_keys/{ssh_signing_key_id}.
func (h *Handler) getSigning(w http.ResponseWriter, r *http.Request) error {
	id, err := signingKeyID(r)
	if err != nil {
		return err
	}
	k, err := h.Service.GetSigning(r.Context(), auth.PrincipalFrom(r.Context()).UserID(), id)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toSigningJSON(k))
	return nil
}

// deleteSigning answers DELETE /user/ssh_signing_keys/{ssh_signing_key_id}: 204.
func (h *Handler) deleteSigning(w http.ResponseWriter, r *http.Request) error {
	id, err := signingKeyID(r)
	if err != nil {
		return err
	}
	if err := h.Service.DeleteSigning(r.Context(), auth.PrincipalFrom(r.Context()).UserID(), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

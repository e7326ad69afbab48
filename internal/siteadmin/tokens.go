package siteadmin

import (
	"context"
	"errors"
	"net/http"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/oauth"
	"forgeapi/internal/store"
)

// UserToken is a personal access token with its user.
type UserToken struct {
	Token *oauth.Authorization
	User  *accounts.Account
}

// ListTokens returns a page of every user's personal access tokens
// (classic), oldest first, with their users, in one query.
func (s *Service) ListTokens(ctx context.Context, page httpapi.Page) ([]UserToken, error) {
	rows, err := s.DB.QueryContext(ctx, `
		SELECT t.id, t.scopes, t.token_hash, t.last_eight, t.note, t.note_url, t.fingerprint, t.expires_at,
		       t.created_at, t.updated_at, `+accounts.JoinedColumns+`
		FROM tokens t JOIN accounts a ON a.id = t.user_id
		WHERE t.kind = $1 ORDER BY t.id LIMIT $2 OFFSET $3`, string(auth.KindClassic), page.Limit(), page.Offset())
	if err != nil {
		return nil, store.Normalize(err)
	}
	defer rows.Close()
	out := []UserToken{}
	for rows.Next() {
		z, u := &oauth.Authorization{}, &accounts.Account{}
		var scopes string
		var expires *time.Time
		dest := append([]any{&z.ID, &scopes, &z.TokenHash, &z.LastEight, &z.Note, &z.NoteURL, &z.Fingerprint, &expires,
			&z.CreatedAt, &z.UpdatedAt}, u.ScanDest()...)
		if err := rows.Scan(dest...); err != nil {
			return nil, store.Normalize(err)
		}
		z.UserID, z.Scopes, z.ExpiresAt = u.ID, auth.ParseScopes(scopes).Normalize(), expires
		out = append(out, UserToken{Token: z, User: u})
	}
	return out, store.Normalize(rows.Err())
}

// DeleteToken deletes the personal access token id: it stops
// authenticating at once. store.ErrNotFound when there is no such token.
func (s *Service) DeleteToken(ctx context.Context, id int64) error {
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM tokens WHERE id = $1 AND kind = $2`, id, string(auth.KindClassic))
		if err != nil {
			return store.Normalize(err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return store.ErrNotFound
		}
		return nil
	})
}

// listTokens serves GET /admin/tokens.
func (h *Handler) listTokens(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	list, err := h.Service.ListTokens(r.Context(), page)
	if err != nil {
		return err
	}
	base := httpapi.BaseURL(r.Context())
	out := make([]authorizationJSON, len(list))
	for i, t := range list {
		out[i] = toAuthorization(base, t.Token, t.User)
	}
	httpapi.SetLinksMore(w, r, page, len(list) == page.Limit())
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// deleteToken serves DELETE /admin/tokens/{token_id}: 204.
func (h *Handler) deleteToken(w http.ResponseWriter, r *http.Request) error {
	id, err := httpapi.PathInt64(r, "token_id")
	if err != nil {
		return apierr.NotFound()
	}
	err = h.Service.DeleteToken(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		return apierr.NotFound()
	}
	if err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

package siteadmin

import (
	"context"
	"errors"
	"net/http"
	"slices"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/oauth"
	"forgeapi/internal/store"
)

// ImpersonationNote is the note of an impersonation token: the name the
// user's authorizations show it by.
const ImpersonationNote = "Site administrator impersonation"

// Impersonate returns the user's impersonation token: an OAuth token
// that authenticates as the user with exactly the scopes. The user has
// at most one: asked again with the same scopes, the existing one is
// returned without its value (created false); with other scopes, it is
// replaced by a new one.
func (s *Service) Impersonate(ctx context.Context, u *accounts.Account, scopes auth.Scopes) (z *oauth.Authorization, created bool, err error) {
	scopes = scopes.Normalize()
	var tokenID int64
	var value string
	err = s.DB.Tx(ctx, func(tx *store.Tx) error {
		id, had, err := impersonationToken(ctx, tx, u.ID)
		if err != nil {
			return err
		}
		if had {
			var existing string
			err := tx.QueryRowContext(ctx, `SELECT scopes FROM tokens WHERE id = $1`, id).Scan(&existing)
			if err != nil {
				return store.Normalize(err)
			}
			if slices.Equal(auth.ParseScopes(existing).Normalize(), scopes) {
				tokenID = id
				return nil
			}
			if err := auth.RevokeToken(ctx, tx, id); err != nil {
				return err
			}
		}
		t, err := auth.CreateToken(ctx, tx, auth.TokenSpec{Kind: auth.KindOAuth, UserID: u.ID, Scopes: scopes,
			Note: ImpersonationNote})
		if errors.Is(err, store.ErrConflict) {
			return apierr.Validation(apierr.FieldError{Resource: "OauthAccess", Field: "description",
				Code: apierr.CodeAlreadyExists})
		}
		if err != nil {
			return err
		}
		tokenID, value, created = t.ID, t.Value, true
		_, err = tx.ExecContext(ctx, `INSERT INTO impersonation_tokens (user_id, token_id) VALUES ($1, $2)
			ON CONFLICT (user_id) DO UPDATE SET token_id = excluded.token_id`, u.ID, t.ID)
		return store.Normalize(err)
	})
	if err != nil {
		return nil, false, err
	}
	if z, err = s.OAuth.GetAuthorization(ctx, u.ID, tokenID); err != nil {
		return nil, false, err
	}
	z.Token = value
	return z, created, nil
}

// RevokeImpersonation deletes the user's impersonation token, if it has
// one: it stops authenticating at once.
func (s *Service) RevokeImpersonation(ctx context.Context, u *accounts.Account) error {
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM tokens WHERE id IN
			(SELECT token_id FROM impersonation_tokens WHERE user_id = $1)`, u.ID)
		return store.Normalize(err)
	})
}

// impersonationToken is the id of the user's impersonation token, and
// whether it has one.
func impersonationToken(ctx context.Context, q store.Q, userID int64) (int64, bool, error) {
	var id int64
	err := store.Normalize(q.QueryRowContext(ctx, `SELECT token_id FROM impersonation_tokens WHERE user_id = $1`,
		userID).Scan(&id))
	if errors.Is(err, store.ErrNotFound) {
		return 0, false, nil
	}
	return id, err == nil, err
}

// scopesRequest is the body of POST /admin/users/{username}/authorizations.
type scopesRequest struct {
	Scopes *[]string `json:"scopes"`
}

// createImpersonation serves POST /admin/users/{username}/authorizations:
// 201 with the new token's authorization (its value shown this once),
// 200 with the existing one's.
func (h *Handler) createImpersonation(w http.ResponseWriter, r *http.Request) error {
	u, err := targetUser(r.Context())
	if err != nil {
		return err
	}
	var req scopesRequest
	if err := httpapi.DecodeJSON(r, &req); err != nil {
		return err
	}
	if req.Scopes == nil {
		return apierr.Invalid("OauthAccess", "scopes", apierr.CodeMissingField)
	}
	for _, s := range *req.Scopes {
		if !auth.ValidScope(s) {
			return apierr.Invalid("OauthAccess", "scopes", apierr.CodeInvalid)
		}
	}
	z, created, err := h.Service.Impersonate(r.Context(), u, auth.Scopes(*req.Scopes))
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	httpapi.WriteJSON(w, status, toAuthorization(httpapi.BaseURL(r.Context()), z, u))
	return nil
}

// deleteImpersonation serves DELETE /admin/users/{username}/authorizations: 204.
func (h *Handler) deleteImpersonation(w http.ResponseWriter, r *http.Request) error {
	u, err := targetUser(r.Context())
	if err != nil {
		return err
	}
	if err := h.Service.RevokeImpersonation(r.Context(), u); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

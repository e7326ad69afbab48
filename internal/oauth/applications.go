package oauth

import (
	"context"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/auth"
	"forgeapi/internal/store"
)

// The application token endpoints (POST, PATCH and DELETE
// /applications/{client_id}/token, DELETE /applications/{client_id}/grant)
// act on one OAuth token that an application holds, named by its value.

// AppToken returns the authorization of the OAuth token with the value
// that the application holds, with its Token set to the value, or
// store.ErrNotFound for a token the application does not hold (unknown,
// expired, personal, or another application's).
func (s *Service) AppToken(ctx context.Context, app *accounts.App, value string) (*Authorization, error) {
	return appToken(ctx, s.DB, app, value)
}

func appToken(ctx context.Context, q store.Q, app *accounts.App, value string) (*Authorization, error) {
	z, err := scanAuthorization(q.QueryRowContext(ctx, `SELECT `+authorizationColumns+authorizationFrom+
		`WHERE t.token_hash = $1 AND t.kind = 'oauth' AND t.app_id = $2`, auth.HashToken(value), app.ID))
	if err != nil {
		return nil, err
	}
	if z.ExpiresAt != nil && !z.ExpiresAt.After(time.Now()) {
		return nil, store.ErrNotFound
	}
	z.Token = value
	return z, nil
}

// ResetAppToken gives the application's token a new value and returns its
// authorization with the new value; the old value stops authenticating
// at once.
func (s *Service) ResetAppToken(ctx context.Context, app *accounts.App, value string) (*Authorization, error) {
	var z *Authorization
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		cur, err := appToken(ctx, tx, app, value)
		if err != nil {
			return err
		}
		next, err := auth.ResetToken(ctx, tx, cur.ID)
		if err != nil {
			return err
		}
		if z, err = getAuthorization(ctx, tx, cur.UserID, cur.ID); err != nil {
			return err
		}
		z.Token = next
		return nil
	})
	return z, err
}

// RevokeAppToken deletes the application's token, as deleting its
// authorization does (the grant goes with the application's last token
// for the user).
func (s *Service) RevokeAppToken(ctx context.Context, app *accounts.App, value string) error {
	z, err := s.AppToken(ctx, app, value)
	if err != nil {
		return err
	}
	return s.DeleteAuthorization(ctx, z.UserID, z.ID)
}

// RevokeAppGrant deletes the grant of the user who owns the application's
// token, with every OAuth token the application holds for that user, as
// deleting the grant does.
func (s *Service) RevokeAppGrant(ctx context.Context, app *accounts.App, value string) error {
	z, err := s.AppToken(ctx, app, value)
	if err != nil {
		return err
	}
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM oauth_grants WHERE user_id = $1 AND app_id = $2`, z.UserID, app.ID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM tokens WHERE user_id = $1 AND app_id = $2 AND kind = 'oauth'`, z.UserID, app.ID)
		return err
	})
}

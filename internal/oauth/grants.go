package oauth

import (
	"context"
	"strconv"

	"forgeapi/internal/accounts"
	"forgeapi/internal/auth"
	"forgeapi/internal/store"
)

// lockGrant makes sure the grant row of the user and application exists
// and, on PostgreSQL, holds its row lock until the transaction ends, so
// that writers of one user's tokens of one application take turns.
func lockGrant(ctx context.Context, tx store.Q, userID, appID int64) error {
	now := store.Now()
	_, err := tx.ExecContext(ctx, `
		INSERT INTO oauth_grants (user_id, app_id, created_at, updated_at) VALUES ($1, $2, $3, $3)
		ON CONFLICT (user_id, app_id) DO UPDATE SET updated_at = oauth_grants.updated_at`, userID, appID, now)
	return store.Normalize(err)
}

// touchGrant records that the grant's set of tokens changed.
func touchGrant(ctx context.Context, tx store.Q, userID, appID int64) error {
	_, err := tx.ExecContext(ctx, `UPDATE oauth_grants SET updated_at = $3 WHERE user_id = $1 AND app_id = $2`,
		userID, appID, store.Now())
	return err
}

// A grant is shown only while its application holds a token for the user.
const grantColumns = `g.id, g.user_id, g.created_at, g.updated_at, a.id, a.owner_id, a.name, a.url, a.client_id, a.created_at`

const grantFrom = ` FROM oauth_grants g JOIN oauth_apps a ON a.id = g.app_id
	WHERE g.user_id = $1
	AND EXISTS (SELECT 1 FROM tokens t WHERE t.user_id = g.user_id AND t.app_id = g.app_id AND t.kind = 'oauth')`

func scanGrant(row interface{ Scan(...any) error }) (*Grant, error) {
	var g Grant
	err := row.Scan(&g.ID, &g.UserID, &g.CreatedAt, &g.UpdatedAt,
		&g.App.ID, &g.App.OwnerID, &g.App.Name, &g.App.URL, &g.App.ClientID, &g.App.CreatedAt)
	if err != nil {
		return nil, store.Normalize(err)
	}
	return &g, nil
}

// ListGrants returns a page of the user's grants, oldest first, with
// their scopes, and how many there are in all.
func (s *Service) ListGrants(ctx context.Context, userID int64, f Filter) ([]*Grant, int, error) {
	cond, args := "", []any{userID}
	if f.ClientID != "" {
		cond, args = ` AND a.client_id = $2`, append(args, f.ClientID)
	}
	var total int
	if err := s.DB.QueryRowContext(ctx, `SELECT count(*)`+grantFrom+cond, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := s.DB.QueryContext(ctx, `SELECT `+grantColumns+grantFrom+cond+
		` ORDER BY g.id LIMIT `+strconv.Itoa(f.Limit)+` OFFSET `+strconv.Itoa(f.Offset), args...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var out []*Grant
	for rows.Next() {
		g, err := scanGrant(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, g)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	return out, total, s.fillScopes(ctx, userID, out)
}

// GetGrant returns the user's grant, or store.ErrNotFound (also for
// another user's, and for one whose application holds no token any more).
func (s *Service) GetGrant(ctx context.Context, userID, id int64) (*Grant, error) {
	g, err := scanGrant(s.DB.QueryRowContext(ctx, `SELECT `+grantColumns+grantFrom+` AND g.id = $2`, userID, id))
	if err != nil {
		return nil, err
	}
	return g, s.fillScopes(ctx, userID, []*Grant{g})
}

// fillScopes sets each grant's scopes to the union of the scopes of its
// application's tokens for the user.
func (s *Service) fillScopes(ctx context.Context, userID int64, grants []*Grant) error {
	if len(grants) == 0 {
		return nil
	}
	rows, err := s.DB.QueryContext(ctx,
		`SELECT app_id, scopes FROM tokens WHERE user_id = $1 AND kind = 'oauth' AND app_id IS NOT NULL`, userID)
	if err != nil {
		return err
	}
	defer rows.Close()
	union := map[int64]auth.Scopes{}
	for rows.Next() {
		var appID int64
		var scopes string
		if err := rows.Scan(&appID, &scopes); err != nil {
			return err
		}
		union[appID] = append(union[appID], auth.ParseScopes(scopes)...)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, g := range grants {
		g.Scopes = union[g.App.ID].Normalize()
	}
	return nil
}

// DeleteGrant deletes the user's grant and every OAuth token its
// application holds for the user: they stop authenticating at once.
func (s *Service) DeleteGrant(ctx context.Context, userID, id int64) error {
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		var appID int64
		err := tx.QueryRowContext(ctx, `DELETE FROM oauth_grants WHERE id = $1 AND user_id = $2 RETURNING app_id`,
			id, userID).Scan(&appID)
		if err != nil {
			return store.Normalize(err)
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM tokens WHERE user_id = $1 AND app_id = $2 AND kind = 'oauth'`, userID, appID)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err == nil && n == 0 {
			return store.ErrNotFound // a grant without tokens is not shown
		}
		return nil
	})
}

// appByClientID returns the application with the client id, or
// store.ErrNotFound when the id is not a 20-character client id of an
// existing application.
func appByClientID(ctx context.Context, q store.Q, clientID string) (*accounts.App, error) {
	if len(clientID) != accounts.ClientIDLength {
		return nil, store.ErrNotFound
	}
	return accounts.AppByClientID(ctx, q, clientID)
}

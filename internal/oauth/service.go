// Package oauth serves the OAuth grants and authorizations API. An
// authorization is one OAuth token (a row of kind auth.KindOAuth in the
// tokens table), personal (no application) or held by an OAuth
// application; a grant is one entry per application that
// holds tokens for a user, whose scopes are the union of those tokens'
// scopes. Tokens made here authenticate everywhere else with exactly
// their scopes and stop working the moment their authorization or grant
// is deleted.
//
// OAuth tokens of an application must be created through Service, so
// that their grant row exists.
package oauth

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/store"
)

// Service holds the grants and authorizations of every user.
type Service struct {
	DB *store.DB
}

// Authorization is one OAuth token as the authorizations API shows it.
type Authorization struct {
	ID          int64
	UserID      int64
	Scopes      auth.Scopes
	TokenHash   string // SHA-256 hex of the token
	LastEight   string
	App         *accounts.App // nil for a personal authorization
	Note        string
	NoteURL     string
	Fingerprint string
	ExpiresAt   *time.Time
	CreatedAt   time.Time
	UpdatedAt   time.Time
	// Token is the secret value, known only in the response that creates it.
	Token string
}

// Grant is one application's access to a user's account.
type Grant struct {
	ID        int64
	UserID    int64
	App       accounts.App
	Scopes    auth.Scopes // union of the scopes of the app's tokens for the user
	CreatedAt time.Time
	UpdatedAt time.Time
}

// NewAuthorization is what a create or get-or-create stores.
type NewAuthorization struct {
	Scopes      auth.Scopes
	App         *accounts.App // nil for a personal authorization
	Note        string
	NoteURL     string
	Fingerprint string
}

// Update changes an authorization. Nil fields stay as they are; at most
// one of Scopes, AddScopes and RemoveScopes is set.
type Update struct {
	Scopes       *auth.Scopes
	AddScopes    auth.Scopes
	RemoveScopes auth.Scopes
	Note         *string
	NoteURL      *string
	Fingerprint  *string
}

// Filter narrows a list to one application's client id ("" for all;
// PersonalClientID for personal authorizations).
type Filter struct {
	ClientID string
	Limit    int
	Offset   int
}

const resource = "OauthAccess"

// authorizationColumns are the columns scanAuthorization reads, from
// tokens t LEFT JOIN oauth_apps a.
const authorizationColumns = `t.id, t.user_id, t.scopes, t.token_hash, t.last_eight, t.note, t.note_url,
	t.fingerprint, t.expires_at, t.created_at, t.updated_at,
	a.id, a.owner_id, a.name, a.url, a.client_id, a.created_at`

const authorizationFrom = ` FROM tokens t LEFT JOIN oauth_apps a ON a.id = t.app_id `

func scanAuthorization(row interface{ Scan(...any) error }) (*Authorization, error) {
	var (
		z      Authorization
		scopes string
		appID  *int64
		owner  *int64
		name   *string
		url    *string
		client *string
		appAt  *time.Time
	)
	err := row.Scan(&z.ID, &z.UserID, &scopes, &z.TokenHash, &z.LastEight, &z.Note, &z.NoteURL,
		&z.Fingerprint, &z.ExpiresAt, &z.CreatedAt, &z.UpdatedAt,
		&appID, &owner, &name, &url, &client, &appAt)
	if err != nil {
		return nil, store.Normalize(err)
	}
	z.Scopes = auth.ParseScopes(scopes).Normalize()
	if appID != nil {
		z.App = &accounts.App{ID: *appID, OwnerID: *owner, Name: *name, URL: *url, ClientID: *client, CreatedAt: *appAt}
	}
	return &z, nil
}

// clientFilter returns the SQL condition and argument that narrow
// tokens t / grants to a client id, numbered $n.
func clientFilter(clientID string, n string) (string, []any) {
	switch clientID {
	case "":
		return "", nil
	case PersonalClientID:
		return ` AND t.app_id IS NULL`, nil
	}
	return ` AND a.client_id = $` + n, []any{clientID}
}

// ListAuthorizations returns a page of the user's authorizations, oldest
// first, and how many there are in all.
func (s *Service) ListAuthorizations(ctx context.Context, userID int64, f Filter) ([]*Authorization, int, error) {
	cond, args := clientFilter(f.ClientID, "2")
	where := `WHERE t.user_id = $1 AND t.kind = 'oauth'` + cond
	args = append([]any{userID}, args...)
	var total int
	if err := s.DB.QueryRowContext(ctx, `SELECT count(*)`+authorizationFrom+where, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := s.DB.QueryContext(ctx, `SELECT `+authorizationColumns+authorizationFrom+where+
		` ORDER BY t.id LIMIT `+strconv.Itoa(f.Limit)+` OFFSET `+strconv.Itoa(f.Offset), args...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var out []*Authorization
	for rows.Next() {
		z, err := scanAuthorization(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, z)
	}
	return out, total, rows.Err()
}

// GetAuthorization returns the user's authorization, or store.ErrNotFound
// (also for another user's).
func (s *Service) GetAuthorization(ctx context.Context, userID, id int64) (*Authorization, error) {
	return getAuthorization(ctx, s.DB, userID, id)
}

func getAuthorization(ctx context.Context, q store.Q, userID, id int64) (*Authorization, error) {
	return scanAuthorization(q.QueryRowContext(ctx, `SELECT `+authorizationColumns+authorizationFrom+
		`WHERE t.id = $1 AND t.user_id = $2 AND t.kind = 'oauth'`, id, userID))
}

// Create stores a new authorization (and the grant of its application)
// and returns it with its token. A note already used by another personal
// authorization of the user, or a fingerprint already used for the
// application, is a 422 already_exists.
func (s *Service) Create(ctx context.Context, userID int64, n NewAuthorization) (*Authorization, error) {
	var z *Authorization
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		if n.App != nil {
			if err := lockGrant(ctx, tx, userID, n.App.ID); err != nil {
				return err
			}
			if err := touchGrant(ctx, tx, userID, n.App.ID); err != nil {
				return err
			}
		}
		var err error
		z, err = insert(ctx, tx, userID, n)
		return err
	})
	return z, err
}

// GetOrCreate returns the user's authorization for the application with
// the fingerprint ("" matches an authorization without one), creating it
// when there is none; created says which happened.
func (s *Service) GetOrCreate(ctx context.Context, userID int64, n NewAuthorization) (z *Authorization, created bool, err error) {
	if n.App == nil {
		return nil, false, errors.New("oauth: get-or-create needs an application")
	}
	err = s.DB.Tx(ctx, func(tx *store.Tx) error {
		// The grant row is locked first, so that concurrent calls for one
		// user and application take turns and create one token.
		if err := lockGrant(ctx, tx, userID, n.App.ID); err != nil {
			return err
		}
		existing, err := scanAuthorization(tx.QueryRowContext(ctx, `SELECT `+authorizationColumns+authorizationFrom+
			`WHERE t.user_id = $1 AND t.kind = 'oauth' AND t.app_id = $2 AND t.fingerprint = $3 ORDER BY t.id LIMIT 1`,
			userID, n.App.ID, n.Fingerprint))
		switch {
		case err == nil:
			z = existing
			return nil
		case !errors.Is(err, store.ErrNotFound):
			return err
		}
		if err := touchGrant(ctx, tx, userID, n.App.ID); err != nil {
			return err
		}
		z, err = insert(ctx, tx, userID, n)
		created = err == nil
		return err
	})
	return z, created, err
}

func insert(ctx context.Context, tx store.Q, userID int64, n NewAuthorization) (*Authorization, error) {
	spec := auth.TokenSpec{Kind: auth.KindOAuth, UserID: userID, Scopes: n.Scopes,
		Note: n.Note, NoteURL: n.NoteURL, Fingerprint: n.Fingerprint}
	if n.App != nil {
		spec.AppID = n.App.ID
	}
	t, err := auth.CreateToken(ctx, tx, spec)
	if errors.Is(err, store.ErrConflict) {
		return nil, conflictError(n.App != nil)
	}
	if err != nil {
		return nil, err
	}
	z, err := getAuthorization(ctx, tx, userID, t.ID)
	if err != nil {
		return nil, err
	}
	z.Token = t.Value
	return z, nil
}

// conflictError is the 422 for a unique index of the tokens table: the
// fingerprint of an application's token, or a personal token's note.
func conflictError(hasApp bool) error {
	if hasApp {
		return apierr.Validation(apierr.FieldError{Resource: resource, Field: "fingerprint", Code: apierr.CodeAlreadyExists,
			Message: "This application already has an authorization with this fingerprint for you."})
	}
	return apierr.Validation(apierr.FieldError{Resource: resource, Field: "note", Code: apierr.CodeAlreadyExists,
		Message: "You already have a personal authorization with this note."})
}

// UpdateAuthorization applies u to the user's authorization and returns
// it. A personal authorization keeps a non-empty note unique to it.
func (s *Service) UpdateAuthorization(ctx context.Context, userID, id int64, u Update) (*Authorization, error) {
	var z *Authorization
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		cur, err := getAuthorization(ctx, tx, userID, id)
		if err != nil {
			return err
		}
		next := applyUpdate(*cur, u)
		if cur.App == nil && next.Note == "" {
			return apierr.Invalid(resource, "note", apierr.CodeMissingField)
		}
		_, err = tx.ExecContext(ctx, `
			UPDATE tokens SET scopes = $1, note = $2, note_url = $3, fingerprint = $4, updated_at = $5
			WHERE id = $6`, joinScopes(next.Scopes), next.Note, next.NoteURL, next.Fingerprint, tx.Now(), id)
		if err = store.Normalize(err); errors.Is(err, store.ErrConflict) {
			return conflictError(cur.App != nil)
		} else if err != nil {
			return err
		}
		if cur.App != nil {
			if err := touchGrant(ctx, tx, userID, cur.App.ID); err != nil {
				return err
			}
		}
		z, err = getAuthorization(ctx, tx, userID, id)
		return err
	})
	return z, err
}

func applyUpdate(z Authorization, u Update) Authorization {
	switch {
	case u.Scopes != nil:
		z.Scopes = u.Scopes.Normalize()
	case u.AddScopes != nil:
		z.Scopes = append(slices.Clone(z.Scopes), u.AddScopes...).Normalize()
	case u.RemoveScopes != nil:
		z.Scopes = slices.DeleteFunc(slices.Clone(z.Scopes), func(s string) bool { return slices.Contains(u.RemoveScopes, s) })
	}
	if u.Note != nil {
		z.Note = *u.Note
	}
	if u.NoteURL != nil {
		z.NoteURL = *u.NoteURL
	}
	if u.Fingerprint != nil {
		z.Fingerprint = *u.Fingerprint
	}
	return z
}

// DeleteAuthorization deletes the user's authorization: its token stops
// authenticating at once. The grant goes with the application's last
// token.
func (s *Service) DeleteAuthorization(ctx context.Context, userID, id int64) error {
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		var appID *int64
		err := tx.QueryRowContext(ctx, `DELETE FROM tokens WHERE id = $1 AND user_id = $2 AND kind = 'oauth' RETURNING app_id`,
			id, userID).Scan(&appID)
		if err != nil {
			return store.Normalize(err)
		}
		if appID == nil {
			return nil
		}
		_, err = tx.ExecContext(ctx, `
			DELETE FROM oauth_grants WHERE user_id = $1 AND app_id = $2
			AND NOT EXISTS (SELECT 1 FROM tokens WHERE user_id = $1 AND app_id = $2 AND kind = 'oauth')`, userID, *appID)
		if err != nil {
			return err
		}
		return touchGrant(ctx, tx, userID, *appID)
	})
}

func joinScopes(s auth.Scopes) string {
	out := ""
	for i, v := range s.Normalize() {
		if i > 0 {
			out += " "
		}
		out += v
	}
	return out
}

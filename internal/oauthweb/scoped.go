package oauthweb

import (
	"context"
	"errors"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/apps"
	"forgeapi/internal/auth"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// ScopeRequest is the body of POST /applications/{client_id}/token/scoped.
type ScopeRequest struct {
	AccessToken   string            `json:"access_token"`
	Target        string            `json:"target"`
	TargetID      int64             `json:"target_id"`
	Repositories  []string          `json:"repositories"`
	RepositoryIDs []int64           `json:"repository_ids"`
	Permissions   map[string]string `json:"permissions"`
}

// Scoped is a scoped user access token just made.
type Scoped struct {
	ID        int64
	Token     string
	TokenHash string
	User      *accounts.Account
	Target    *accounts.Account
	App       *apps.App
	Grant     auth.Grant
	// AllRepositories, or the repositories the token selects.
	AllRepositories bool
	RepositoryIDs   []int64
	ExpiresAt       time.Time
	CreatedAt       time.Time
}

// ErrClientCredentials is the 401 of wrong or missing client credentials.
func ErrClientCredentials() *apierr.Error { return apierr.Unauthorized("Bad credentials") }

// ScopeToken makes from an app's user access token (found by its value)
// a new one narrowed to the target account (where the app must be
// installed), to repositories of the installation and to permissions the
// app holds. The new token expires with the one it comes from. The app
// authenticates with its client id and secret (a 401 when they are
// wrong); a token that is not the app's user token is a 404, a request
// for more than the installation holds a 422.
func (s *Service) ScopeToken(ctx context.Context, clientID, secret string, req ScopeRequest) (*Scoped, error) {
	c, err := clientByID(ctx, s.DB, clientID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	if err != nil || !c.IsApp() || !c.CheckSecret(secret) {
		return nil, ErrClientCredentials()
	}
	if err := req.check(); err != nil {
		return nil, err
	}
	var out *Scoped
	err = s.DB.Tx(ctx, func(tx *store.Tx) error {
		var err error
		out, err = s.scope(ctx, tx, c, req)
		return err
	})
	return out, err
}

func (r *ScopeRequest) check() error {
	var f apierr.Fields
	if r.AccessToken == "" {
		f.Add("Authorization", "access_token", apierr.CodeMissingField)
	}
	if r.Target == "" && r.TargetID == 0 {
		f.Add("Authorization", "target", apierr.CodeMissingField)
	}
	if len(r.Repositories) > 0 && len(r.RepositoryIDs) > 0 {
		f.Addf("Authorization", "repositories", "repositories may not be specified if repository_ids is specified")
	}
	return f.Err()
}

func (s *Service) scope(ctx context.Context, tx store.Q, c *client, req ScopeRequest) (*Scoped, error) {
	var userID int64
	var expires *time.Time
	err := tx.QueryRowContext(ctx, `SELECT t.user_id, t.expires_at FROM tokens t
		JOIN app_refresh_tokens r ON r.access_token_id = t.id
		WHERE t.token_hash = $1 AND t.kind = 'app_user' AND r.app_id = $2`, auth.HashToken(req.AccessToken), c.App.ID).
		Scan(&userID, &expires)
	if err = store.Normalize(err); errors.Is(err, store.ErrNotFound) || err == nil && expires != nil && !expires.After(s.now()) {
		return nil, apierr.NotFound()
	} else if err != nil {
		return nil, err
	}
	target, err := scopeTarget(ctx, tx, req)
	if err != nil {
		return nil, err
	}
	inst, err := apps.InstallationOn(ctx, tx, c.App.ID, target.ID)
	if errors.Is(err, store.ErrNotFound) || err == nil && inst.Suspended() {
		return nil, apierr.Unprocessable("The app is not installed on the target, or its installation is suspended.")
	} else if err != nil {
		return nil, err
	}
	out := &Scoped{Target: target, App: c.App, ExpiresAt: *expires}
	if out.Grant, err = narrow(c.App.Permissions, req.Permissions); err != nil {
		return nil, err
	}
	if err := out.selectRepositories(ctx, tx, inst, target, req); err != nil {
		return nil, err
	}
	if out.User, err = accounts.ByID(ctx, tx, userID); err != nil {
		return nil, err
	}
	spec := auth.TokenSpec{Kind: auth.KindAppUser, UserID: userID, ResourceOwnerID: target.ID, Grant: out.Grant,
		AllRepositories: out.AllRepositories, RepositoryIDs: out.RepositoryIDs, ExpiresAt: expires}
	created, err := auth.CreateToken(ctx, tx, spec)
	if err != nil {
		return nil, err
	}
	out.ID, out.Token, out.TokenHash, out.CreatedAt = created.ID, created.Value, auth.HashToken(created.Value), created.CreatedAt
	// The new token is the app's: linked, as every app user token is, by
	// a refresh row, whose value no one is given.
	_, err = tx.ExecContext(ctx, `INSERT INTO app_refresh_tokens (token_hash, app_id, user_id, access_token_id, expires_at, created_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, auth.HashToken(refreshPrefix+auth.RandomString(36)), c.App.ID, userID, created.ID,
		*expires, created.CreatedAt)
	return out, store.Normalize(err)
}

// scopeTarget resolves the request's target account (by login or id; a
// 422 when there is none).
func scopeTarget(ctx context.Context, q store.Q, req ScopeRequest) (*accounts.Account, error) {
	var a *accounts.Account
	var err error
	if req.Target != "" {
		a, err = accounts.ByLogin(ctx, q, req.Target)
	} else {
		a, err = accounts.ByID(ctx, q, req.TargetID)
	}
	if errors.Is(err, store.ErrNotFound) || err == nil && a.Type == accounts.TypeBot {
		return nil, apierr.Invalid("Authorization", "target", apierr.CodeInvalid)
	}
	return a, err
}

// narrow returns the app's permissions narrowed to the requested ones
// (all of them when none are), refusing more than the app holds.
// metadata:read is always kept.
func narrow(held auth.Grant, want map[string]string) (auth.Grant, error) {
	if len(want) == 0 {
		return held, nil
	}
	out := auth.Grant{"metadata": auth.Read}
	for name, level := range want {
		l := auth.Level(level)
		if have, ok := held[name]; !ok || l != auth.Read && l != auth.Write || !have.Covers(l) {
			return nil, apierr.Unprocessable("The permissions requested are not granted to this app.")
		}
		out[name] = l
	}
	return out, nil
}

// selectRepositories narrows the token to the requested repositories of
// the target, each of which the installation must select; none
// requested keeps the installation's selection.
func (sc *Scoped) selectRepositories(ctx context.Context, q store.Q, inst *apps.Installation, target *accounts.Account, req ScopeRequest) error {
	if len(req.Repositories) == 0 && len(req.RepositoryIDs) == 0 {
		sc.AllRepositories = inst.Selection == apps.SelectionAll
		if !sc.AllRepositories {
			sc.RepositoryIDs = inst.RepositoryIDs
		}
		return nil
	}
	bad := apierr.Unprocessable("There is at least one repository that does not exist or is not accessible to the parent installation.")
	add := func(r *repos.Repository, err error) error {
		if errors.Is(err, store.ErrNotFound) || err == nil && (r.Owner.ID != target.ID || !inst.Selects(r)) {
			return bad
		}
		if err == nil {
			sc.RepositoryIDs = append(sc.RepositoryIDs, r.ID)
		}
		return err
	}
	for _, id := range req.RepositoryIDs {
		if err := add(repos.ByID(ctx, q, id)); err != nil {
			return err
		}
	}
	for _, name := range req.Repositories {
		if err := add(repos.ByOwnerAndName(ctx, q, target.Login, name)); err != nil {
			return err
		}
	}
	return nil
}

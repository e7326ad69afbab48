package oauthweb

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"strings"
	"time"

	"forgeapi/internal/auth"
	"forgeapi/internal/oauth"
	"forgeapi/internal/store"
)

// The grant types of POST /login/oauth/access_token.
const (
	GrantAuthorizationCode = "authorization_code" // the default
	GrantRefreshToken      = "refresh_token"
	GrantDeviceCode        = "urn:ietf:params:oauth:grant-type:device_code"
)

// refreshPrefix marks an app's refresh token (the platform's are ghr_).
const refreshPrefix = "far_"

// TokenRequest is the body of POST /login/oauth/access_token.
type TokenRequest struct {
	GrantType    string
	ClientID     string
	ClientSecret string
	Code         string
	RedirectURI  string
	CodeVerifier string
	RefreshToken string
	DeviceCode   string
}

// Token is the answer of a successful exchange.
type Token struct {
	AccessToken string
	TokenType   string // bearer
	Scopes      auth.Scopes
	// ExpiresIn, RefreshToken and RefreshTokenExpiresIn are set for an
	// app's user access token only.
	ExpiresIn             int64
	RefreshToken          string
	RefreshTokenExpiresIn int64
}

// TokenError is an error of the token endpoints, which the platform
// answers with HTTP 200 and these fields.
type TokenError struct {
	Code        string // error
	Description string // error_description
	URI         string // error_uri
	// Interval is slow_down's new polling interval in seconds.
	Interval int64
}

func (e *TokenError) Error() string { return e.Code + ": " + e.Description }

func tokenError(ctx context.Context, code, description string) *TokenError {
	return &TokenError{Code: code, Description: description, URI: ErrorURI(ctx, code)}
}

func badCredentials(ctx context.Context) *TokenError {
	return tokenError(ctx, "incorrect_client_credentials", "The client_id and/or client_secret passed are incorrect.")
}

func badCode(ctx context.Context) *TokenError {
	return tokenError(ctx, "bad_verification_code", "The code passed is incorrect or expired.")
}

// Exchange answers POST /login/oauth/access_token: it turns an
// authorization code, a refresh token or an approved device code into a
// token. Every refusal is a *TokenError with the platform's code.
func (s *Service) Exchange(ctx context.Context, r TokenRequest) (*Token, error) {
	switch r.GrantType {
	case "", GrantAuthorizationCode:
		return s.exchangeCode(ctx, r)
	case GrantRefreshToken:
		return s.refresh(ctx, r)
	case GrantDeviceCode:
		return s.pollDevice(ctx, r)
	}
	return nil, tokenError(ctx, "unsupported_grant_type", "The grant type is not supported.")
}

// authenticateClient returns the client with the request's id and secret.
func (s *Service) authenticateClient(ctx context.Context, r TokenRequest) (*client, error) {
	c, err := clientByID(ctx, s.DB, r.ClientID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, badCredentials(ctx)
	}
	if err != nil {
		return nil, err
	}
	if !c.CheckSecret(r.ClientSecret) {
		return nil, badCredentials(ctx)
	}
	return c, nil
}

// grantOf is who and what a token is issued for.
type grantOf struct {
	userID int64
	scopes auth.Scopes
}

// exchangeCode redeems an authorization code. The code is used up by the
// first exchange that names it with its client, whether or not its
// redirect_uri and code_verifier are right: a code is never worth a
// second try.
func (s *Service) exchangeCode(ctx context.Context, r TokenRequest) (*Token, error) {
	c, err := s.authenticateClient(ctx, r)
	if err != nil {
		return nil, err
	}
	if r.Code == "" {
		return nil, badCode(ctx)
	}
	var (
		g                    grantOf
		scopes, redirect     string
		challenge, challMeth string
	)
	oauthAppID, appID := c.ids()
	err = s.DB.QueryRowContext(ctx, `
		UPDATE oauth_codes SET used_at = $1
		WHERE code_hash = $2 AND used_at IS NULL AND expires_at > $1
		  AND (oauth_app_id = $3 OR app_id = $4)
		RETURNING user_id, scopes, redirect_uri, code_challenge, code_challenge_method`,
		s.now(), auth.HashToken(r.Code), oauthAppID, appID).Scan(&g.userID, &scopes, &redirect, &challenge, &challMeth)
	if err = store.Normalize(err); errors.Is(err, store.ErrNotFound) {
		return nil, badCode(ctx)
	} else if err != nil {
		return nil, err
	}
	if r.RedirectURI != "" && (redirect != "" && r.RedirectURI != redirect ||
		redirect == "" && !RedirectAllowed(c.CallbackURL, r.RedirectURI)) {
		return nil, tokenError(ctx, "redirect_uri_mismatch", "The redirect_uri MUST match the registered callback URL for this application.")
	}
	if challenge != "" && !verifierMatches(r.CodeVerifier, challenge) {
		return nil, tokenError(ctx, "bad_verification_code", "The code_verifier does not match the code_challenge.")
	}
	g.scopes = auth.ParseScopes(scopes).Normalize()
	return s.issue(ctx, c, g)
}

// verifierMatches reports whether the PKCE verifier's S256 challenge is
// challenge.
func verifierMatches(verifier, challenge string) bool {
	if len(verifier) < 43 || len(verifier) > 128 {
		return false
	}
	sum := sha256.Sum256([]byte(verifier))
	got := base64.RawURLEncoding.EncodeToString(sum[:])
	return subtle.ConstantTimeCompare([]byte(got), []byte(challenge)) == 1
}

// issue makes the token of a grant: an OAuth token of the application's
// grant, or an app's user access token with its refresh token.
func (s *Service) issue(ctx context.Context, c *client, g grantOf) (*Token, error) {
	if !c.IsApp() {
		z, err := s.OAuth.Create(ctx, g.userID, oauth.NewAuthorization{Scopes: g.scopes, App: c.OAuthApp})
		if err != nil {
			return nil, err
		}
		return &Token{AccessToken: z.Token, TokenType: "bearer", Scopes: z.Scopes}, nil
	}
	var t *Token
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		var err error
		t, err = s.issueUserToken(ctx, tx, c, g.userID)
		return err
	})
	return t, err
}

// issueUserToken creates an app's user access token and its refresh
// token. The token acts as the user with the app's permissions on the
// repositories of the app's installation on the user's account (none
// when the app is not installed there).
func (s *Service) issueUserToken(ctx context.Context, tx store.Q, c *client, userID int64) (*Token, error) {
	now := s.now()
	expires := now.Add(UserTokenLifetime)
	spec := auth.TokenSpec{Kind: auth.KindAppUser, UserID: userID, ResourceOwnerID: userID,
		Grant: c.App.Permissions, ExpiresAt: &expires}
	if err := s.installationSelection(ctx, tx, c.App.ID, userID, &spec); err != nil {
		return nil, err
	}
	created, err := auth.CreateToken(ctx, tx, spec)
	if err != nil {
		return nil, err
	}
	refresh := refreshPrefix + auth.RandomString(36)
	_, err = tx.ExecContext(ctx, `INSERT INTO app_refresh_tokens (token_hash, app_id, user_id, access_token_id, expires_at, created_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, auth.HashToken(refresh), c.App.ID, userID, created.ID, now.Add(RefreshTokenLifetime), now)
	if err != nil {
		return nil, store.Normalize(err)
	}
	return &Token{AccessToken: created.Value, TokenType: "bearer", Scopes: auth.Scopes{},
		ExpiresIn: int64(UserTokenLifetime / time.Second), RefreshToken: refresh,
		RefreshTokenExpiresIn: int64(RefreshTokenLifetime / time.Second)}, nil
}

// installationSelection sets the token's repositories to those of the
// app's installation on the user's account.
func (s *Service) installationSelection(ctx context.Context, q store.Q, appID, userID int64, spec *auth.TokenSpec) error {
	var selection, ids string
	err := q.QueryRowContext(ctx, `SELECT repository_selection, repository_ids FROM app_installations
		WHERE app_id = $1 AND account_id = $2 AND suspended_at IS NULL`, appID, userID).Scan(&selection, &ids)
	if err = store.Normalize(err); errors.Is(err, store.ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	if selection == "all" {
		spec.AllRepositories = true
		return nil
	}
	spec.RepositoryIDs = parseIDs(ids)
	return nil
}

// parseIDs reads a JSON array of ids ("[1,2]").
func parseIDs(s string) []int64 {
	var out []int64
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == '[' || r == ']' || r == ',' || r == ' ' }) {
		var v int64
		for _, d := range f {
			if d < '0' || d > '9' {
				v = -1
				break
			}
			v = v*10 + int64(d-'0')
		}
		if v > 0 {
			out = append(out, v)
		}
	}
	return out
}

// refresh rotates an app's refresh token: the old refresh token and its
// access token stop working, and a new pair is returned.
func (s *Service) refresh(ctx context.Context, r TokenRequest) (*Token, error) {
	c, err := s.authenticateClient(ctx, r)
	if err != nil {
		return nil, err
	}
	bad := tokenError(ctx, "bad_refresh_token", "The refresh token passed is incorrect or expired.")
	if !c.IsApp() || r.RefreshToken == "" {
		return nil, bad
	}
	var t *Token
	err = s.DB.Tx(ctx, func(tx *store.Tx) error {
		var userID, tokenID int64
		err := tx.QueryRowContext(ctx, `DELETE FROM app_refresh_tokens WHERE token_hash = $1 AND app_id = $2 AND expires_at > $3
			RETURNING user_id, access_token_id`, auth.HashToken(r.RefreshToken), c.App.ID, s.now()).Scan(&userID, &tokenID)
		if err = store.Normalize(err); errors.Is(err, store.ErrNotFound) {
			return bad
		} else if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM tokens WHERE id = $1`, tokenID); err != nil {
			return err
		}
		t, err = s.issueUserToken(ctx, tx, c, userID)
		return err
	})
	return t, err
}

// pollDevice answers a poll of a device code: authorization_pending until
// the user decides, slow_down (with the interval raised by 5 seconds)
// when polled faster than the interval, access_denied, expired_token, or
// the token, once.
func (s *Service) pollDevice(ctx context.Context, r TokenRequest) (*Token, error) {
	c, err := clientByID(ctx, s.DB, r.ClientID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, badCredentials(ctx)
	}
	if err != nil {
		return nil, err
	}
	if !c.DeviceFlow {
		return nil, tokenError(ctx, "device_flow_disabled", "Device Flow must be explicitly enabled for this App")
	}
	var g grantOf
	var outcome *TokenError
	err = s.DB.Tx(ctx, func(tx *store.Tx) error {
		var err error
		g, outcome, err = s.advanceDevice(ctx, tx, c, r.DeviceCode)
		return err
	})
	if err != nil {
		return nil, err
	}
	if outcome != nil {
		return nil, outcome
	}
	return s.issue(ctx, c, g)
}

// advanceDevice records a poll of the device code and returns the grant
// to issue, or the TokenError to answer. The approved code is used up
// in the same transaction, so that one poll only gets its token.
func (s *Service) advanceDevice(ctx context.Context, tx store.Q, c *client, deviceCode string) (grantOf, *TokenError, error) {
	var (
		g        grantOf
		id       int64
		state    string
		userID   *int64
		scopes   string
		interval int64
		lastPoll *time.Time
		expires  time.Time
	)
	oauthAppID, appID := c.ids()
	err := tx.QueryRowContext(ctx, `SELECT id, state, user_id, scopes, interval_seconds, last_poll_at, expires_at
		FROM oauth_device_codes WHERE device_code_hash = $1 AND (oauth_app_id = $2 OR app_id = $3)`+forUpdate(s.DB),
		auth.HashToken(deviceCode), oauthAppID, appID).Scan(&id, &state, &userID, &scopes, &interval, &lastPoll, &expires)
	if err = store.Normalize(err); errors.Is(err, store.ErrNotFound) || deviceCode == "" {
		return g, tokenError(ctx, "incorrect_device_code", "The device_code provided is not valid."), nil
	} else if err != nil {
		return g, nil, err
	}
	now := s.now()
	if !now.Before(expires) || state == deviceUsed {
		return g, tokenError(ctx, "expired_token", "The device_code has expired."), nil
	}
	if lastPoll != nil && now.Before(lastPoll.Add(time.Duration(interval)*time.Second)) {
		interval += 5
		_, err := tx.ExecContext(ctx, `UPDATE oauth_device_codes SET interval_seconds = $1, last_poll_at = $2 WHERE id = $3`,
			interval, now, id)
		e := tokenError(ctx, "slow_down", "Too many requests have been made in the same timeframe.")
		e.Interval = interval
		return g, e, err
	}
	next := state
	if state == deviceApproved {
		next = deviceUsed
	}
	if _, err := tx.ExecContext(ctx, `UPDATE oauth_device_codes SET last_poll_at = $1, state = $2 WHERE id = $3`, now, next, id); err != nil {
		return g, nil, err
	}
	switch state {
	case devicePending:
		return g, tokenError(ctx, "authorization_pending", "The authorization request is still pending."), nil
	case deviceDenied:
		return g, tokenError(ctx, "access_denied", "The authorization request was denied."), nil
	}
	g.userID, g.scopes = *userID, auth.ParseScopes(scopes).Normalize()
	return g, nil, nil
}

// forUpdate locks the row read on PostgreSQL (SQLite's write
// transactions are serial already).
func forUpdate(db *store.DB) string {
	if db.Dialect == store.Postgres {
		return ` FOR UPDATE`
	}
	return ``
}

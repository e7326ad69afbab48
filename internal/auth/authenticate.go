package auth

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"forgeapi/internal/apierr"
	"forgeapi/internal/secretbox"
	"forgeapi/internal/store"
)

// Authenticator turns a request's credentials into a Principal.
type Authenticator struct {
	DB  *store.DB
	Now func() time.Time // defaults to time.Now
	// Secrets opens the sealed TOTP seeds of accounts (see SealTOTPSecret).
	Secrets *secretbox.Box
	// Tokens, when set, caches token lookups (see NewTokenCache); nil
	// looks every token up in the database.
	Tokens *TokenCache
	// Limits bound failed password and one-time-password attempts.
	Limits LoginLimits
	// Clone verifies clone tokens (KindClone); nil refuses them.
	Clone *CloneTokens
	// AppKeys finds apps' public keys for their JWTs (AuthenticateApp);
	// nil refuses every JWT.
	AppKeys *AppKeys
}

// TokenCache caches what a token authenticates as, by the token's hash,
// so that a client polling with a token costs no query per request. It
// is a store.ReadCache over the token and account tables: revoking or
// changing a token, or changing its account, takes effect at once.
type TokenCache = store.ReadCache[[sha256.Size]byte, *tokenRecord]

// NewTokenCache returns a token cache over db keeping lookups for at
// most ttl (0: store.DefaultReadCacheTTL).
func NewTokenCache(db *store.DB, ttl time.Duration) *TokenCache {
	return store.NewReadCache[[sha256.Size]byte, *tokenRecord](db, ttl, "tokens", "accounts", "oauth_apps",
		"app_installations", "apps")
}

// tokenRecord is what a token's lookup finds; shared by the requests that
// use the token, it is never modified.
type tokenRecord struct {
	account   Account
	token     Token
	expiresAt *time.Time
	// suspended is set for a token of an installation that is suspended.
	suspended bool
	// userSuspended is set for a token of a suspended user.
	userSuspended bool
	// cacheKey and scopesHeader are the principal's CacheKey and the
	// token's X-OAuth-Scopes value, made once for all its requests.
	cacheKey, scopesHeader string
}

func (a *Authenticator) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

// ErrBadCredentials is the 401 for a wrong password or unknown token.
func ErrBadCredentials() *apierr.Error { return apierr.Unauthorized("Bad credentials") }

// ErrAccountSuspended is the platform's 403 for the credentials of a user
// a site administrator suspended (tokens, password, clone tokens).
func ErrAccountSuspended() *apierr.Error {
	return apierr.Forbidden("Sorry. Your account was suspended.")
}

// Authenticate reads the Authorization header. No header gives an
// anonymous principal; a header that does not authenticate gives a 401
// *apierr.Error. Tokens are found by their SHA-256 hash, so a token costs
// one indexed lookup, never a slow hash.
func (a *Authenticator) Authenticate(ctx context.Context, r *http.Request) (*Principal, error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return &Principal{}, nil
	}
	scheme, cred, _ := strings.Cut(h, " ")
	cred = strings.TrimSpace(cred)
	switch { // the scheme is case-insensitive (RFC 9110)
	case strings.EqualFold(scheme, "token"), strings.EqualFold(scheme, "bearer"):
		if LooksLikeJWT(cred) {
			// An app's JWT authenticates only the routes made for it
			// (AuthenticateApp); everywhere else it is no credential.
			return nil, ErrBadCredentials()
		}
		return a.byToken(ctx, cred)
	case strings.EqualFold(scheme, "basic"):
		raw, err := base64.StdEncoding.DecodeString(cred)
		if err != nil {
			return nil, ErrBadCredentials()
		}
		login, secret, ok := strings.Cut(string(raw), ":")
		if !ok {
			return nil, ErrBadCredentials()
		}
		if LooksLikeToken(secret) || looksLikeCloneToken(secret) {
			return a.byToken(ctx, secret)
		}
		return a.byPassword(ctx, login, secret, ClientAddress(r))
	}
	return nil, ErrBadCredentials()
}

// byPassword authenticates a login and password from the client address
// addr, within the limits of failed attempts: a blocked account is
// refused before its password is checked, a wrong password of an
// existing user is counted, and the right one resets the count of its
// address (for an account with two-factor authentication, only once the
// one-time password is right too; see CheckOTP).
func (a *Authenticator) byPassword(ctx context.Context, login, password, addr string) (*Principal, error) {
	acct, hash, hasTOTP, suspended, failures, err := a.lookUpLogin(ctx, login, addr)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, ErrBadCredentials()
		}
		return nil, err
	}
	now := a.now()
	if until := a.Limits.blockedUntil(failures, now); !until.IsZero() {
		return nil, ErrLoginBlocked(until, now)
	}
	if !CheckPassword(hash, password) {
		if err := a.recordLoginFailure(ctx, acct.ID, addr); err != nil {
			return nil, err
		}
		return nil, ErrBadCredentials()
	}
	if suspended {
		return nil, ErrAccountSuspended()
	}
	p := &Principal{Account: &acct, Method: MethodPassword, loginAddr: addr, loginFailures: failures.pair.failures}
	if p.loginFailures > 0 && !hasTOTP {
		if err := a.resetLoginFailures(ctx, acct.ID, addr); err != nil {
			return nil, err
		}
		p.loginFailures = 0
	}
	return p, nil
}

// lookUpLogin reads the user with the login, its password hash, whether
// it has a TOTP secret, and its counts of failed attempts from addr and
// overall, in one query. An unknown login is store.ErrNotFound.
func (a *Authenticator) lookUpLogin(ctx context.Context, login, addr string) (acct Account, hash string, hasTOTP, suspended bool, f loginFailures, err error) {
	rows, err := a.DB.QueryContext(ctx, `
		SELECT a.id, a.login, a.type, a.site_admin, a.password_hash, a.totp_secret <> '', a.suspended_at IS NOT NULL,
		       f.address, f.failures, f.reset_at
		FROM accounts a LEFT JOIN login_failures f ON f.account_id = a.id AND f.address IN ($2, $3)
		WHERE lower(a.login) = lower($1) AND a.type = 'User'`, login, addr, accountAddress)
	if err != nil {
		return acct, "", false, false, f, err
	}
	defer rows.Close()
	found := false
	for rows.Next() {
		var (
			address  *string
			failures *int
			resetAt  *time.Time
		)
		if err := rows.Scan(&acct.ID, &acct.Login, &acct.Type, &acct.SiteAdmin, &hash, &hasTOTP, &suspended,
			&address, &failures, &resetAt); err != nil {
			return acct, "", false, false, f, err
		}
		found = true
		if address == nil || failures == nil || resetAt == nil {
			continue
		}
		c := failureCount{failures: *failures, resetAt: *resetAt}
		if *address == accountAddress {
			f.account = c
		} else {
			f.pair = c
		}
	}
	if err := rows.Err(); err != nil {
		return acct, "", false, false, f, err
	}
	if !found {
		return acct, "", false, false, f, store.ErrNotFound
	}
	return acct, hash, hasTOTP, suspended, f, nil
}

func (a *Authenticator) byToken(ctx context.Context, token string) (*Principal, error) {
	if token == "" {
		return nil, ErrBadCredentials()
	}
	if looksLikeCloneToken(token) {
		return a.byCloneToken(ctx, token)
	}
	sum := sha256Sum(token)
	load := func() (*tokenRecord, error) { return a.lookUpToken(ctx, HashToken(token)) }
	var rec *tokenRecord
	var err error
	if a.Tokens != nil {
		rec, err = a.Tokens.Get(sum, load)
	} else {
		rec, err = load()
	}
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, ErrBadCredentials()
		}
		return nil, err
	}
	if rec.expiresAt != nil && !a.now().Before(*rec.expiresAt) {
		return nil, ErrBadCredentials()
	}
	if rec.suspended {
		return nil, ErrInstallationSuspended()
	}
	if rec.userSuspended {
		return nil, ErrAccountSuspended()
	}
	// The request's own copies of the account and token, made with the
	// principal in one allocation.
	own := &tokenPrincipal{account: rec.account, token: rec.token}
	own.token.Sum, own.token.scopesHeader = sum, rec.scopesHeader
	own.Principal = Principal{Account: &own.account, Method: MethodToken, Token: &own.token, cacheKey: rec.cacheKey}
	return &own.Principal, nil
}

// tokenPrincipal is a token's principal with its account and token.
type tokenPrincipal struct {
	Principal
	account Account
	token   Token
}

// sha256Sum is sha256.Sum256 of a string, without copying a token of
// usual length to the heap.
func sha256Sum(s string) [sha256.Size]byte {
	if len(s) <= 128 {
		var buf [128]byte
		return sha256.Sum256(append(buf[:0], s...))
	}
	return sha256.Sum256([]byte(s))
}

// byCloneToken authenticates a clone token as its user, with a Token of
// KindClone that selects its one repository.
func (a *Authenticator) byCloneToken(ctx context.Context, token string) (*Principal, error) {
	claims, ok := a.Clone.verify(token)
	if !ok {
		return nil, ErrBadCredentials()
	}
	var acct Account
	var suspended bool
	err := a.DB.QueryRowContext(ctx, `SELECT id, login, type, site_admin, suspended_at IS NOT NULL FROM accounts WHERE id = $1`,
		claims.userID).Scan(&acct.ID, &acct.Login, &acct.Type, &acct.SiteAdmin, &suspended)
	if err != nil {
		if err = store.Normalize(err); errors.Is(err, store.ErrNotFound) {
			return nil, ErrBadCredentials()
		}
		return nil, err
	}
	if suspended {
		return nil, ErrAccountSuspended()
	}
	t := &Token{Kind: KindClone, RepositoryIDs: []int64{claims.repoID}}
	return &Principal{Account: &acct, Method: MethodToken, Token: t}, nil
}

// lookUpToken reads the token with the hash (see HashToken) and its account; a token
// that does not exist is store.ErrNotFound.
func (a *Authenticator) lookUpToken(ctx context.Context, hash string) (*tokenRecord, error) {
	var (
		rec                    tokenRecord
		scopes, grant          string
		repoIDs                string
		ownerID, appID, instID *int64
	)
	acct, t := &rec.account, &rec.token
	err := a.DB.QueryRowContext(ctx, `
		SELECT t.id, t.kind, t.scopes, t.permissions, t.resource_owner_id, t.all_repositories,
		       t.repository_ids, t.app_id, t.expires_at, a.id, a.login, a.type, a.site_admin,
		       t.installation_id, i.suspended_at IS NOT NULL, a.suspended_at IS NOT NULL
		FROM tokens t JOIN accounts a ON a.id = t.user_id
		LEFT JOIN app_installations i ON i.id = t.installation_id
		WHERE t.token_hash = $1`, hash).Scan(
		&t.ID, &t.Kind, &scopes, &grant, &ownerID, &t.AllRepositories,
		&repoIDs, &appID, &rec.expiresAt, &acct.ID, &acct.Login, &acct.Type, &acct.SiteAdmin,
		&instID, &rec.suspended, &rec.userSuspended)
	if err != nil {
		return nil, store.Normalize(err)
	}
	t.Scopes = ParseScopes(scopes)
	rec.scopesHeader = t.Scopes.String()
	if t.Grant, err = ParseGrantJSON(grant); err != nil {
		return nil, err
	}
	if repoIDs != "[]" { // the column's default: most tokens select no repositories
		if err := json.Unmarshal([]byte(repoIDs), &t.RepositoryIDs); err != nil {
			return nil, err
		}
	}
	if ownerID != nil {
		t.ResourceOwnerID = *ownerID
	}
	if appID != nil {
		t.AppID = *appID
	}
	if instID != nil {
		t.InstallationID = *instID
	}
	rec.cacheKey = (&Principal{Account: acct, Token: t}).CacheKey()
	return &rec, nil
}

// CheckOTP verifies the X-Service-OTP code of a password-authenticated
// user who has a TOTP secret. Users without one, and token callers, pass.
// A missing, wrong or replayed code is a 401 carrying the header
// `X-Service-OTP: required; app` (and the alias X-GitHub-OTP). A wrong
// code counts as a failed login attempt (see LoginLimits); a right one
// resets the count of the client's address.
func (a *Authenticator) CheckOTP(ctx context.Context, p *Principal, code string) error {
	if p.Anonymous() || p.Method != MethodPassword || p.OTPStep != 0 {
		return nil
	}
	var stored string
	err := a.DB.QueryRowContext(ctx, `SELECT totp_secret FROM accounts WHERE id = $1`, p.Account.ID).Scan(&stored)
	if err != nil {
		return store.Normalize(err)
	}
	if stored == "" {
		return nil
	}
	secret, err := openTOTPSecret(a.Secrets, stored)
	if err != nil {
		return err
	}
	required := func(msg string) error {
		// The platform's own header name is sent too: clients such as
		// go-github recognise the challenge by it.
		return apierr.Unauthorized("%s", msg).WithHeader("X-Service-OTP", "required; app").
			WithHeader("X-GitHub-OTP", "required; app")
	}
	if code == "" {
		return required("Must specify two-factor authentication OTP code.")
	}
	step, ok := ValidateTOTP(secret, strings.TrimSpace(code), a.now())
	if !ok {
		if err := a.recordLoginFailure(ctx, p.Account.ID, p.loginAddr); err != nil {
			return err
		}
		return required("Must specify two-factor authentication OTP code.")
	}
	res, err := a.DB.ExecContext(ctx,
		`UPDATE accounts SET totp_last_step = $1 WHERE id = $2 AND totp_last_step < $1`, step, p.Account.ID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return required("The two-factor authentication code was already used; wait for the next one.")
	}
	p.OTPStep = step
	if p.loginFailures > 0 {
		if err := a.resetLoginFailures(ctx, p.Account.ID, p.loginAddr); err != nil {
			return err
		}
		p.loginFailures = 0
	}
	return nil
}

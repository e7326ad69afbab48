package auth

import (
	"context"
	"slices"
	"strings"
)

// Account is the identity a request acts as.
type Account struct {
	ID        int64
	Login     string
	Type      string // User or Bot
	SiteAdmin bool
}

// Token is an authenticated token's grants.
type Token struct {
	ID              int64
	Kind            Kind
	Scopes          Scopes // classic and OAuth tokens
	Grant           Grant  // fine-grained kinds
	ResourceOwnerID int64  // fine-grained kinds: the user or organization the token acts on
	AllRepositories bool
	RepositoryIDs   []int64
	AppID           int64 // OAuth tokens: the application that holds it
	// InstallationID is, for an installation token minted through an
	// app's installation, that installation (0 for the tokens the admin
	// command mints without an app).
	InstallationID int64
	// Sum is the SHA-256 of the token's value (the audit log's
	// hashed_token); zero for clone tokens.
	Sum [32]byte
	// scopesHeader is ScopesHeader made once for a cached token ("":
	// made on each call).
	scopesHeader string
}

// ScopesHeader is the X-OAuth-Scopes value of a classic or OAuth token:
// its scopes joined with ", ".
func (t *Token) ScopesHeader() string {
	if t.scopesHeader != "" {
		return t.scopesHeader
	}
	return t.Scopes.String()
}

// FineGrained reports whether the token is one of the permission-based
// kinds (fine-grained PAT, installation, app user).
func (t *Token) FineGrained() bool {
	return t.Kind == KindFineGrained || t.Kind == KindInstallation || t.Kind == KindAppUser
}

// Selects reports whether a fine-grained token's repository selection
// includes the repository.
func (t *Token) Selects(repoID, ownerID int64) bool {
	if ownerID != t.ResourceOwnerID {
		return false
	}
	return t.AllRepositories || slices.Contains(t.RepositoryIDs, repoID)
}

// Method is how a request authenticated.
type Method int

// The authentication methods.
const (
	MethodNone     Method = iota // anonymous
	MethodPassword               // HTTP Basic with login and password
	MethodToken                  // a token, in Authorization or as a Basic password
	MethodAppJWT                 // an app's JSON web token (routes with Rule.AppJWT only)
	MethodSSHKey                 // a user's SSH key (git over SSH only)
)

// Principal is who a request acts as and with what.
type Principal struct {
	Account *Account // nil when anonymous
	Method  Method
	Token   *Token // set when Method is MethodToken
	// App is the app a JSON web token authenticated (Method
	// MethodAppJWT); Account is nil then: an app is not a user, and only
	// the routes whose Rule has AppJWT ever see such a principal.
	App *App
	// OTPStep is the TOTP step verified for this request (0 when none), so
	// that a second check in the same request does not count as a replay.
	OTPStep int64
	// loginAddr and loginFailures are, for a password login, the client
	// address and its count of failed attempts, which CheckOTP adds to or
	// resets.
	loginAddr     string
	loginFailures int
	// cacheKey is CacheKey made once for a cached token ("": made on
	// each call).
	cacheKey string
}

// Anonymous reports whether the request carries no credentials.
func (p *Principal) Anonymous() bool { return p == nil || p.Account == nil && p.App == nil }

// UserID returns the account id, or 0 when anonymous or an app.
func (p *Principal) UserID() int64 {
	if p == nil || p.Account == nil {
		return 0
	}
	return p.Account.ID
}

// FineGrained reports whether the principal uses a permission-based token.
func (p *Principal) FineGrained() bool {
	return p != nil && p.Token != nil && p.Token.FineGrained()
}

// ScopeBased reports whether the principal uses a classic or OAuth token.
func (p *Principal) ScopeBased() bool {
	return p != nil && p.Token != nil && (p.Token.Kind == KindClassic || p.Token.Kind == KindOAuth)
}

// CloneOnly reports whether the principal uses a clone token (KindClone):
// it may only clone the one repository the token selects.
func (p *Principal) CloneOnly() bool {
	return p != nil && p.Token != nil && p.Token.Kind == KindClone
}

// CacheKey distinguishes callers whose responses may differ, for ETags.
func (p *Principal) CacheKey() string {
	if p != nil && p.cacheKey != "" {
		return p.cacheKey
	}
	if p.Anonymous() {
		return "anon"
	}
	if p.App != nil {
		return "app" + itoa(p.App.ID)
	}
	var b strings.Builder
	b.WriteString("u")
	b.WriteString(itoa(p.Account.ID))
	if p.Token != nil {
		b.WriteString("t")
		b.WriteString(itoa(p.Token.ID))
	}
	return b.String()
}

func itoa(v int64) string {
	var buf [20]byte
	i := len(buf)
	if v == 0 {
		return "0"
	}
	for v > 0 {
		i--
		buf[i] = byte('0' + v%10)
		v /= 10
	}
	return string(buf[i:])
}

// PrincipalKey is the context key of the principal: WithPrincipal
// stores it under this key, and a context that carries several request
// values in one (the API server's) answers Value(PrincipalKey{}) with the
// *Principal.
type PrincipalKey struct{}

// WithPrincipal returns a context carrying the principal.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, PrincipalKey{}, p)
}

// PrincipalFrom returns the request's principal; never nil (anonymous
// when the context carries none).
func PrincipalFrom(ctx context.Context) *Principal {
	if p, ok := ctx.Value(PrincipalKey{}).(*Principal); ok && p != nil {
		return p
	}
	return &Principal{}
}

// RoleKey is the context key of the caller's role on the route's target:
// WithRole stores it under this key, as the access guard does in the API
// server's request context.
type RoleKey struct{}

// WithRole returns a context carrying the caller's role on the route's
// target, as the access guard computed it.
func WithRole(ctx context.Context, r Role) context.Context {
	return context.WithValue(ctx, RoleKey{}, r)
}

// RoleFrom returns the caller's role on the route's target.
func RoleFrom(ctx context.Context) Role { r, _ := ctx.Value(RoleKey{}).(Role); return r }

package auth

import "strings"

// Target names the resource in a route's path that the access guard
// resolves and checks before the handler runs.
type Target int

// The route targets.
const (
	TargetNone       Target = iota // nothing in the path
	TargetSelf                     // the authenticated user (/user/...)
	TargetUser                     // {username}
	TargetRepo                     // {owner}/{repo}
	TargetOrg                      // {org}
	TargetEnterprise               // {enterprise}
)

// Role is the caller's standing on a target, ordered: a higher role
// includes the lower ones. On organizations and enterprises, RoleRead is
// membership and RoleAdmin is ownership.
type Role int

// The roles.
const (
	RoleNone Role = iota
	RoleRead
	RoleWrite
	RoleAdmin
)

// TokenTypes is the set of permission-based token kinds a route accepts,
// as the permission tables name them.
type TokenTypes uint8

// The permission-based token types.
const (
	UAT  TokenTypes = 1 << iota // app user access token
	IAT                         // app installation access token
	FPAT                        // fine-grained personal access token
)

// AllTokenTypes accepts every permission-based token kind.
const AllTokenTypes = UAT | IAT | FPAT

// Allows reports whether the set accepts a token of the kind.
func (t TokenTypes) Allows(k Kind) bool {
	switch k {
	case KindAppUser:
		return t&UAT != 0
	case KindInstallation:
		return t&IAT != 0
	case KindFineGrained:
		return t&FPAT != 0
	}
	return true
}

// String lists the set as the permission tables do.
func (t TokenTypes) String() string {
	var out []string
	if t&UAT != 0 {
		out = append(out, "UAT")
	}
	if t&IAT != 0 {
		out = append(out, "IAT")
	}
	if t&FPAT != 0 {
		out = append(out, "fine-grained PAT")
	}
	return strings.Join(out, ", ")
}

// Rule is what a route declares about who may call it. The HTTP layer
// enforces it before the handler runs.
type Rule struct {
	// Target is the path resource that is resolved and checked.
	Target Target
	// Role is the minimum role the caller needs on the target.
	Role Role
	// Public serves anonymous callers, for public targets only.
	Public bool
	// Unauthorized401 answers anonymous callers of a route that is not
	// Public with 401 "Requires authentication": set it where the
	// platform's description documents a 401 for the operation. Without
	// it they get the 404 the platform answers for what it does not reveal.
	Unauthorized401 bool
	// Scopes are the classic/OAuth scopes of which a scope-based token
	// needs one (with scope inheritance). Empty means the defaults of the
	// target: `repo` for private repositories, `public_repo` for writes to
	// public ones.
	Scopes []string
	// Permissions are the fine-grained alternatives of which a
	// permission-based token needs one.
	Permissions Alternatives
	// TokenTypes are the permission-based token kinds accepted; zero
	// refuses them all.
	TokenTypes TokenTypes
	// FineGrainedOnly accepts only the permission-based token kinds in
	// TokenTypes: classic and OAuth tokens and passwords get a 403.
	FineGrainedOnly bool
	// PasswordOnly accepts only HTTP Basic with login and password.
	PasswordOnly bool
	// ClientCredentials marks a route an OAuth application calls with HTTP
	// Basic client_id:client_secret (the application token endpoints):
	// the Authorization header is not read as a user's credentials, the
	// request reaches the handler as anonymous, and the handler checks the
	// application's credentials itself.
	ClientCredentials bool
	// AppJWT marks a route an app calls as itself, with a JSON web token
	// signed by its private key (Authenticator.AuthenticateApp): the
	// principal is the app (Principal.App), every other credential is a
	// 401, and a JWT on any other route is no credential at all.
	AppJWT bool
	// OTP requires a valid X-Service-OTP code from a password-authenticated
	// user who has two-factor authentication set up.
	OTP bool
	// Extra is the "additional permissions" note of the permission tables.
	Extra string
}

// Package access decides what a principal may do with the resource a
// route's path names. Its Guard resolves the route's target ({owner}/{repo},
// {org}, {enterprise}, {username}), computes the caller's role on it and
// applies the token's limits (scopes, fine-grained permissions and
// repository selection, SAML enforcement, migration locks). Callers that
// may not see a resource get 404, never 403.
package access

import (
	"context"
	"errors"
	"net/http"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// Guard implements httpapi.Guard.
type Guard struct {
	DB *store.DB
	// Accounts, when set, serves the {username} and {org} lookups from
	// its cache; nil reads them from DB.
	Accounts *accounts.Cache
	// Repos, when set, serves the {owner}/{repo} lookups with the
	// caller's standing from its cache; nil reads them from DB.
	Repos *repos.StandingCache
}

// repository returns the repository OWNER/NAME with the user's standing
// toward it, through the guard's cache when it has one.
func (g *Guard) repository(ctx context.Context, owner, name string, userID int64) (*repos.Repository, repos.Standing, error) {
	if g.Repos == nil {
		return repos.ByOwnerAndNameWithMembership(ctx, g.DB, owner, name, userID)
	}
	return g.Repos.ByOwnerAndNameWithMembership(ctx, g.DB, owner, name, userID)
}

// account returns the account with the login.
func (g *Guard) account(ctx context.Context, login string) (*accounts.Account, error) {
	if g.Accounts != nil {
		return g.Accounts.ByLogin(ctx, login)
	}
	return accounts.ByLogin(ctx, g.DB, login)
}

// Check resolves the rule's target and checks the principal against it.
func (g *Guard) Check(r *http.Request, p *auth.Principal, rule auth.Rule) (context.Context, error) {
	ctx := r.Context()
	write := r.Method != http.MethodGet && r.Method != http.MethodHead
	switch rule.Target {
	case auth.TargetRepo:
		out, err := g.checkRepo(ctx, p, rule, r.PathValue("owner"), r.PathValue("repo"), write)
		if isNotFound(err) {
			return nil, g.renamedRepo(r, p, err)
		}
		return out, err
	case auth.TargetOrg:
		return g.checkOrg(ctx, p, rule, r.PathValue("org"), write)
	case auth.TargetEnterprise:
		return g.checkEnterprise(ctx, p, rule, r.PathValue("enterprise"), write)
	case auth.TargetUser:
		a, err := g.account(ctx, r.PathValue("username"))
		if err != nil {
			return nil, notFoundOr(err)
		}
		if write {
			if err := writeRefusal(p, rule.Permissions, ownedBy(a.ID)); err != nil {
				return nil, err
			}
		}
		if err := checkTokenLimits(p, rule, tokenScope{public: true, write: write}); err != nil {
			return nil, err
		}
		return accounts.WithUser(ctx, a), nil
	case auth.TargetSelf:
		if p.Token != nil && p.Token.Kind == auth.KindInstallation {
			return nil, apierr.Forbidden("%s", httpapi.NotAccessibleMessage(p.Token.Kind))
		}
		if write {
			if err := writeRefusal(p, rule.Permissions, ownedBy(p.Account.ID)); err != nil {
				return nil, err
			}
		}
		if err := checkTokenLimits(p, rule, tokenScope{write: write}); err != nil {
			return nil, err
		}
		return withRole(ctx, auth.RoleAdmin), nil
	}
	if err := checkTokenLimits(p, rule, tokenScope{public: true, write: write}); err != nil {
		return nil, err
	}
	return ctx, nil
}

// writeRefusal is the check every write through the guard passes (and
// the GraphQL mutations, through RepoWriteRefusal): a permission-based
// token (fine-grained personal access token, app user or installation
// token) changes nothing outside its selection. reaches reports whether
// the token's selection holds the target: the repository, or the
// organization or user account as its resource owner. Outside it the
// platform gives such a token read access to public repositories and
// nothing more, whatever its user's own role there: the write is a 403
// "Resource not accessible by personal access token" (or "... by
// integration"). A write whose permissions are all of the user group
// (Starring, Watching, Followers) is the user's own action, taken for
// the token's user on a public repository or account, and passes.
// Classic and OAuth tokens and passwords pass: their scopes reach every
// repository their user may change.
func writeRefusal(p *auth.Principal, perms auth.Alternatives, reaches func(*auth.Token) bool) error {
	if !p.FineGrained() || perms.UserOnly() || reaches(p.Token) {
		return nil
	}
	return apierr.Forbidden("%s", httpapi.NotAccessibleMessage(p.Token.Kind))
}

// RepoWriteRefusal is writeRefusal for a change to the repository made
// outside a route's rule (a GraphQL mutation) that needs perms: nil when
// the principal's credentials may make it as far as their selection
// goes, else the 403 of a permission-based token that does not select
// the repository.
func RepoWriteRefusal(p *auth.Principal, repo *repos.Repository, perms auth.Alternatives) error {
	return writeRefusal(p, perms, selectsRepo(repo))
}

// selectsRepo reports whether a token's selection holds the repository.
func selectsRepo(repo *repos.Repository) func(*auth.Token) bool {
	return func(t *auth.Token) bool { return t.Selects(repo.ID, repo.Owner.ID) }
}

// ownedBy reports whether a token's resource owner is the account: an
// organization's or a user's own resources (the repositories a user
// creates) are in the reach of the tokens made for that account.
func ownedBy(accountID int64) func(*auth.Token) bool {
	return func(t *auth.Token) bool { return t.ResourceOwnerID == accountID }
}

// withRole returns ctx carrying the caller's role on the target, in the
// request's own context as the guard's other values (httpapi.WithTargetValue).
func withRole(ctx context.Context, r auth.Role) context.Context {
	return httpapi.WithTargetValue(ctx, auth.RoleKey{}, r)
}

// isNotFound reports whether err is the 404 of a target that is not there
// (or hidden).
func isNotFound(err error) bool {
	e, ok := errors.AsType[*apierr.Error](err)
	return ok && e.Status == http.StatusNotFound
}

func notFoundOr(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return apierr.NotFound()
	}
	return err
}

// tokenScope says what a token's limits are checked against.
type tokenScope struct {
	public   bool  // the target is public (reads need no permission)
	write    bool  // the request changes something
	ownerID  int64 // the target's owning account, for fine-grained selection
	selected bool  // a fine-grained token selects the target
}

// checkTokenLimits applies the route's scopes (classic and OAuth tokens)
// and fine-grained permissions (permission-based tokens). Public
// resources are read without permissions when the route is Public.
func checkTokenLimits(p *auth.Principal, rule auth.Rule, s tokenScope) error {
	switch {
	case p.ScopeBased():
		if len(rule.Scopes) > 0 && !p.Token.Scopes.GrantsAny(rule.Scopes) {
			return apierr.Forbidden("This token lacks the scope this endpoint needs; accepted scopes: %s.", joinScopes(rule.Scopes))
		}
	case p.FineGrained():
		if rule.Public && s.public && !s.write {
			return nil
		}
		grant := p.Token.Grant
		if !grant.Satisfies(rule.Permissions) && !(impliedMetadata(rule.Permissions)) {
			return apierr.Forbidden("%s", httpapi.NotAccessibleMessage(p.Token.Kind))
		}
	}
	return nil
}

// impliedMetadata reports whether the alternatives are satisfied by the
// metadata read permission that every fine-grained token holds.
func impliedMetadata(a auth.Alternatives) bool {
	return auth.Grant{"metadata": auth.Read}.Satisfies(a) && len(a) > 0
}

func joinScopes(s []string) string {
	out := ""
	for i, v := range s {
		if i > 0 {
			out += ", "
		}
		out += v
	}
	return out
}

// SAMLRefused reports whether the principal's credential is one that
// organizations enforcing SAML single sign-on refuse: an OAuth token made
// through the authorizations API. Code that reads such organizations'
// resources in bulk (lists, feeds) leaves them out for it.
func SAMLRefused(p *auth.Principal) bool {
	return p != nil && p.Token != nil && p.Token.Kind == auth.KindOAuth
}

// SAMLRefusal is the 403 for an OAuth token (one made through the
// authorizations API) on a resource of an organization that enforces SAML
// single sign-on, and nil for any other principal or owner. Code that
// reaches an organization's resources outside a route (git over HTTP)
// must call it too.
func SAMLRefusal(p *auth.Principal, org *accounts.Account) error {
	if SAMLRefused(p) && org != nil && org.IsOrg() && org.SAMLEnforced {
		return apierr.Forbidden("Resource protected by organization SAML enforcement. OAuth tokens made through the authorizations API cannot access organizations that enforce SAML single sign-on.")
	}
	return nil
}

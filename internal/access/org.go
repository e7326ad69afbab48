package access

import (
	"context"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/store"
)

func (g *Guard) checkOrg(ctx context.Context, p *auth.Principal, rule auth.Rule, login string, write bool) (context.Context, error) {
	org, err := g.account(ctx, login)
	if err == nil && !org.IsOrg() {
		err = store.ErrNotFound
	}
	if err != nil {
		return nil, notFoundOr(err)
	}
	role, err := OrgRole(ctx, g.DB, p, org)
	if err != nil {
		return nil, err
	}
	if rule.Role > auth.RoleNone && role == auth.RoleNone {
		return nil, apierr.NotFound()
	}
	if err := SAMLRefusal(p, org); err != nil {
		return nil, err
	}
	if write {
		// A token whose resource owner is another account is no member
		// here (OrgRole): the rules that need membership answered 404
		// above; the others (a user's own membership) are refused here.
		if err := writeRefusal(p, rule.Permissions, ownedBy(org.ID)); err != nil {
			return nil, err
		}
	}
	if err := checkTokenLimits(p, rule, tokenScope{public: rule.Role == auth.RoleNone}); err != nil {
		return nil, err
	}
	if role < rule.Role {
		if rule.Role >= auth.RoleAdmin {
			return nil, apierr.Forbidden("You must be an organization owner to do this.")
		}
		return nil, apierr.NotFound()
	}
	return withRole(accounts.WithOrg(ctx, org), role), nil
}

// OrgRole is the principal's standing in the organization: RoleAdmin for
// owners, RoleRead for members, RoleNone otherwise. A fine-grained token
// stands in the organization only when the organization is its resource
// owner; an installation token stands as an owner there, limited by its
// permissions.
func OrgRole(ctx context.Context, q store.Q, p *auth.Principal, org *accounts.Account) (auth.Role, error) {
	if p.Anonymous() {
		return auth.RoleNone, nil
	}
	if p.FineGrained() && p.Token.ResourceOwnerID != org.ID {
		return auth.RoleNone, nil
	}
	if p.Token != nil && p.Token.Kind == auth.KindInstallation {
		return auth.RoleAdmin, nil
	}
	memberRole, err := accounts.MemberRole(ctx, q, org.ID, p.Account.ID)
	switch {
	case err != nil:
		return auth.RoleNone, err
	case memberRole == accounts.RoleOwner:
		return auth.RoleAdmin, nil
	case memberRole == accounts.RoleMember:
		return auth.RoleRead, nil
	}
	return auth.RoleNone, nil
}

func (g *Guard) checkEnterprise(ctx context.Context, p *auth.Principal, rule auth.Rule, slug string, write bool) (context.Context, error) {
	ent, err := accounts.EnterpriseBySlug(ctx, g.DB, slug)
	if err != nil {
		return nil, notFoundOr(err)
	}
	if write {
		// No token names an enterprise as its resource owner: a user's
		// own token reaches the enterprises its user owns.
		if err := writeRefusal(p, rule.Permissions, func(*auth.Token) bool { return actsOnEnterprises(p) }); err != nil {
			return nil, err
		}
	}
	role, err := EnterpriseRole(ctx, g.DB, p, ent)
	if err != nil {
		return nil, err
	}
	if err := checkTokenLimits(p, rule, tokenScope{}); err != nil {
		return nil, err
	}
	if role < rule.Role {
		if p.FineGrained() && !actsOnEnterprises(p) {
			return nil, apierr.Forbidden("%s", httpapi.NotAccessibleMessage(p.Token.Kind))
		}
		return nil, apierr.Forbidden("You must be an enterprise owner with access to this setting.")
	}
	return withRole(accounts.WithEnterprise(ctx, ent), role), nil
}

// EnterpriseRole is the principal's standing in the enterprise: RoleAdmin
// for its owners, RoleNone otherwise (organization members hold no role
// on the enterprise itself). Installation tokens never stand in an
// enterprise. A fine-grained token (personal or app user) stands there
// with its user's standing only when its resource owner is that user
// itself: enterprises are not accounts a token can name as its resource
// owner, and a token whose resource owner is an organization is limited
// to that organization.
func EnterpriseRole(ctx context.Context, q store.Q, p *auth.Principal, ent *accounts.Enterprise) (auth.Role, error) {
	if p.Anonymous() || !actsOnEnterprises(p) {
		return auth.RoleNone, nil
	}
	owner, err := accounts.IsEnterpriseOwner(ctx, q, ent.ID, p.Account.ID)
	if err != nil || !owner {
		return auth.RoleNone, err
	}
	return auth.RoleAdmin, nil
}

// actsOnEnterprises reports whether the credentials may act on
// enterprises at all: passwords and scope-based tokens may, installation
// tokens may not, other fine-grained tokens when they are user-owned.
func actsOnEnterprises(p *auth.Principal) bool {
	if p.Token == nil || !p.Token.FineGrained() {
		return true
	}
	return p.Token.Kind != auth.KindInstallation && p.Token.ResourceOwnerID == p.Account.ID
}

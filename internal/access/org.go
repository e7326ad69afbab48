package access

import (
	"context"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/store"
)

func (g *Guard) checkOrg(ctx context.Context, p *auth.Principal, rule auth.Rule, login string) (context.Context, error) {
	org, err := accounts.OrgByLogin(ctx, g.DB, login)
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
	if err := samlRefusal(p, org); err != nil {
		return nil, err
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
	return auth.WithRole(accounts.WithOrg(ctx, org), role), nil
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

func (g *Guard) checkEnterprise(ctx context.Context, p *auth.Principal, rule auth.Rule, slug string) (context.Context, error) {
	ent, err := accounts.EnterpriseBySlug(ctx, g.DB, slug)
	if err != nil {
		return nil, notFoundOr(err)
	}
	role := auth.RoleNone
	if !p.Anonymous() && (p.Token == nil || p.Token.Kind != auth.KindInstallation) {
		owner, err := accounts.IsEnterpriseOwner(ctx, g.DB, ent.ID, p.Account.ID)
		if err != nil {
			return nil, err
		}
		if owner {
			role = auth.RoleAdmin
		}
	}
	if err := checkTokenLimits(p, rule, tokenScope{}); err != nil {
		return nil, err
	}
	if role < rule.Role {
		return nil, apierr.Forbidden("You must be an enterprise owner with access to this setting.")
	}
	return auth.WithRole(accounts.WithEnterprise(ctx, ent), role), nil
}

package apptest

import (
	"context"

	"forgeapi/internal/accounts"
)

// Enterprise creates an enterprise with the slug, owned by owner, with
// the organizations as its members.
func (e *Env) Enterprise(slug string, owner *accounts.Account, orgs ...*accounts.Account) *accounts.Enterprise {
	e.T.Helper()
	ctx := context.Background()
	ent, err := accounts.CreateEnterprise(ctx, e.App.DB, slug, "")
	if err != nil {
		e.T.Fatalf("create enterprise %s: %v", slug, err)
	}
	e.EnterpriseOwner(ent, owner)
	for _, o := range orgs {
		e.must(accounts.AddEnterpriseOrg(ctx, e.App.DB, ent.ID, o.ID))
	}
	return ent
}

// EnterpriseOwner makes the user an owner of the enterprise.
func (e *Env) EnterpriseOwner(ent *accounts.Enterprise, user *accounts.Account) {
	e.T.Helper()
	e.must(accounts.AddEnterpriseOwner(context.Background(), e.App.DB, ent.ID, user.ID))
}

package accounts

import "context"

type (
	userKey       struct{}
	orgKey        struct{}
	enterpriseKey struct{}
)

// WithUser returns a context carrying the {username} target.
func WithUser(ctx context.Context, a *Account) context.Context {
	return context.WithValue(ctx, userKey{}, a)
}

// UserFrom returns the {username} target the access guard resolved.
func UserFrom(ctx context.Context) *Account { a, _ := ctx.Value(userKey{}).(*Account); return a }

// WithOrg returns a context carrying the {org} target.
func WithOrg(ctx context.Context, a *Account) context.Context {
	return context.WithValue(ctx, orgKey{}, a)
}

// OrgFrom returns the {org} target the access guard resolved.
func OrgFrom(ctx context.Context) *Account { a, _ := ctx.Value(orgKey{}).(*Account); return a }

// WithEnterprise returns a context carrying the {enterprise} target.
func WithEnterprise(ctx context.Context, e *Enterprise) context.Context {
	return context.WithValue(ctx, enterpriseKey{}, e)
}

// EnterpriseFrom returns the {enterprise} target the access guard resolved.
func EnterpriseFrom(ctx context.Context) *Enterprise {
	e, _ := ctx.Value(enterpriseKey{}).(*Enterprise)
	return e
}

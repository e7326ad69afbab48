package accounts

import (
	"context"

	"forgeapi/internal/httpapi"
)

type (
	userKey       struct{}
	orgKey        struct{}
	enterpriseKey struct{}
)

// WithUser returns a context carrying the {username} target (in the
// request's own context while the guard checks it: httpapi.WithTargetValue).
func WithUser(ctx context.Context, a *Account) context.Context {
	return httpapi.WithTargetValue(ctx, userKey{}, a)
}

// UserFrom returns the {username} target the access guard resolved.
func UserFrom(ctx context.Context) *Account { a, _ := ctx.Value(userKey{}).(*Account); return a }

// WithOrg returns a context carrying the {org} target (see WithUser).
func WithOrg(ctx context.Context, a *Account) context.Context {
	return httpapi.WithTargetValue(ctx, orgKey{}, a)
}

// OrgFrom returns the {org} target the access guard resolved.
func OrgFrom(ctx context.Context) *Account { a, _ := ctx.Value(orgKey{}).(*Account); return a }

// WithEnterprise returns a context carrying the {enterprise} target (see
// WithUser).
func WithEnterprise(ctx context.Context, e *Enterprise) context.Context {
	return httpapi.WithTargetValue(ctx, enterpriseKey{}, e)
}

// EnterpriseFrom returns the {enterprise} target the access guard resolved.
func EnterpriseFrom(ctx context.Context) *Enterprise {
	e, _ := ctx.Value(enterpriseKey{}).(*Enterprise)
	return e
}

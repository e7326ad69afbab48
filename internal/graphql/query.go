package graphql

import (
	"context"
	"errors"
	"fmt"

	gql "github.com/graph-gophers/graphql-go"

	"forgeapi/internal/accounts"
	"forgeapi/internal/store"
)

// root resolves the fields of Query and Mutation.
type root struct{}

// handler is the Handler serving the request: the schema, and with it
// root, is parsed once per process and shared by every Handler in it.
func (root) handler(ctx context.Context) *Handler { return requestFrom(ctx).h }

// Viewer is the account the credentials authenticate (an installation's
// bot for an installation token).
func (q *root) Viewer(ctx context.Context) (*userResolver, error) {
	a, err := accounts.ByID(ctx, q.handler(ctx).DB, requestFrom(ctx).principal.UserID())
	if err != nil {
		return nil, err
	}
	return &userResolver{q.handler(ctx).account(a)}, nil
}

// loginArgs are the arguments of user, organization and repositoryOwner.
type loginArgs struct{ Login string }

// User is the user of that login; NOT_FOUND when none.
func (q *root) User(ctx context.Context, args loginArgs) (*userResolver, error) {
	a, err := accounts.UserByLogin(ctx, q.handler(ctx).DB, args.Login)
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFound(fmt.Sprintf("Could not resolve to a User with the login of '%s'.", args.Login))
	} else if err != nil {
		return nil, err
	}
	return &userResolver{q.handler(ctx).account(a)}, nil
}

// Organization is the organization of that login; NOT_FOUND when none.
func (q *root) Organization(ctx context.Context, args loginArgs) (*organizationResolver, error) {
	a, err := accounts.OrgByLogin(ctx, q.handler(ctx).DB, args.Login)
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFound(fmt.Sprintf("Could not resolve to an Organization with the login of '%s'.", args.Login))
	} else if err != nil {
		return nil, err
	}
	return &organizationResolver{q.handler(ctx).account(a)}, nil
}

// RepositoryOwner is the user or organization of that login, null when
// none (the platform reports no error there).
func (q *root) RepositoryOwner(ctx context.Context, args loginArgs) (*ownerResolver, error) {
	a, err := accounts.ByLogin(ctx, q.handler(ctx).DB, args.Login)
	if errors.Is(err, store.ErrNotFound) || err == nil && a.Type == accounts.TypeBot {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	return q.handler(ctx).owner(a), nil
}

// repositoryArgs are the arguments of Query.repository.
type repositoryArgs struct {
	Owner, Name   string
	FollowRenames bool
}

// Repository is the repository OWNER/NAME the caller sees (following a
// rename unless followRenames is false); NOT_FOUND otherwise, as REST's
// 404.
func (q *root) Repository(ctx context.Context, args repositoryArgs) (*repositoryResolver, error) {
	return q.handler(ctx).repository(ctx, args.Owner, args.Name, args.FollowRenames)
}

// idArgs are the argument of node.
type idArgs struct{ ID gql.ID }

// Node is the object of that node id when the caller sees it; NOT_FOUND
// otherwise.
func (q *root) Node(ctx context.Context, args idArgs) (*nodeResolver, error) {
	return q.handler(ctx).node(ctx, string(args.ID))
}

// idsArgs are the argument of nodes.
type idsArgs struct{ IDs []gql.ID }

// Nodes are the objects of those node ids, in order: null, with a
// NOT_FOUND error at its index, for an id the caller does not see.
func (q *root) Nodes(ctx context.Context, args idsArgs) ([]*nodeResolver, error) {
	out := make([]*nodeResolver, len(args.IDs))
	for i, id := range args.IDs {
		n, err := q.handler(ctx).node(ctx, string(id))
		if fe, ok := errors.AsType[*fieldError](err); ok {
			requestFrom(ctx).itemError([]any{"nodes", i}, fe)
			continue
		} else if err != nil {
			return nil, err
		}
		out[i] = n
	}
	return out, nil
}

// rateLimitArgs are the argument of rateLimit.
type rateLimitArgs struct{ DryRun bool }

// RateLimit is the caller's GraphQL budget after this query, and what
// the query cost (see costOf). With dryRun the cost is counted all the
// same: forgeapi charges a query before it runs.
func (q *root) RateLimit(ctx context.Context, args rateLimitArgs) *rateLimitResolver {
	req := requestFrom(ctx)
	return &rateLimitResolver{s: req.rate, cost: req.cost}
}

// rateLimitResolver resolves RateLimit.
type rateLimitResolver struct {
	s    rateStatus
	cost queryCost
}

func (r *rateLimitResolver) Cost() int32      { return int32(r.cost.points) }
func (r *rateLimitResolver) NodeCount() int32 { return int32(r.cost.nodes) }
func (r *rateLimitResolver) Limit() int32     { return int32(r.s.limit) }
func (r *rateLimitResolver) Remaining() int32 { return int32(max(0, r.s.limit-r.s.used)) }
func (r *rateLimitResolver) Used() int32      { return int32(r.s.used) }
func (r *rateLimitResolver) ResetAt() dateTime {
	return at(r.s.reset)
}

package graphql

import (
	"context"

	"forgeapi/internal/accounts"
)

// actor is what User and Organization resolve of the Actor interface.
type actor interface {
	Login() string
	URL(ctx context.Context) uri
	ResourcePath() uri
	AvatarURL(ctx context.Context, args sizeArgs) uri
}

// actorResolver resolves Actor: the author of an issue or comment.
type actorResolver struct{ actor }

// actorOf is the Actor of an account, nil for none (a deleted author). A
// bot resolves as a User, as node(id:) resolves it.
func (h *Handler) actorOf(a *accounts.Account) *actorResolver {
	if a == nil {
		return nil
	}
	return &actorResolver{h.owner(a).repositoryOwner}
}

func (r *actorResolver) ToUser() (*userResolver, bool) {
	u, ok := r.actor.(*userResolver)
	return u, ok
}

func (r *actorResolver) ToOrganization() (*organizationResolver, bool) {
	o, ok := r.actor.(*organizationResolver)
	return o, ok
}

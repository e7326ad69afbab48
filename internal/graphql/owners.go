package graphql

import (
	"context"
	"strconv"
	"sync"

	gql "github.com/graph-gophers/graphql-go"

	"forgeapi/internal/accounts"
)

// account resolves the fields users and organizations share.
type account struct {
	h *Handler
	a *accounts.Account

	once    sync.Once
	profile accounts.Profile
	err     error
}

// account wraps an account for its resolvers.
func (h *Handler) account(a *accounts.Account) *account { return &account{h: h, a: a} }

// owner is the RepositoryOwner of an account: its user or organization.
func (h *Handler) owner(a *accounts.Account) *ownerResolver {
	if a.IsOrg() {
		return &ownerResolver{&organizationResolver{h.account(a)}}
	}
	return &ownerResolver{&userResolver{h.account(a)}}
}

// profileOf loads the account's profile once (company, location, ...).
func (r *account) profileOf(ctx context.Context) (accounts.Profile, error) {
	r.once.Do(func() { r.profile, r.err = accounts.ProfileOf(ctx, r.h.DB, r.a.ID) })
	return r.profile, r.err
}

// sizeArgs are the argument of avatarUrl.
type sizeArgs struct{ Size *int32 }

func (r *account) ID() gql.ID          { return gql.ID(accounts.NodeID(r.a)) }
func (r *account) DatabaseID() *int32  { id := int32(r.a.ID); return &id }
func (r *account) Login() string       { return r.a.Login }
func (r *account) Name() *string       { return optional(r.a.Name) }
func (r *account) CreatedAt() dateTime { return at(r.a.CreatedAt) }
func (r *account) UpdatedAt() dateTime { return at(r.a.UpdatedAt) }

// URL is the account's web page.
func (r *account) URL(ctx context.Context) uri {
	return uri(accounts.HTMLURL(requestFrom(ctx).base, r.a))
}

// ResourcePath is the path of the account's web page.
func (r *account) ResourcePath() uri { return uri("/" + r.a.Login) }

// AvatarURL is the account's avatar, with its size asked as s=.
func (r *account) AvatarURL(ctx context.Context, args sizeArgs) uri {
	u := accounts.AvatarURL(requestFrom(ctx).base, r.a)
	if args.Size != nil {
		u += "&s=" + strconv.Itoa(int(*args.Size))
	}
	return uri(u)
}

// Location is the profile's location.
func (r *account) Location(ctx context.Context) (*string, error) {
	p, err := r.profileOf(ctx)
	return optional(p.Location), err
}

// TwitterUsername is the profile's Twitter username.
func (r *account) TwitterUsername(ctx context.Context) (*string, error) {
	p, err := r.profileOf(ctx)
	return optional(p.TwitterUsername), err
}

// WebsiteURL is the profile's blog address.
func (r *account) WebsiteURL(ctx context.Context) (*uri, error) {
	p, err := r.profileOf(ctx)
	if err != nil || p.Blog == "" {
		return nil, err
	}
	u := uri(p.Blog)
	return &u, nil
}

// Repositories are the account's repositories the caller sees.
func (r *account) Repositories(ctx context.Context, args repositoriesArgs) (*connection[*repositoryResolver], error) {
	return r.h.repositories(ctx, r.a, args)
}

// nameArgs are the arguments of RepositoryOwner.repository.
type nameArgs struct {
	Name          string
	FollowRenames bool
}

// Repository is the account's repository of that name, as
// Query.repository.
func (r *account) Repository(ctx context.Context, args nameArgs) (*repositoryResolver, error) {
	return r.h.repository(ctx, r.a.Login, args.Name, args.FollowRenames)
}

// userResolver resolves User.
type userResolver struct{ *account }

// Email is the user's public email, "" when none.
func (r *userResolver) Email() string { return r.a.Email }

// IsSiteAdmin reports whether the user administers the site.
func (r *userResolver) IsSiteAdmin() bool { return r.a.SiteAdmin }

// IsViewer reports whether the user is the caller.
func (r *userResolver) IsViewer(ctx context.Context) bool {
	return r.a.ID == requestFrom(ctx).principal.UserID()
}

// Bio is the profile's bio.
func (r *userResolver) Bio(ctx context.Context) (*string, error) {
	p, err := r.profileOf(ctx)
	return optional(p.Bio), err
}

// Company is the profile's company.
func (r *userResolver) Company(ctx context.Context) (*string, error) {
	p, err := r.profileOf(ctx)
	return optional(p.Company), err
}

// organizationResolver resolves Organization.
type organizationResolver struct{ *account }

// Description is the organization's description.
func (r *organizationResolver) Description() *string { return optional(r.a.Description) }

// Email is the organization's public email.
func (r *organizationResolver) Email() *string { return optional(r.a.Email) }

// repositoryOwner is what User and Organization resolve of the
// RepositoryOwner interface.
type repositoryOwner interface {
	ID() gql.ID
	Login() string
	URL(ctx context.Context) uri
	ResourcePath() uri
	AvatarURL(ctx context.Context, args sizeArgs) uri
	Repositories(ctx context.Context, args repositoriesArgs) (*connection[*repositoryResolver], error)
	Repository(ctx context.Context, args nameArgs) (*repositoryResolver, error)
}

// ownerResolver resolves RepositoryOwner.
type ownerResolver struct{ repositoryOwner }

func (r *ownerResolver) ToUser() (*userResolver, bool) {
	u, ok := r.repositoryOwner.(*userResolver)
	return u, ok
}

func (r *ownerResolver) ToOrganization() (*organizationResolver, bool) {
	o, ok := r.repositoryOwner.(*organizationResolver)
	return o, ok
}

// optional is nil for "", else the string.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

package graphql

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	gql "github.com/graph-gophers/graphql-go"

	"forgeapi/internal/access"
	"forgeapi/internal/accounts"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// repository resolves OWNER/NAME for the caller (following a rename
// when follow is set): NOT_FOUND, with the platform's message, when no
// such repository exists or the caller may not see it.
func (h *Handler) repository(ctx context.Context, owner, name string, follow bool) (*repositoryResolver, error) {
	repo, err := repos.ByOwnerAndName(ctx, h.DB, owner, name)
	if errors.Is(err, store.ErrNotFound) && follow {
		repo, err = repos.Renamed(ctx, h.DB, owner, name)
	}
	var r *repositoryResolver
	if err == nil {
		r, err = h.visibleRepository(ctx, repo)
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFound(fmt.Sprintf("Could not resolve to a Repository with the name '%s/%s'.", owner, name))
	}
	return r, err
}

// visibleRepository wraps the repository when the caller sees it, with
// the caller's role on it; store.ErrNotFound when it is hidden (as REST
// hides it: access.ListedRepoRole).
func (h *Handler) visibleRepository(ctx context.Context, repo *repos.Repository) (*repositoryResolver, error) {
	role, err := access.ListedRepoRole(ctx, h.DB, requestFrom(ctx).principal, repo)
	if err != nil {
		return nil, err
	}
	if role == auth.RoleNone {
		return nil, store.ErrNotFound
	}
	return &repositoryResolver{h: h, r: repo, role: role, web: httpapi.WebBase(requestFrom(ctx).base) + "/" + repo.FullName()}, nil
}

// repositoryResolver resolves Repository for a caller of role.
type repositoryResolver struct {
	h    *Handler
	r    *repos.Repository
	role auth.Role
	// web is the repository's web page for the request's server, so
	// that the URLs of what it holds are fields without a context (which
	// the engine resolves in place, not in a goroutine each).
	web string

	once  sync.Once
	stats repos.Stats
	err   error
}

// statsOf loads the repository's counters once.
func (r *repositoryResolver) statsOf(ctx context.Context) (repos.Stats, error) {
	r.once.Do(func() { r.stats, r.err = r.h.Repos.Stats(ctx, r.r.ID) })
	return r.stats, r.err
}

func (r *repositoryResolver) ID() gql.ID            { return gql.ID(wire.NodeID("R", r.r.ID)) }
func (r *repositoryResolver) DatabaseID() *int32    { id := int32(r.r.ID); return &id }
func (r *repositoryResolver) Name() string          { return r.r.Name }
func (r *repositoryResolver) NameWithOwner() string { return r.r.FullName() }
func (r *repositoryResolver) Description() *string  { return optional(r.r.Description) }
func (r *repositoryResolver) CreatedAt() dateTime   { return at(r.r.CreatedAt) }
func (r *repositoryResolver) UpdatedAt() dateTime   { return at(r.r.UpdatedAt) }
func (r *repositoryResolver) IsPrivate() bool       { return r.r.Private }
func (r *repositoryResolver) IsFork() bool          { return r.r.ForkOfID != 0 }
func (r *repositoryResolver) IsInOrganization() bool {
	return r.r.Owner.IsOrg()
}

// Visibility is PUBLIC or PRIVATE.
func (r *repositoryResolver) Visibility() string { return strings.ToUpper(r.r.Visibility()) }

// The repository's settings and archived flag, as REST shows them
// (repos.Settings).
func (r *repositoryResolver) HasIssuesEnabled() bool   { return r.r.Settings.HasIssues }
func (r *repositoryResolver) HasProjectsEnabled() bool { return r.r.Settings.HasProjects }
func (r *repositoryResolver) HasWikiEnabled() bool     { return r.r.Settings.HasWiki }
func (r *repositoryResolver) IsArchived() bool         { return r.r.Archived }
func (r *repositoryResolver) IsTemplate() bool         { return r.r.IsTemplate }
func (r *repositoryResolver) HomepageURL() *uri {
	if r.r.Settings.Homepage == "" {
		return nil
	}
	u := uri(r.r.Settings.Homepage)
	return &u
}

// The merge methods, as REST's allow_merge_commit, allow_squash_merge
// and allow_rebase_merge show them.
func (r *repositoryResolver) MergeCommitAllowed() bool { return r.r.Settings.AllowMergeCommit }
func (r *repositoryResolver) SquashMergeAllowed() bool { return r.r.Settings.AllowSquashMerge }
func (r *repositoryResolver) RebaseMergeAllowed() bool { return r.r.Settings.AllowRebaseMerge }

// PushedAt is the last push, or the creation before any, as REST's
// pushed_at.
func (r *repositoryResolver) PushedAt() *dateTime {
	t := at(r.r.CreatedAt)
	if r.r.PushedAt != nil {
		t = at(*r.r.PushedAt)
	}
	return &t
}

// URL is the repository's web page.
func (r *repositoryResolver) URL(ctx context.Context) uri {
	return uri(httpapi.WebBase(requestFrom(ctx).base) + "/" + r.r.FullName())
}

// ResourcePath is the path of the repository's web page.
func (r *repositoryResolver) ResourcePath() uri { return uri("/" + r.r.FullName()) }

// SSHURL is the repository's git address over SSH, as REST's ssh_url.
func (r *repositoryResolver) SSHURL(ctx context.Context) gitSSHRemote {
	return gitSSHRemote(repos.SSHURL(repos.URLs{Base: requestFrom(ctx).base, SSHPort: httpapi.SSHPort(ctx)}, r.r.FullName()))
}

// StargazerCount counts the repository's stars.
func (r *repositoryResolver) StargazerCount(ctx context.Context) (int32, error) {
	st, err := r.statsOf(ctx)
	return int32(st.Stargazers), err
}

// ForkCount counts the repository's forks.
func (r *repositoryResolver) ForkCount(ctx context.Context) (int32, error) {
	st, err := r.statsOf(ctx)
	return int32(st.Forks), err
}

// ViewerPermission is the caller's role: ADMIN, WRITE or READ.
func (r *repositoryResolver) ViewerPermission() *string {
	perm := map[auth.Role]string{auth.RoleRead: "READ", auth.RoleWrite: "WRITE", auth.RoleAdmin: "ADMIN"}[r.role]
	return &perm
}

// Owner is the repository's owner.
func (r *repositoryResolver) Owner() *ownerResolver { return r.h.owner(r.r.Owner) }

// Parent is the repository this one is a fork of, null when it is none
// or the caller does not see it.
func (r *repositoryResolver) Parent(ctx context.Context) (*repositoryResolver, error) {
	if r.r.ForkOfID == 0 {
		return nil, nil
	}
	parent, err := repos.ByID(ctx, r.h.DB, r.r.ForkOfID)
	var out *repositoryResolver
	if err == nil {
		out, err = r.h.visibleRepository(ctx, parent)
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return out, err
}

// DefaultBranchRef is the default branch, null while it does not exist
// (an empty repository).
func (r *repositoryResolver) DefaultBranchRef() (*refResolver, error) {
	return r.refNamed("refs/heads/" + r.r.DefaultBranch)
}

// repositoriesArgs are the arguments of RepositoryOwner.repositories.
type repositoriesArgs struct {
	connectionArgs
	Affiliations      *[]*string
	OwnerAffiliations []*string
	HasIssuesEnabled  *bool
	IsArchived        *bool
	IsFork            *bool
	IsLocked          *bool
	OrderBy           *repositoryOrder
	Privacy           *string
	Visibility        *string
}

// repositoryOrder is the RepositoryOrder input.
type repositoryOrder struct {
	Field     string
	Direction string
}

// repositories is owner's connection of repositories the caller sees,
// filtered and ordered as args ask (only counted without first or last).
func (h *Handler) repositories(ctx context.Context, owner *accounts.Account, args repositoriesArgs) (*connection[*repositoryResolver], error) {
	if args.Privacy != nil && args.Visibility != nil {
		return nil, invalid("The privacy and visibility arguments cannot be combined.")
	}
	candidates, err := h.ownedOrAffiliated(ctx, owner, args.OwnerAffiliations)
	if err != nil {
		return nil, err
	}
	keep, err := h.filter(ctx, args)
	if err != nil {
		return nil, err
	}
	var shown []*repositoryResolver
	for _, repo := range candidates {
		ok, err := keep(repo)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		r, err := h.visibleRepository(ctx, repo)
		if errors.Is(err, store.ErrNotFound) {
			continue
		} else if err != nil {
			return nil, err
		}
		shown = append(shown, r)
	}
	if err := sortRepositories(ctx, shown, args.OrderBy); err != nil {
		return nil, err
	}
	return pageList(shown, args.connectionArgs, "repositories")
}

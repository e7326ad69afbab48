package graphql

import (
	"context"
	"errors"
	"slices"

	gql "github.com/graph-gophers/graphql-go"

	"forgeapi/internal/auth"
	"forgeapi/internal/releases"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// maxReleases bounds the releases a repository's connection reads to
// order and page them.
const maxReleases = 10000

// releaseOrder is the ReleaseOrder input.
type releaseOrder struct {
	Field     string
	Direction string
}

// releasesArgs are the arguments of Repository.releases.
type releasesArgs struct {
	connectionArgs
	OrderBy *releaseOrder
}

// seesDrafts reports whether the caller sees the repository's draft
// releases: push access, as REST.
func (r *repositoryResolver) seesDrafts() bool { return r.role >= auth.RoleWrite }

// Releases are the repository's releases (drafts for callers with push
// access), newest first unless orderBy says otherwise (CREATED_AT or
// NAME); Contents read of a permission-based token on a private
// repository.
func (r *repositoryResolver) Releases(ctx context.Context, args releasesArgs) (*connection[*releaseResolver], error) {
	if err := args.checkCounted("releases"); err != nil {
		return nil, err
	}
	if err := r.checkRead(ctx, "contents:read"); err != nil {
		return nil, err
	}
	list, err := r.h.Releases.All(ctx, r.r, r.seesDrafts(), maxReleases)
	if err != nil {
		return nil, err
	}
	if o := args.OrderBy; o != nil {
		if o.Field == "NAME" {
			slices.SortStableFunc(list, func(a, b *releases.Release) int { return compareStrings(nameOf(a), nameOf(b)) })
			if o.Direction == "DESC" {
				slices.Reverse(list)
			}
		} else if o.Direction == "ASC" {
			slices.Reverse(list) // All is newest first
		}
	}
	latest, err := r.latestReleaseID(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*releaseResolver, len(list))
	for i, rel := range list {
		out[i] = &releaseResolver{repo: r, rel: rel, latest: rel.ID == latest}
	}
	return pageList(out, args.connectionArgs, "releases")
}

// Release is the repository's release of the tag (a draft for callers
// with push access), null when there is none.
func (r *repositoryResolver) Release(ctx context.Context, args struct{ TagName string }) (*releaseResolver, error) {
	if err := r.checkRead(ctx, "contents:read"); err != nil {
		return nil, err
	}
	rel, err := r.h.Releases.ByTagName(ctx, r.r, args.TagName, r.seesDrafts())
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	latest, err := r.latestReleaseID(ctx)
	if err != nil {
		return nil, err
	}
	return &releaseResolver{repo: r, rel: rel, latest: rel.ID == latest}, nil
}

// LatestRelease is the repository's latest release
// (releases.Service.Latest), null when it has none.
func (r *repositoryResolver) LatestRelease(ctx context.Context) (*releaseResolver, error) {
	if err := r.checkRead(ctx, "contents:read"); err != nil {
		return nil, err
	}
	rel, err := r.h.Releases.Latest(ctx, r.r)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	return &releaseResolver{repo: r, rel: rel, latest: true}, nil
}

// latestReleaseID is the id of the repository's latest release, 0 when
// it has none.
func (r *repositoryResolver) latestReleaseID(ctx context.Context) (int64, error) {
	rel, err := r.h.Releases.Latest(ctx, r.r)
	if errors.Is(err, store.ErrNotFound) {
		return 0, nil
	} else if err != nil {
		return 0, err
	}
	return rel.ID, nil
}

func nameOf(r *releases.Release) string {
	if r.Name != nil && *r.Name != "" {
		return *r.Name
	}
	return r.TagName
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// releaseResolver resolves Release.
type releaseResolver struct {
	repo   *repositoryResolver
	rel    *releases.Release
	latest bool
}

func (r *releaseResolver) ID() gql.ID           { return gql.ID(wire.NodeID("RE", r.rel.ID)) }
func (r *releaseResolver) DatabaseID() *int32   { return databaseID(r.rel.ID) }
func (r *releaseResolver) TagName() string      { return r.rel.TagName }
func (r *releaseResolver) Name() *string        { return r.rel.Name }
func (r *releaseResolver) Description() *string { return r.rel.Body }
func (r *releaseResolver) IsDraft() bool        { return r.rel.Draft }
func (r *releaseResolver) IsPrerelease() bool   { return r.rel.Prerelease }
func (r *releaseResolver) IsLatest() bool       { return r.latest }
func (r *releaseResolver) CreatedAt() dateTime  { return at(r.rel.CreatedAt) }
func (r *releaseResolver) UpdatedAt() dateTime  { return at(r.rel.UpdatedAt) }
func (r *releaseResolver) PublishedAt() *dateTime {
	if r.rel.PublishedAt == nil {
		return nil
	}
	t := at(*r.rel.PublishedAt)
	return &t
}

// URL is the release's web page.
func (r *releaseResolver) URL(ctx context.Context) uri {
	return uri(releases.HTMLURL(requestFrom(ctx).base, r.repo.r, r.rel))
}

// Author is who made the release, null once the account is gone.
func (r *releaseResolver) Author() *userResolver {
	if r.rel.Author == nil {
		return nil
	}
	return &userResolver{r.repo.h.account(r.rel.Author)}
}

// releaseNode resolves a release's node id for a caller who sees its
// repository (a draft: with push access) and may read its contents.
func (h *Handler) releaseNode(ctx context.Context, id int64) (*nodeResolver, error) {
	repoID, err := h.Releases.RepositoryOf(ctx, id)
	if err != nil {
		return nil, err
	}
	repo, err := repos.ByID(ctx, h.DB, repoID)
	if err != nil {
		return nil, err
	}
	r, err := h.visibleRepository(ctx, repo)
	if err != nil {
		return nil, err
	}
	if !mayRead(requestFrom(ctx).principal, repo, "contents:read") {
		return nil, store.ErrNotFound
	}
	rel, err := h.Releases.Get(ctx, repo, id, r.seesDrafts())
	if err != nil {
		return nil, err
	}
	latest, err := r.latestReleaseID(ctx)
	if err != nil {
		return nil, err
	}
	return &nodeResolver{&releaseResolver{repo: r, rel: rel, latest: rel.ID == latest}}, nil
}

package graphql

import (
	"context"
	"errors"

	"forgeapi/internal/pulls"
	"forgeapi/internal/store"
)

// pullRequestsArgs are the arguments of Repository.pullRequests.
type pullRequestsArgs struct {
	connectionArgs
	BaseRefName, HeadRefName *string
	Labels                   *[]string
	OrderBy                  *struct{ Field, Direction string }
	States                   *[]string
}

// PullRequests are the repository's pull requests as args select and
// order them (by number by default, as the platform's): FORBIDDEN when
// the credentials may not read them. A page costs a fixed number of
// queries (pulls.Service.Find).
func (r *repositoryResolver) PullRequests(ctx context.Context, args pullRequestsArgs) (*connection[*pullRequestResolver], error) {
	if !mayReadPulls(requestFrom(ctx).principal, r.r) {
		return nil, forbidden("Resource not accessible by personal access token")
	}
	q := pulls.Query{}
	if args.States != nil {
		q.States = *args.States
	}
	if args.HeadRefName != nil {
		q.HeadRef = *args.HeadRefName
	}
	if args.BaseRefName != nil {
		q.BaseRef = *args.BaseRefName
	}
	if args.Labels != nil {
		q.Labels = *args.Labels
	}
	if args.OrderBy != nil {
		q.Order = map[string]string{"CREATED_AT": "created", "UPDATED_AT": "updated", "COMMENTS": "comments"}[args.OrderBy.Field]
		q.Desc = args.OrderBy.Direction == "DESC"
	}
	if err := args.checkCounted("pullRequests"); err != nil {
		return nil, err
	}
	list, offset, total, err := r.h.Pulls.Find(ctx, r.r, q, args.window)
	if err != nil {
		return nil, err
	}
	if args.unpaged() {
		return counted[*pullRequestResolver]("pullRequests", total), nil
	}
	return pageOf(r.h.pullPage(r, list), offset, total), nil
}

// headRepository is the pull request's head repository when the caller
// sees it, nil otherwise (or when it was deleted).
func (r *pullRequestResolver) headRepository(ctx context.Context) (*repositoryResolver, error) {
	head := r.p.HeadRepo
	if head == nil {
		return nil, nil
	}
	if head.ID == r.p.Repo.ID {
		return r.repo, nil
	}
	out, err := r.h.visibleRepository(ctx, head)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return out, err
}

// HeadRepository is the repository of the head branch, null when it was
// deleted or the caller does not see it.
func (r *pullRequestResolver) HeadRepository(ctx context.Context) (*repositoryResolver, error) {
	return r.headRepository(ctx)
}

// HeadRepositoryOwner is the owner of the head repository, null when it
// was deleted.
func (r *pullRequestResolver) HeadRepositoryOwner() *ownerResolver {
	if r.p.HeadRepo == nil {
		return nil
	}
	return r.h.owner(r.p.HeadRepo.Owner)
}

// IsCrossRepository reports whether the head is in another repository
// (a fork, or a deleted one) than the base.
func (r *pullRequestResolver) IsCrossRepository() bool {
	return r.p.HeadRepo == nil || r.p.HeadRepo.ID != r.p.Repo.ID
}

func (r *pullRequestResolver) Additions() int32          { return int32(r.p.Additions) }
func (r *pullRequestResolver) Deletions() int32          { return int32(r.p.Deletions) }
func (r *pullRequestResolver) ChangedFiles() int32       { return int32(r.p.ChangedFiles) }
func (r *pullRequestResolver) HeadRefOid() gitObjectID   { return gitObjectID(r.p.HeadSHA) }
func (r *pullRequestResolver) BaseRefOid() gitObjectID   { return gitObjectID(r.p.BaseSHA) }
func (r *pullRequestResolver) MergedBy() *actorResolver  { return r.h.actorOf(r.p.MergedBy) }
func (r *pullRequestResolver) AuthorAssociation() string { return r.p.Issue.Association }
func (r *pullRequestResolver) UpdatedAt() dateTime       { return at(r.p.Issue.UpdatedAt) }
func (r *pullRequestResolver) ClosedAt() *dateTime       { return optionalTime(r.p.Issue.ClosedAt) }
func (r *pullRequestResolver) MergedAt() *dateTime       { return optionalTime(r.p.MergedAt) }

// MaintainerCanModify is false, as REST's maintainer_can_modify:
// forgeapi does not let maintainers push to a fork's head.
func (r *pullRequestResolver) MaintainerCanModify() bool { return false }

// ViewerDidAuthor reports whether the caller opened the pull request.
func (r *pullRequestResolver) ViewerDidAuthor(ctx context.Context) bool {
	return r.p.Issue.User != nil && r.p.Issue.User.ID == requestFrom(ctx).principal.UserID()
}

// Mergeable is the background check's result: MERGEABLE, CONFLICTING,
// or UNKNOWN until it ran since the head or base last moved.
func (r *pullRequestResolver) Mergeable() string {
	switch {
	case r.p.Mergeable == nil:
		return "UNKNOWN"
	case *r.p.Mergeable:
		return "MERGEABLE"
	}
	return "CONFLICTING"
}

// MergeStateStatus is REST's mergeable_state in the platform's enum:
// CLEAN, DIRTY, DRAFT (a draft that merges cleanly), BLOCKED, BEHIND,
// UNSTABLE (the base's protection and the head's checks) or UNKNOWN.
func (r *pullRequestResolver) MergeStateStatus() string {
	switch r.p.MergeableState {
	case pulls.StateBlocked:
		return "BLOCKED"
	case pulls.StateBehind:
		return "BEHIND"
	case pulls.StateUnstable:
		return "UNSTABLE"
	case pulls.StateClean:
		return "CLEAN"
	case pulls.StateDirty:
		return "DIRTY"
	case pulls.StateDraft:
		return "DRAFT"
	}
	return "UNKNOWN"
}

package graphql

import (
	"context"
	"errors"
	"fmt"

	gql "github.com/graph-gophers/graphql-go"

	"forgeapi/internal/accounts"
	"forgeapi/internal/auth"
	"forgeapi/internal/pulls"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// ReviewThreads are the pull request's review threads (pulls.Threads),
// in the order of their first comments.
func (r *pullRequestResolver) ReviewThreads(ctx context.Context, args connectionArgs) (*connection[*threadResolver], error) {
	list, err := r.h.Pulls.Threads(ctx, r.p)
	if err != nil {
		return nil, err
	}
	out := make([]*threadResolver, len(list))
	for i, t := range list {
		out[i] = &threadResolver{pull: r, t: t}
	}
	return pageList(out, args, "reviewThreads")
}

// threadResolver resolves PullRequestReviewThread.
type threadResolver struct {
	pull *pullRequestResolver
	t    *pulls.Thread
}

func (r *threadResolver) ID() gql.ID                        { return gql.ID(pulls.ThreadNodeID(r.t.Root.ID)) }
func (r *threadResolver) IsResolved() bool                  { return r.t.Resolved }
func (r *threadResolver) Path() string                      { return r.t.Root.Path }
func (r *threadResolver) DiffSide() string                  { return r.t.Root.Side }
func (r *threadResolver) PullRequest() *pullRequestResolver { return r.pull }
func (r *threadResolver) Repository() *repositoryResolver   { return r.pull.repo }

// IsOutdated reports whether the thread's line left the diff (its root
// comment has no position in the head's diff any more).
func (r *threadResolver) IsOutdated() bool { return r.t.Root.Position == nil }

// Line is the line of the file the thread is on.
func (r *threadResolver) Line() *int32 { return line32(r.t.Root.Line) }

// ResolvedBy is who resolved the thread; null when it is not resolved.
func (r *threadResolver) ResolvedBy() *userResolver {
	if !r.t.Resolved || r.t.ResolvedBy == nil {
		return nil
	}
	return &userResolver{r.pull.h.account(r.t.ResolvedBy)}
}

// ViewerCanResolve and ViewerCanUnresolve report whether the caller may
// change the thread to resolved or unresolved: credentials that write
// pull requests, push access or the pull request's authorship.
func (r *threadResolver) ViewerCanResolve(ctx context.Context) (bool, error) {
	ok, err := r.pull.mayResolve(ctx)
	return ok && !r.t.Resolved, err
}

func (r *threadResolver) ViewerCanUnresolve(ctx context.Context) (bool, error) {
	ok, err := r.pull.mayResolve(ctx)
	return ok && r.t.Resolved, err
}

// Comments are the thread's comments, its first one first.
func (r *threadResolver) Comments(args struct {
	connectionArgs
	Skip *int32
}) (*connection[*reviewCommentResolver], error) {
	list := r.t.Comments
	if args.Skip != nil && *args.Skip > 0 {
		list = list[min(int(*args.Skip), len(list)):]
	}
	out := make([]*reviewCommentResolver, len(list))
	for i, c := range list {
		out[i] = &reviewCommentResolver{pull: r.pull, c: c}
	}
	return pageList(out, args.connectionArgs, "comments")
}

// mayResolve reports whether the caller may resolve the pull request's
// threads.
func (r *pullRequestResolver) mayResolve(ctx context.Context) (bool, error) {
	principal := requestFrom(ctx).principal
	if principal.UserID() == 0 || !mayWritePulls(principal, r.p.Repo) {
		return false, nil
	}
	viewer, err := accounts.ByID(ctx, r.h.DB, principal.UserID())
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	return pulls.MayResolve(r.p, viewer, r.repo.role >= auth.RoleWrite), nil
}

// reviewCommentResolver resolves PullRequestReviewComment.
type reviewCommentResolver struct {
	pull *pullRequestResolver
	c    *pulls.ReviewComment
}

func (r *reviewCommentResolver) ID() gql.ID                        { return gql.ID(wire.NodeID("PRRC", r.c.ID)) }
func (r *reviewCommentResolver) DatabaseID() *int32                { id := int32(r.c.ID); return &id }
func (r *reviewCommentResolver) Body() string                      { return r.c.Body }
func (r *reviewCommentResolver) Path() string                      { return r.c.Path }
func (r *reviewCommentResolver) DiffHunk() string                  { return r.c.DiffHunk }
func (r *reviewCommentResolver) CreatedAt() dateTime               { return at(r.c.CreatedAt) }
func (r *reviewCommentResolver) Author() *actorResolver            { return r.pull.h.actorOf(r.c.User) }
func (r *reviewCommentResolver) AuthorAssociation() string         { return r.c.Association }
func (r *reviewCommentResolver) Line() *int32                      { return line32(r.c.Line) }
func (r *reviewCommentResolver) PullRequest() *pullRequestResolver { return r.pull }

// URL is the comment's place on the pull request's page, as REST's
// html_url.
func (r *reviewCommentResolver) URL() uri {
	return r.pull.URL() + uri("#discussion_r"+wire.Itoa(r.c.ID))
}

// ReplyTo is the comment this one answers (its thread's first), or null.
func (r *reviewCommentResolver) ReplyTo(ctx context.Context) (*reviewCommentResolver, error) {
	if r.c.InReplyTo == nil {
		return nil, nil
	}
	c, _, err := r.pull.h.Pulls.Comment(ctx, r.pull.p.Repo, *r.c.InReplyTo)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &reviewCommentResolver{pull: r.pull, c: c}, nil
}

// line32 is a line number as GraphQL's Int.
func line32(n *int) *int32 {
	if n == nil {
		return nil
	}
	v := int32(*n)
	return &v
}

// threadByRoot is the thread of the root comment id when the caller
// reads its pull request; store.ErrNotFound otherwise.
func (h *Handler) threadByRoot(ctx context.Context, rootID int64) (*threadResolver, error) {
	t, p, err := h.Pulls.ThreadByRoot(ctx, rootID)
	if err != nil {
		return nil, err
	}
	pull, err := h.pullByNodeID(ctx, wire.NodeID("PR", p.ID))
	if err != nil {
		return nil, err
	}
	return &threadResolver{pull: pull, t: t}, nil
}

// reviewCommentByID is the submitted review comment of the id when the
// caller reads its pull request; store.ErrNotFound otherwise.
func (h *Handler) reviewCommentByID(ctx context.Context, id int64) (*reviewCommentResolver, error) {
	c, p, err := h.Pulls.CommentByID(ctx, id)
	if err != nil {
		return nil, err
	}
	pull, err := h.pullByNodeID(ctx, wire.NodeID("PR", p.ID))
	if err != nil {
		return nil, err
	}
	return &reviewCommentResolver{pull: pull, c: c}, nil
}

func (n *nodeResolver) ToPullRequestReviewComment() (*reviewCommentResolver, bool) {
	c, ok := n.node.(*reviewCommentResolver)
	return c, ok
}

func (n *nodeResolver) ToPullRequestReviewThread() (*threadResolver, bool) {
	t, ok := n.node.(*threadResolver)
	return t, ok
}

// reviewThreadInput is ResolveReviewThreadInput and
// UnresolveReviewThreadInput.
type reviewThreadInput struct {
	ThreadID         gql.ID
	ClientMutationID *string
}

// threadPayload resolves ResolveReviewThreadPayload and
// UnresolveReviewThreadPayload.
type threadPayload struct {
	thread           *threadResolver
	clientMutationID *string
}

func (p *threadPayload) Thread() *threadResolver   { return p.thread }
func (p *threadPayload) ClientMutationID() *string { return p.clientMutationID }

// ResolveReviewThread marks the thread resolved (pulls.ResolveThread).
func (q *root) ResolveReviewThread(ctx context.Context, args struct{ Input reviewThreadInput }) (*threadPayload, error) {
	return q.handler(ctx).resolveThread(ctx, args.Input, true, "ResolveReviewThread")
}

// UnresolveReviewThread marks the thread unresolved.
func (q *root) UnresolveReviewThread(ctx context.Context, args struct{ Input reviewThreadInput }) (*threadPayload, error) {
	return q.handler(ctx).resolveThread(ctx, args.Input, false, "UnresolveReviewThread")
}

// resolveThread resolves or unresolves the thread of in.threadId:
// NOT_FOUND when the caller reads no such thread, FORBIDDEN when the
// credentials do not write pull requests or the caller has neither push
// access nor the pull request's authorship.
func (h *Handler) resolveThread(ctx context.Context, in reviewThreadInput, resolve bool, mutation string) (*threadPayload, error) {
	missing := notFound(fmt.Sprintf("Could not resolve to a node with the global id of '%s'", in.ThreadID))
	typ, rootID, ok := wire.ParseNodeID(string(in.ThreadID))
	if !ok || typ != "PRRT" {
		return nil, missing
	}
	tr, err := h.threadByRoot(ctx, rootID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, missing
	} else if err != nil {
		return nil, err
	}
	t, err := h.pullTarget(ctx, tr.pull.ID(), mutation, mayWritePulls)
	if err != nil {
		return nil, err
	}
	thread, err := h.Pulls.ResolveThread(ctx, t.pull.p, t.actor, rootID, resolve, t.mayPush())
	if err != nil {
		return nil, pullServiceError(err, t.refused)
	}
	return &threadPayload{thread: &threadResolver{pull: t.pull, t: thread}, clientMutationID: in.ClientMutationID}, nil
}

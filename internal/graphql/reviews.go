package graphql

import (
	"context"
	"slices"

	gql "github.com/graph-gophers/graphql-go"

	"forgeapi/internal/pulls"
	"forgeapi/internal/reactions"
	"forgeapi/internal/wire"
)

// reviewsOf loads the pull request's reviews the caller sees once per
// resolver (pending ones are their authors' only), with its page's when
// it was listed in one.
func (r *pullRequestResolver) reviewsOf(ctx context.Context) ([]*pulls.Review, error) {
	r.reviewsOnce.Do(func() {
		if r.page != nil {
			r.reviews, r.reviewsErr = r.page.reviewsOf(ctx, r.p.ID)
			return
		}
		r.reviews, r.reviewsErr = r.h.Pulls.Reviews(ctx, r.p, requestFrom(ctx).principal.UserID())
	})
	return r.reviews, r.reviewsErr
}

// reviewsArgs are the arguments of PullRequest.reviews.
type reviewsArgs struct {
	connectionArgs
	Author *string
	States *[]string
}

// Reviews are the pull request's reviews, oldest first, of the author
// and in the states asked.
func (r *pullRequestResolver) Reviews(ctx context.Context, args reviewsArgs) (*connection[*reviewResolver], error) {
	list, err := r.reviewsOf(ctx)
	if err != nil {
		return nil, err
	}
	var out []*reviewResolver
	for _, rv := range list {
		if args.Author != nil && (rv.User == nil || rv.User.Login != *args.Author) ||
			args.States != nil && !slices.Contains(*args.States, rv.State) {
			continue
		}
		out = append(out, &reviewResolver{pull: r, rv: rv})
	}
	return pageList(out, args.connectionArgs, "reviews")
}

// latest is each reviewer's latest review that counts: their latest
// approval, change request or dismissed one, else their latest comment,
// in the order of those reviews.
func latest(list []*pulls.Review) []*pulls.Review {
	opinion, comment := map[int64]*pulls.Review{}, map[int64]*pulls.Review{}
	for _, rv := range list {
		if rv.User == nil {
			continue
		}
		switch rv.State {
		case pulls.ReviewApproved, pulls.ReviewChangesRequested, pulls.ReviewDismissed:
			opinion[rv.User.ID] = rv
		case pulls.ReviewCommented:
			comment[rv.User.ID] = rv
		}
	}
	var out []*pulls.Review
	for _, rv := range list {
		if rv.User == nil {
			continue
		}
		if o, ok := opinion[rv.User.ID]; ok && o == rv || !ok && comment[rv.User.ID] == rv {
			out = append(out, rv)
		}
	}
	return out
}

// LatestReviews are each reviewer's latest review that counts (latest).
func (r *pullRequestResolver) LatestReviews(ctx context.Context, args connectionArgs) (*connection[*reviewResolver], error) {
	list, err := r.reviewsOf(ctx)
	if err != nil {
		return nil, err
	}
	var out []*reviewResolver
	for _, rv := range latest(list) {
		out = append(out, &reviewResolver{pull: r, rv: rv})
	}
	return pageList(out, args, "latestReviews")
}

// ReviewDecision is CHANGES_REQUESTED when a reviewer's latest opinion
// asks for changes, REVIEW_REQUIRED when the base's branch protection
// requires more approvals, APPROVED when none asks for changes and one
// approves, null otherwise.
func (r *pullRequestResolver) ReviewDecision(ctx context.Context) (*string, error) {
	list, err := r.reviewsOf(ctx)
	if err != nil {
		return nil, err
	}
	required, err := r.h.Pulls.ReviewRequired(ctx, r.p)
	if err != nil {
		return nil, err
	}
	var decision *string
	for _, rv := range latest(list) {
		switch rv.State {
		case pulls.ReviewChangesRequested:
			s := "CHANGES_REQUESTED"
			return &s, nil
		case pulls.ReviewApproved:
			s := "APPROVED"
			decision = &s
		}
	}
	if required {
		s := "REVIEW_REQUIRED"
		return &s, nil
	}
	return decision, nil
}

// ReviewRequests are the users asked to review (forgeapi requests no
// team's review).
func (r *pullRequestResolver) ReviewRequests(args connectionArgs) (*connection[*reviewRequestResolver], error) {
	out := make([]*reviewRequestResolver, len(r.p.RequestedReviewers))
	for i, a := range r.p.RequestedReviewers {
		out[i] = &reviewRequestResolver{&userResolver{r.h.account(a)}}
	}
	return pageList(out, args, "reviewRequests")
}

// reviewRequestResolver resolves ReviewRequest.
type reviewRequestResolver struct{ user *userResolver }

// RequestedReviewer is the user asked.
func (r *reviewRequestResolver) RequestedReviewer() *requestedReviewerResolver {
	return &requestedReviewerResolver{r.user}
}

// requestedReviewerResolver resolves the RequestedReviewer union: a
// user (never a Team: forgeapi requests no team's review; the union
// holds Team because gh spreads a fragment on it).
type requestedReviewerResolver struct{ user *userResolver }

func (r *requestedReviewerResolver) ToUser() (*userResolver, bool) { return r.user, true }
func (r *requestedReviewerResolver) ToTeam() (*teamResolver, bool) { return nil, false }

// teamResolver resolves Team, which no field answers yet (see
// requestedReviewerResolver).
type teamResolver struct{}

func (*teamResolver) Name() string                        { return "" }
func (*teamResolver) Slug() string                        { return "" }
func (*teamResolver) Organization() *organizationResolver { return nil }

// reviewResolver resolves PullRequestReview.
type reviewResolver struct {
	pull *pullRequestResolver
	rv   *pulls.Review
}

func (r *reviewResolver) ID() gql.ID                        { return gql.ID(wire.NodeID("PRR", r.rv.ID)) }
func (r *reviewResolver) Author() *actorResolver            { return r.pull.h.actorOf(r.rv.User) }
func (r *reviewResolver) AuthorAssociation() string         { return r.rv.Association }
func (r *reviewResolver) Body() string                      { return r.rv.Body }
func (r *reviewResolver) State() string                     { return r.rv.State }
func (r *reviewResolver) CreatedAt() dateTime               { return at(r.rv.CreatedAt) }
func (r *reviewResolver) SubmittedAt() *dateTime            { return optionalTime(r.rv.SubmittedAt) }
func (r *reviewResolver) PullRequest() *pullRequestResolver { return r.pull }

// ReactionGroups are the review's reactions by content: empty, as
// forgeapi keeps no reactions to reviews (the REST API has none).
func (r *reviewResolver) ReactionGroups() *[]*reactionGroupResolver {
	return r.pull.h.reactionGroups("", r.rv.ID, reactions.Counts{}, r)
}

// Commit is the commit reviewed.
func (r *reviewResolver) Commit() *commitResolver {
	if r.rv.CommitID == "" {
		return nil
	}
	return r.pull.commit(r.rv.CommitID)
}

// reviewByID is the review of that id when the caller reads its pull
// request and sees it (pending reviews are their authors' only);
// store.ErrNotFound otherwise.
func (h *Handler) reviewByID(ctx context.Context, id int64) (*reviewResolver, error) {
	p, err := h.Pulls.ByReviewID(ctx, id)
	if err != nil {
		return nil, err
	}
	pull, err := h.pullByNodeID(ctx, wire.NodeID("PR", p.ID))
	if err != nil {
		return nil, err
	}
	rv, err := h.Pulls.Review(ctx, pull.p, id, requestFrom(ctx).principal.UserID())
	if err != nil {
		return nil, err
	}
	return &reviewResolver{pull: pull, rv: rv}, nil
}

func (n *nodeResolver) ToPullRequestReview() (*reviewResolver, bool) {
	r, ok := n.node.(*reviewResolver)
	return r, ok
}

package graphql

import (
	"context"
	"errors"

	gql "github.com/graph-gophers/graphql-go"

	"forgeapi/internal/reactions"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// reactionContents are the ReactionContent values, in the platform's
// order of reaction groups, with the REST content each stands for.
var reactionContents = []struct{ graphql, rest string }{
	{"THUMBS_UP", "+1"}, {"THUMBS_DOWN", "-1"}, {"LAUGH", "laugh"}, {"HOORAY", "hooray"},
	{"CONFUSED", "confused"}, {"HEART", "heart"}, {"ROCKET", "rocket"}, {"EYES", "eyes"},
}

// restContent is the REST content of a ReactionContent value ("" for an
// unknown one, which the engine's validation keeps out).
func restContent(content string) string {
	for _, c := range reactionContents {
		if c.graphql == content {
			return c.rest
		}
	}
	return ""
}

// graphqlContent is the ReactionContent value of a REST content.
func graphqlContent(content string) string {
	for _, c := range reactionContents {
		if c.rest == content {
			return c.graphql
		}
	}
	return ""
}

// reactionGroups are the groups of a subject's reactions, one per
// content whether or not anyone left it (as the platform lists them),
// counted from counts. kind "" is a subject forgeapi keeps no reactions
// for (a review): every group is empty.
func (h *Handler) reactionGroups(kind reactions.Kind, id int64, counts reactions.Counts, subject reactable) *[]*reactionGroupResolver {
	out := make([]*reactionGroupResolver, len(reactionContents))
	for i, c := range reactionContents {
		out[i] = &reactionGroupResolver{h: h, kind: kind, subjectID: id, content: c.graphql, count: counts.Of(c.rest), subject: subject}
	}
	return &out
}

// reactionGroupResolver resolves ReactionGroup: one content's reactions
// to one subject.
type reactionGroupResolver struct {
	h         *Handler
	kind      reactions.Kind
	subjectID int64
	content   string
	count     int
	subject   reactable
}

func (r *reactionGroupResolver) Content() string { return r.content }

// Users are the group's reacting users (their count).
func (r *reactionGroupResolver) Users(args connectionArgs) *reactingUsersResolver {
	return &reactingUsersResolver{count: r.count}
}

// Reactors are the group's reactors (their count).
func (r *reactionGroupResolver) Reactors(args connectionArgs) *reactingUsersResolver {
	return &reactingUsersResolver{count: r.count}
}

// Subject is the subject the group's reactions were left on.
func (r *reactionGroupResolver) Subject() *reactableResolver { return &reactableResolver{r.subject} }

// ViewerHasReacted reports whether the viewer left the group's content:
// one query, asked only of a group that has reactions.
func (r *reactionGroupResolver) ViewerHasReacted(ctx context.Context) (bool, error) {
	viewer := requestFrom(ctx).principal.UserID()
	if r.count == 0 || viewer == 0 {
		return false, nil
	}
	return reactions.HasReacted(ctx, r.h.DB, reactions.Subject{Kind: r.kind, ID: r.subjectID}, viewer, restContent(r.content))
}

// reactingUsersResolver resolves ReactingUserConnection and
// ReactorConnection: their count.
type reactingUsersResolver struct{ count int }

func (r *reactingUsersResolver) TotalCount() int32 { return int32(r.count) }

// reactable is what Issue, IssueComment, PullRequest and
// PullRequestReview resolve of the Reactable interface.
type reactable interface {
	ID() gql.ID
	ReactionGroups() *[]*reactionGroupResolver
}

// reactableResolver resolves Reactable.
type reactableResolver struct{ reactable }

func (r *reactableResolver) ToIssue() (*issueResolver, bool) {
	i, ok := r.reactable.(*issueResolver)
	return i, ok
}

func (r *reactableResolver) ToIssueComment() (*commentResolver, bool) {
	c, ok := r.reactable.(*commentResolver)
	return c, ok
}

func (r *reactableResolver) ToPullRequest() (*pullRequestResolver, bool) {
	p, ok := r.reactable.(*pullRequestResolver)
	return p, ok
}

func (r *reactableResolver) ToPullRequestReview() (*reviewResolver, bool) {
	p, ok := r.reactable.(*reviewResolver)
	return p, ok
}

// reactionResolver resolves Reaction.
type reactionResolver struct {
	h       *Handler
	x       *reactions.Reaction
	subject reactable
}

func (r *reactionResolver) ID() gql.ID          { return gql.ID(wire.NodeID("REA", r.x.ID)) }
func (r *reactionResolver) DatabaseID() *int32  { return databaseID(r.x.ID) }
func (r *reactionResolver) Content() string     { return graphqlContent(r.x.Content) }
func (r *reactionResolver) CreatedAt() dateTime { return at(r.x.CreatedAt) }

// User is the reacting user; nil once the account is gone.
func (r *reactionResolver) User() *userResolver {
	if r.x.User == nil {
		return nil
	}
	u, _ := r.h.owner(r.x.User).repositoryOwner.(*userResolver)
	return u
}

// Reactable is the subject the reaction was left on.
func (r *reactionResolver) Reactable() *reactableResolver { return &reactableResolver{r.subject} }

// reactionInput is the AddReactionInput and RemoveReactionInput input.
type reactionInput struct {
	SubjectID        gql.ID
	Content          string
	ClientMutationID *string
}

// reactionPayload resolves AddReactionPayload and RemoveReactionPayload.
type reactionPayload struct {
	reaction         *reactionResolver
	subject          reactable
	clientMutationID *string
}

func (p *reactionPayload) Reaction() *reactionResolver { return p.reaction }
func (p *reactionPayload) Subject() *reactableResolver { return &reactableResolver{p.subject} }
func (p *reactionPayload) ClientMutationID() *string   { return p.clientMutationID }

// ReactionGroups are the subject's groups after the change.
func (p *reactionPayload) ReactionGroups() *[]*reactionGroupResolver {
	return p.subject.ReactionGroups()
}

// AddReaction leaves the viewer's reaction on an issue, a pull request or
// an issue comment, as POST .../reactions does (a reaction the viewer had
// already left is answered as it is).
func (q *root) AddReaction(ctx context.Context, args struct{ Input reactionInput }) (*reactionPayload, error) {
	return q.handler(ctx).react(ctx, args.Input, "AddReaction", false)
}

// RemoveReaction takes back the viewer's reaction of that content; the
// payload's reaction is the one taken back (null when there was none).
func (q *root) RemoveReaction(ctx context.Context, args struct{ Input reactionInput }) (*reactionPayload, error) {
	return q.handler(ctx).react(ctx, args.Input, "RemoveReaction", true)
}

// react runs AddReaction (remove false) or RemoveReaction.
func (h *Handler) react(ctx context.Context, in reactionInput, mutation string, remove bool) (*reactionPayload, error) {
	subject, repo, err := h.reactableOf(ctx, in.SubjectID)
	if err != nil {
		return nil, err
	}
	actor, _, err := h.writer(ctx, repo, labelsWrite, mutation)
	if err != nil {
		return nil, err
	}
	service := &reactions.Service{DB: h.DB}
	var x *reactions.Reaction
	if remove {
		x, err = service.Remove(ctx, subject, actor, restContent(in.Content))
	} else {
		x, _, err = service.Create(ctx, subject, actor, restContent(in.Content))
	}
	if err != nil {
		return nil, serviceError(err)
	}
	// The subject read again, with its counts after the change.
	n, err := h.lookup(ctx, string(in.SubjectID))
	if err != nil {
		return nil, err
	}
	out := &reactionPayload{subject: n.node.(reactable), clientMutationID: in.ClientMutationID}
	if x != nil {
		out.reaction = &reactionResolver{h: h, x: x, subject: out.subject}
	}
	return out, nil
}

// reactableOf resolves a node id to the reactions subject it names (an
// issue, a pull request's issue or an issue comment the caller reads)
// and its repository; NOT_FOUND otherwise.
func (h *Handler) reactableOf(ctx context.Context, id gql.ID) (reactions.Subject, *repositoryResolver, error) {
	n, err := h.lookup(ctx, string(id))
	if errors.Is(err, store.ErrNotFound) {
		return reactions.Subject{}, nil, unresolved(id)
	} else if err != nil {
		return reactions.Subject{}, nil, err
	}
	switch x := n.node.(type) {
	case *issueResolver:
		return reactions.Subject{Kind: reactions.Issue, ID: x.is.ID, RepoID: x.repo.r.ID}, x.repo, nil
	case *pullRequestResolver:
		return reactions.Subject{Kind: reactions.Issue, ID: x.p.Issue.ID, RepoID: x.repo.r.ID}, x.repo, nil
	case *commentResolver:
		return reactions.Subject{Kind: reactions.IssueComment, ID: x.c.ID, RepoID: x.repo.r.ID}, x.repo, nil
	}
	return reactions.Subject{}, nil, unresolved(id)
}

// reactionNode resolves a Reaction's node id (REA_) when the caller reads
// its subject's repository.
func (h *Handler) reactionNode(ctx context.Context, id int64) (*nodeResolver, error) {
	x, subject, err := reactions.ByID(ctx, h.DB, id)
	if err != nil {
		return nil, err
	}
	var key string
	switch subject.Kind {
	case reactions.Issue:
		key = wire.NodeID("I", subject.ID)
	case reactions.IssueComment:
		key = wire.NodeID("IC", subject.ID)
	default:
		return nil, store.ErrNotFound
	}
	n, err := h.lookup(ctx, key)
	if err != nil {
		return nil, err
	}
	return &nodeResolver{&reactionResolver{h: h, x: x, subject: n.node.(reactable)}}, nil
}

package graphql

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	gql "github.com/graph-gophers/graphql-go"

	"forgeapi/internal/accounts"
	"forgeapi/internal/issues"
	"forgeapi/internal/repos"
	"forgeapi/internal/wire"
)

// This file holds what a pull request answers as its issue does: its
// author (Actor), creation, assignees (UserConnection), labels,
// milestone, comments (IssueComment), reaction groups and project cards,
// with those types' resolvers, which issues share, and the merge methods
// a repository allows, which gh asks both for pull requests and issues.

func (r *pullRequestResolver) Author() *actorResolver { return r.h.actorOf(r.p.Issue.User) }
func (r *pullRequestResolver) CreatedAt() dateTime    { return at(r.p.Issue.CreatedAt) }

// actor is what User and Organization resolve of the Actor interface.
type actor interface {
	Login() string
	URL(ctx context.Context) uri
	ResourcePath() uri
	AvatarURL(ctx context.Context, args sizeArgs) uri
}

// actorResolver resolves Actor.
type actorResolver struct{ actor }

// actorOf is the Actor of an account, nil for none (a deleted account).
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

// users is the UserConnection of the accounts, paged as args ask.
func (h *Handler) users(list []*accounts.Account, args connectionArgs, name string) (*connection[*userResolver], error) {
	out := make([]*userResolver, len(list))
	for i, a := range list {
		out[i] = &userResolver{h.account(a)}
	}
	return pageList(out, args, name)
}

// labelResolver resolves Label.
type labelResolver struct {
	lb *issues.Label
}

func (r *labelResolver) ID() gql.ID           { return gql.ID(wire.NodeID("LA", r.lb.ID)) }
func (r *labelResolver) Name() string         { return r.lb.Name }
func (r *labelResolver) Color() string        { return r.lb.Color }
func (r *labelResolver) Description() *string { return optional(r.lb.Description) }

// labelsArgs are the arguments of Labelable.labels.
type labelsArgs struct {
	connectionArgs
	OrderBy *struct{ Field, Direction string }
}

// labels is the LabelConnection of the labels, ordered as args ask
// (NAME, or CREATED_AT by default: the order of their ids).
func labels(list []*issues.Label, args labelsArgs) (*connection[*labelResolver], error) {
	sorted := slices.Clone(list)
	byName := args.OrderBy != nil && args.OrderBy.Field == "NAME"
	slices.SortStableFunc(sorted, func(a, b *issues.Label) int {
		if byName {
			return strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name))
		}
		return int(a.ID - b.ID)
	})
	if args.OrderBy != nil && args.OrderBy.Direction == "DESC" {
		slices.Reverse(sorted)
	}
	out := make([]*labelResolver, len(sorted))
	for i, lb := range sorted {
		out[i] = &labelResolver{lb}
	}
	return pageList(out, args.connectionArgs, "labels")
}

// milestoneResolver resolves Milestone.
type milestoneResolver struct {
	m *issues.Milestone
}

func (r *milestoneResolver) ID() gql.ID           { return gql.ID(wire.NodeID("MI", r.m.ID)) }
func (r *milestoneResolver) Number() int32        { return int32(r.m.Number) }
func (r *milestoneResolver) Title() string        { return r.m.Title }
func (r *milestoneResolver) Description() *string { return optional(r.m.Description) }

// DueOn is the milestone's due date, null when none.
func (r *milestoneResolver) DueOn() *dateTime {
	if r.m.DueOn == nil {
		return nil
	}
	t := at(*r.m.DueOn)
	return &t
}

// issueCommentResolver resolves IssueComment.
type issueCommentResolver struct {
	h    *Handler
	c    *issues.Comment
	repo *repos.Repository
	// page is "issues" or "pull", the web page of the comment's issue.
	page string
}

func (r *issueCommentResolver) ID() gql.ID                { return gql.ID(wire.NodeID("IC", r.c.ID)) }
func (r *issueCommentResolver) Author() *actorResolver    { return r.h.actorOf(r.c.User) }
func (r *issueCommentResolver) AuthorAssociation() string { return r.c.Association }
func (r *issueCommentResolver) Body() string              { return r.c.Body }
func (r *issueCommentResolver) CreatedAt() dateTime       { return at(r.c.CreatedAt) }

// IncludesCreatedEdit reports whether the comment was edited: forgeapi
// keeps no edit history, so it never was as far as GraphQL tells.
func (r *issueCommentResolver) IncludesCreatedEdit() bool { return false }

// IsMinimized and MinimizedReason: forgeapi hides no comment.
func (r *issueCommentResolver) IsMinimized() bool        { return false }
func (r *issueCommentResolver) MinimizedReason() *string { return nil }

// ReactionGroups are the comment's reactions by content.
func (r *issueCommentResolver) ReactionGroups() *[]*reactionGroupResolver { return reactionGroups() }

// URL is the comment's place on its issue's web page.
func (r *issueCommentResolver) URL(ctx context.Context) uri {
	id := strconv.FormatInt(r.c.ID, 10)
	return uri(repoWebURL(ctx, r.repo) + "/" + r.page + "/" + wire.Itoa(r.c.IssueNumber) + "#issuecomment-" + id)
}

// ViewerDidAuthor reports whether the caller wrote the comment.
func (r *issueCommentResolver) ViewerDidAuthor(ctx context.Context) bool {
	return r.c.User != nil && r.c.User.ID == requestFrom(ctx).principal.UserID()
}

// reactionContents are the platform's reaction contents, in its order.
var reactionContents = []string{"THUMBS_UP", "THUMBS_DOWN", "LAUGH", "HOORAY", "CONFUSED", "HEART", "ROCKET", "EYES"}

// reactionGroups are the reaction groups of a subject: forgeapi stores
// no reactions (REST's reactions count none), so each content has none.
func reactionGroups() *[]*reactionGroupResolver {
	out := make([]*reactionGroupResolver, len(reactionContents))
	for i, c := range reactionContents {
		out[i] = &reactionGroupResolver{content: c}
	}
	return &out
}

// reactionGroupResolver resolves ReactionGroup.
type reactionGroupResolver struct{ content string }

func (r *reactionGroupResolver) Content() string { return r.content }

// Users are the users who reacted so: none (see reactionGroups).
func (r *reactionGroupResolver) Users(args connectionArgs) *connection[*userResolver] {
	return counted[*userResolver]("users", 0)
}

func (n *nodeResolver) ToIssueComment() (*issueCommentResolver, bool) {
	c, ok := n.node.(*issueCommentResolver)
	return c, ok
}

func (n *nodeResolver) ToLabel() (*labelResolver, bool) {
	l, ok := n.node.(*labelResolver)
	return l, ok
}

func (n *nodeResolver) ToMilestone() (*milestoneResolver, bool) {
	m, ok := n.node.(*milestoneResolver)
	return m, ok
}

// Assignees are the users assigned to the pull request.
func (r *pullRequestResolver) Assignees(args connectionArgs) (*connection[*userResolver], error) {
	return r.h.users(r.p.Issue.Assignees, args, "assignees")
}

// Labels are the pull request's labels.
func (r *pullRequestResolver) Labels(args labelsArgs) (*connection[*labelResolver], error) {
	return labels(r.p.Issue.Labels, args)
}

// Milestone is the pull request's milestone, null when none.
func (r *pullRequestResolver) Milestone() *milestoneResolver {
	if r.p.Issue.Milestone == nil {
		return nil
	}
	return &milestoneResolver{r.p.Issue.Milestone}
}

// ReactionGroups are the pull request's reactions by content.
func (r *pullRequestResolver) ReactionGroups() *[]*reactionGroupResolver { return reactionGroups() }

// commentsArgs are the arguments of PullRequest.comments.
type commentsArgs struct {
	connectionArgs
	OrderBy *struct{ Field, Direction string }
}

// Comments are the pull request's conversation comments, oldest first
// (its issue's comments; review comments are the reviews').
func (r *pullRequestResolver) Comments(ctx context.Context, args commentsArgs) (*connection[*issueCommentResolver], error) {
	total := r.p.Issue.Comments
	if args.First == nil && args.Last == nil {
		return counted[*issueCommentResolver]("comments", total), nil
	}
	if err := args.check("comments"); err != nil {
		return nil, err
	}
	start, end, err := args.window(total)
	if err != nil || start == end {
		return pageOf([]*issueCommentResolver{}, start, total), err
	}
	list, err := r.h.Issues.Comments(ctx, r.p.Repo, r.p.Number(), end-start, start)
	if err != nil {
		return nil, err
	}
	list = list[:min(len(list), end-start)]
	out := make([]*issueCommentResolver, len(list))
	for i, c := range list {
		out[i] = &issueCommentResolver{h: r.h, c: c, repo: r.p.Repo, page: "pull"}
	}
	return pageOf(out, start, total), nil
}

// ProjectCards are the pull request's cards in classic projects:
// forgeapi has no classic projects, so there are none.
func (r *pullRequestResolver) ProjectCards(args projectCardsArgs) (*connection[*projectCardResolver], error) {
	return pageList([]*projectCardResolver{}, args.connectionArgs, "projectCards")
}

// projectCardsArgs are the arguments of projectCards.
type projectCardsArgs struct {
	connectionArgs
	ArchivedStates []*string
}

// projectCardResolver resolves ProjectCard, of which forgeapi has none
// (the schema holds it because gh asks for projectCards).
type projectCardResolver struct{}

func (*projectCardResolver) Project() *namedResolver { return nil }
func (*projectCardResolver) Column() *namedResolver  { return nil }

// namedResolver resolves the types of which gh asks only the name:
// Project, ProjectColumn, Workflow.
type namedResolver struct{ name string }

func (r *namedResolver) Name() string { return r.name }

// optionalTime is the DateTime of t, null for nil.
func optionalTime(t *time.Time) *dateTime {
	if t == nil {
		return nil
	}
	d := at(*t)
	return &d
}

// The merge methods a repository allows: all three, as REST's
// allow_merge_commit, allow_squash_merge and allow_rebase_merge.
func (r *repositoryResolver) MergeCommitAllowed() bool { return true }
func (r *repositoryResolver) SquashMergeAllowed() bool { return true }
func (r *repositoryResolver) RebaseMergeAllowed() bool { return true }

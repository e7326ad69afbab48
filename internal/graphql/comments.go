package graphql

import (
	"cmp"
	"context"
	"slices"

	gql "github.com/graph-gophers/graphql-go"

	"forgeapi/internal/issues"
	"forgeapi/internal/reactions"
	"forgeapi/internal/wire"
)

// commentResolver resolves IssueComment: a comment on an issue or pull
// request (issue) of the repository.
type commentResolver struct {
	h     *Handler
	c     *issues.Comment
	repo  *repositoryResolver
	issue *issueResolver // the commented issue; nil until asked
}

func (r *commentResolver) ID() gql.ID                { return gql.ID(wire.NodeID("IC", r.c.ID)) }
func (r *commentResolver) DatabaseID() *int32        { id := int32(r.c.ID); return &id }
func (r *commentResolver) Body() string              { return r.c.Body }
func (r *commentResolver) CreatedAt() dateTime       { return at(r.c.CreatedAt) }
func (r *commentResolver) UpdatedAt() dateTime       { return at(r.c.UpdatedAt) }
func (r *commentResolver) Author() *actorResolver    { return r.h.actorOf(r.c.User) }
func (r *commentResolver) AuthorAssociation() string { return r.c.Association }

// IncludesCreatedEdit, IsMinimized and MinimizedReason: forgeapi keeps
// no edit history and hides no comment.
func (r *commentResolver) IncludesCreatedEdit() bool { return false }
func (r *commentResolver) IsMinimized() bool         { return false }
func (r *commentResolver) MinimizedReason() *string  { return nil }

// ReactionGroups are the comment's reactions by content.
func (r *commentResolver) ReactionGroups() *[]*reactionGroupResolver {
	return r.h.reactionGroups(reactions.IssueComment, r.c.ID, r.c.Reactions, r)
}

// URL is the comment's place on the issue's page, as REST's html_url.
func (r *commentResolver) URL(ctx context.Context) uri {
	return r.repo.URL(ctx) + uri("/issues/"+wire.Itoa(r.c.IssueNumber)+"#issuecomment-"+wire.Itoa(r.c.ID))
}

// ViewerDidAuthor reports whether the caller wrote the comment.
func (r *commentResolver) ViewerDidAuthor(ctx context.Context) bool {
	return r.c.User != nil && r.c.User.ID == requestFrom(ctx).principal.UserID()
}

// Issue is the commented issue (a pull request's issue for a comment on
// one).
func (r *commentResolver) Issue(ctx context.Context) (*issueResolver, error) {
	if r.issue != nil {
		return r.issue, nil
	}
	is, err := r.h.Issues.Get(ctx, r.repo.r, r.c.IssueNumber)
	if err != nil {
		return nil, err
	}
	return &issueResolver{h: r.h, is: is, repo: r.repo}, nil
}

// issueCommentOrder is the IssueCommentOrder input.
type issueCommentOrder struct {
	Field     string
	Direction string
}

// commentsArgs are the arguments of Issue.comments.
type commentsArgs struct {
	connectionArgs
	OrderBy *issueCommentOrder
}

// Comments are the issue's comments, oldest first, paged (one query for
// the page and its authors); with orderBy, by update time.
func (r *issueResolver) Comments(ctx context.Context, args commentsArgs) (*connection[*commentResolver], error) {
	return r.h.comments(ctx, r, args)
}

// comments pages the comments of the issue (a pull request's too).
func (h *Handler) comments(ctx context.Context, issue *issueResolver, args commentsArgs) (*connection[*commentResolver], error) {
	if err := args.checkCounted("comments"); err != nil {
		return nil, err
	}
	total := issue.is.Comments
	if args.unpaged() {
		return counted[*commentResolver]("comments", total), nil
	}
	start, end, err := args.window(total)
	if err != nil {
		return nil, err
	}
	if args.OrderBy != nil {
		start, end = 0, total
	}
	list := []*issues.Comment{}
	if end > start {
		if list, err = h.Issues.Comments(ctx, issue.repo.r, issue.is.Number, end-start, start); err != nil {
			return nil, err
		}
		list = list[:min(len(list), end-start)]
	}
	nodes := make([]*commentResolver, len(list))
	for i, c := range list {
		nodes[i] = &commentResolver{h: h, c: c, repo: issue.repo, issue: issue}
	}
	if args.OrderBy == nil {
		return pageOf(nodes, start, total), nil
	}
	slices.SortStableFunc(nodes, func(a, b *commentResolver) int {
		c := cmp.Or(a.c.UpdatedAt.Compare(b.c.UpdatedAt), cmp.Compare(a.c.ID, b.c.ID))
		if args.OrderBy.Direction == "DESC" {
			return -c
		}
		return c
	})
	return paginate(nodes, args.connectionArgs)
}

// projectCardsArgs are the arguments of Issue.projectCards.
type projectCardsArgs struct {
	connectionArgs
	ArchivedStates []*string
}

// noProjectCards is the empty connection of classic project cards
// (forgeapi has no projects).
func noProjectCards(args projectCardsArgs) (*connection[*projectCardResolver], error) {
	return pageOf([]*projectCardResolver{}, 0, 0), nil
}

// projectCardResolver resolves ProjectCard; none exists, but the schema
// needs its resolvers.
type projectCardResolver struct{ project, column string }

func (r *projectCardResolver) Project() *namedResolver { return &namedResolver{r.project} }
func (r *projectCardResolver) Column() *namedResolver  { return &namedResolver{r.column} }

// namedResolver resolves Project and ProjectColumn: a name.
type namedResolver struct{ name string }

func (r *namedResolver) Name() string { return r.name }

package graphql

import (
	"context"

	"forgeapi/internal/reactions"
)

// The fields a pull request shares with its issue (gh issue view asks
// them of either, through issueOrPullRequest): they resolve as the
// issue's do, from the pull request's issue row.

// issue is the pull request's issue row as an Issue resolver.
func (r *pullRequestResolver) issue() *issueResolver {
	return &issueResolver{h: r.h, is: r.p.Issue, repo: r.repo}
}

func (r *pullRequestResolver) CreatedAt() dateTime           { return r.issue().CreatedAt() }
func (r *pullRequestResolver) Author() *actorResolver        { return r.issue().Author() }
func (r *pullRequestResolver) Milestone() *milestoneResolver { return r.issue().Milestone() }

// ReactionGroups are the reactions to the pull request's issue by
// content.
func (r *pullRequestResolver) ReactionGroups() *[]*reactionGroupResolver {
	return r.h.reactionGroups(reactions.Issue, r.p.Issue.ID, r.p.Issue.Reactions, r)
}

func (r *pullRequestResolver) Assignees(args connectionArgs) (*connection[*userResolver], error) {
	return r.issue().Assignees(args)
}

func (r *pullRequestResolver) Labels(args labelsArgs) (*connection[*labelResolver], error) {
	return r.issue().Labels(args)
}

func (r *pullRequestResolver) ProjectCards(args projectCardsArgs) (*connection[*projectCardResolver], error) {
	return noProjectCards(args)
}

// Comments are the pull request's conversation comments (its issue's),
// as Issue.comments.
func (r *pullRequestResolver) Comments(ctx context.Context, args commentsArgs) (*connection[*commentResolver], error) {
	return r.h.comments(ctx, r.issue(), args)
}

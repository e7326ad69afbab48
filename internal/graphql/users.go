package graphql

import "context"

// repositoryUsersArgs are the arguments of Repository.assignableUsers
// and Repository.mentionableUsers.
type repositoryUsersArgs struct {
	connectionArgs
	Query *string
}

// AssignableUsers are the users who may be assigned the repository's
// issues, as GET /repos/{owner}/{repo}/assignees lists them
// (issues.Service.Assignees: the owner, collaborators with triage or
// more, the organization's owners and members as its base permission
// allows), by login; query keeps those whose login or name contains it
// (any case). FORBIDDEN when the credentials may not read the
// repository's issues, as that route refuses them.
func (r *repositoryResolver) AssignableUsers(ctx context.Context, args repositoryUsersArgs) (*connection[*userResolver], error) {
	if err := args.checkCounted("assignableUsers"); err != nil {
		return nil, err
	}
	return r.assignable(ctx, args, "assignableUsers")
}

// MentionableUsers are the users forgeapi suggests for @-mentions: the
// assignable users (forgeapi does not add the participants of the
// repository's issues as the platform does), filtered and paged as
// AssignableUsers.
func (r *repositoryResolver) MentionableUsers(ctx context.Context, args repositoryUsersArgs) (*connection[*userResolver], error) {
	if err := args.checkCounted("mentionableUsers"); err != nil {
		return nil, err
	}
	return r.assignable(ctx, args, "mentionableUsers")
}

// assignable pages the assignable users that match args.Query, as the
// connection name.
func (r *repositoryResolver) assignable(ctx context.Context, args repositoryUsersArgs, name string) (*connection[*userResolver], error) {
	if !mayReadIssues(requestFrom(ctx).principal, r.r) {
		return nil, errIssuesForbidden
	}
	all, err := r.h.Issues.Assignees(ctx, r.r)
	if err != nil {
		return nil, err
	}
	var list []*userResolver
	for _, a := range all {
		if args.Query == nil || containsFold(a.Login, *args.Query) || containsFold(a.Name, *args.Query) {
			list = append(list, &userResolver{r.h.account(a)})
		}
	}
	return pageList(list, args.connectionArgs, name)
}

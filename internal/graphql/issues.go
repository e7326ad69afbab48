package graphql

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	gql "github.com/graph-gophers/graphql-go"

	"forgeapi/internal/accounts"
	"forgeapi/internal/auth"
	"forgeapi/internal/issues"
	"forgeapi/internal/reactions"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// mayReadIssues reports whether credentials that see the repository read
// its issues: a fine-grained or installation token reads a private
// one's only with Issues read (REST's rule for the issues routes).
func mayReadIssues(p *auth.Principal, repo *repos.Repository) bool {
	if p.FineGrained() && repo.Private {
		return p.Token.Selects(repo.ID, repo.Owner.ID) && p.Token.Grant.Satisfies(auth.Perm("issues:read"))
	}
	return true
}

// errIssuesForbidden is the error of credentials that see a repository
// but may not read its issues.
var errIssuesForbidden = forbidden("Resource not accessible by personal access token")

// Issue is the repository's issue of that number: FORBIDDEN when the
// credentials may not read the repository's issues, NOT_FOUND when there
// is none (a pull request's number included, as the platform's).
func (r *repositoryResolver) Issue(ctx context.Context, args numberArgs) (*issueResolver, error) {
	if !mayReadIssues(requestFrom(ctx).principal, r.r) {
		return nil, errIssuesForbidden
	}
	is, err := r.h.Issues.Get(ctx, r.r, int64(args.Number))
	if errors.Is(err, store.ErrNotFound) || err == nil && is.PullRequest {
		return nil, notFound(fmt.Sprintf("Could not resolve to an Issue with the number of %d.", args.Number))
	} else if err != nil {
		return nil, err
	}
	return &issueResolver{h: r.h, is: is, repo: r}, nil
}

// IssueOrPullRequest is the repository's issue or pull request of that
// number, with the checks of Issue and PullRequest.
func (r *repositoryResolver) IssueOrPullRequest(ctx context.Context, args numberArgs) (*issueOrPullRequestResolver, error) {
	is, err := r.h.Issues.Get(ctx, r.r, int64(args.Number))
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFound(fmt.Sprintf("Could not resolve to an issue or pull request with the number of %d.", args.Number))
	} else if err != nil {
		return nil, err
	}
	if is.PullRequest {
		p, err := r.PullRequest(ctx, args)
		if err != nil {
			return nil, err
		}
		return &issueOrPullRequestResolver{pull: p}, nil
	}
	if !mayReadIssues(requestFrom(ctx).principal, r.r) {
		return nil, errIssuesForbidden
	}
	return &issueOrPullRequestResolver{issue: &issueResolver{h: r.h, is: is, repo: r}}, nil
}

// issueOrPullRequestResolver resolves the IssueOrPullRequest union: one
// of its fields is set.
type issueOrPullRequestResolver struct {
	issue *issueResolver
	pull  *pullRequestResolver
}

func (u *issueOrPullRequestResolver) ToIssue() (*issueResolver, bool) { return u.issue, u.issue != nil }
func (u *issueOrPullRequestResolver) ToPullRequest() (*pullRequestResolver, bool) {
	return u.pull, u.pull != nil
}

// issuesArgs are the arguments of Repository.issues.
type issuesArgs struct {
	connectionArgs
	FilterBy *issueFilters
	Labels   *[]string
	OrderBy  *issueOrder
	States   *[]string
}

// issueFilters is the IssueFilters input.
type issueFilters struct {
	Assignee, CreatedBy, Mentioned *string
	Labels                         *[]string
	Milestone, MilestoneNumber     *string
	Since                          *dateTime
	States                         *[]string
	ViewerSubscribed               bool
}

// issueOrder is the IssueOrder input.
type issueOrder struct {
	Field     string
	Direction string
}

// Issues are the repository's issues (pull requests left out) filtered,
// ordered and paged as args ask: the page and its count are two
// queries, and the page's labels, assignees, authors and milestones a
// fixed number more (issues.Service.List), whatever its length.
func (r *repositoryResolver) Issues(ctx context.Context, args issuesArgs) (*connection[*issueResolver], error) {
	if err := args.checkCounted("issues"); err != nil {
		return nil, err
	}
	if !mayReadIssues(requestFrom(ctx).principal, r.r) {
		return nil, errIssuesForbidden
	}
	f, err := r.h.issueFilter(ctx, r.r, args)
	if err != nil {
		return nil, err
	}
	total, err := r.h.Issues.Count(ctx, r.r, f)
	if err != nil || args.unpaged() {
		return counted[*issueResolver]("issues", total), err
	}
	start, end, err := args.window(total)
	if err != nil {
		return nil, err
	}
	var list []*issues.Issue
	if end > start {
		f.Limit, f.Offset = end-start, start
		if list, _, err = r.h.Issues.List(ctx, r.r, f); err != nil {
			return nil, err
		}
	}
	nodes := make([]*issueResolver, len(list))
	for i, is := range list {
		nodes[i] = &issueResolver{h: r.h, is: is, repo: r}
	}
	return pageOf(nodes, start, total), nil
}

// issueFilter is the issues.Filter of the connection's arguments.
func (h *Handler) issueFilter(ctx context.Context, repo *repos.Repository, args issuesArgs) (issues.Filter, error) {
	f := issues.Filter{IssuesOnly: true, Sort: "created"}
	states := args.States
	by := args.FilterBy
	if by == nil {
		by = &issueFilters{}
	}
	if by.ViewerSubscribed {
		return f, invalid("The viewerSubscribed filter is not supported.")
	}
	f.State = stateFilter(states, by.States)
	if args.Labels != nil {
		f.AnyLabels = *args.Labels
	}
	if by.Labels != nil {
		f.AnyLabels = append(f.AnyLabels, *by.Labels...)
	}
	var err error
	if by.Assignee != nil {
		if *by.Assignee == "*" {
			f.Assignee = issues.AssigneeAny
		} else if f.Assignee, err = h.userFilter(ctx, *by.Assignee); err != nil {
			return f, err
		}
	}
	if by.CreatedBy != nil {
		if f.Creator, err = h.userFilter(ctx, *by.CreatedBy); err != nil {
			return f, err
		}
	}
	if by.Mentioned != nil {
		f.Mentioned = *by.Mentioned
	}
	if f.Milestone, err = h.milestoneFilter(ctx, repo, by); err != nil {
		return f, err
	}
	if by.Since != nil {
		t := by.Since.Time.Time
		f.Since = &t
	}
	if args.OrderBy != nil {
		f.Sort = map[string]string{"CREATED_AT": "created", "UPDATED_AT": "updated", "COMMENTS": "comments"}[args.OrderBy.Field]
		f.Desc = args.OrderBy.Direction == "DESC"
	}
	return f, nil
}

// stateFilter is the issues.Filter state of the states asked by the
// argument and the filter (both when both are given): all when neither
// is; "none", which no issue has, when they share none.
func stateFilter(lists ...*[]string) string {
	want := map[string]bool{"OPEN": true, "CLOSED": true}
	for _, list := range lists {
		if list == nil {
			continue
		}
		for state := range want {
			if !slices.Contains(*list, state) {
				delete(want, state)
			}
		}
	}
	switch {
	case want["OPEN"] && want["CLOSED"]:
		return "all"
	case want["OPEN"]:
		return issues.StateOpen
	case want["CLOSED"]:
		return issues.StateClosed
	}
	return "none"
}

// userFilter is the account id of a login of the assignee and createdBy
// filters; a login that names no one matches no issue (-3, no id).
func (h *Handler) userFilter(ctx context.Context, login string) (int64, error) {
	a, err := accounts.ByLogin(ctx, h.DB, login)
	if errors.Is(err, store.ErrNotFound) {
		return -3, nil
	}
	if err != nil {
		return 0, err
	}
	return a.ID, nil
}

// milestoneFilter is the issues.Filter milestone of the filters: "*"
// (any), "none", a number (milestoneNumber) or a milestone's database
// id (milestone).
func (h *Handler) milestoneFilter(ctx context.Context, repo *repos.Repository, by *issueFilters) (string, error) {
	value, byNumber := by.Milestone, false
	if by.MilestoneNumber != nil {
		value, byNumber = by.MilestoneNumber, true
	}
	if value == nil || *value == "*" || strings.EqualFold(*value, "none") {
		if value == nil {
			return "", nil
		}
		return strings.ToLower(*value), nil
	}
	n, err := strconv.ParseInt(*value, 10, 64)
	if err != nil {
		return "", invalid(fmt.Sprintf("The milestone filter must be a number, \"*\" or \"none\", not %q.", *value))
	}
	if byNumber {
		return *value, nil
	}
	m, mrepo, err := h.Issues.MilestoneByID(ctx, n)
	if errors.Is(err, store.ErrNotFound) || err == nil && mrepo.ID != repo.ID {
		return "0", nil // no milestone has number 0: no issue matches
	} else if err != nil {
		return "", err
	}
	return strconv.FormatInt(m.Number, 10), nil
}

// issueResolver resolves Issue: the issue with its repository (which
// the caller sees, and whose issues the credentials read).
type issueResolver struct {
	h    *Handler
	is   *issues.Issue
	repo *repositoryResolver
}

func (r *issueResolver) ID() gql.ID                      { return gql.ID(wire.NodeID("I", r.is.ID)) }
func (r *issueResolver) DatabaseID() *int32              { id := int32(r.is.ID); return &id }
func (r *issueResolver) Number() int32                   { return int32(r.is.Number) }
func (r *issueResolver) Title() string                   { return r.is.Title }
func (r *issueResolver) Body() string                    { return r.is.Body }
func (r *issueResolver) Closed() bool                    { return r.is.State == issues.StateClosed }
func (r *issueResolver) ClosedAt() *dateTime             { return optionalTime(r.is.ClosedAt) }
func (r *issueResolver) CreatedAt() dateTime             { return at(r.is.CreatedAt) }
func (r *issueResolver) UpdatedAt() dateTime             { return at(r.is.UpdatedAt) }
func (r *issueResolver) Locked() bool                    { return r.is.Locked }
func (r *issueResolver) Repository() *repositoryResolver { return r.repo }
func (r *issueResolver) Author() *actorResolver          { return r.h.actorOf(r.is.User) }
func (r *issueResolver) AuthorAssociation() string       { return r.is.Association }

// State is OPEN or CLOSED.
func (r *issueResolver) State() string { return strings.ToUpper(r.is.State) }

// URL is the issue's web page.
func (r *issueResolver) URL(ctx context.Context) uri {
	return r.repo.URL(ctx) + uri("/issues/"+wire.Itoa(r.is.Number))
}

// stateReasonArgs are the argument of Issue.stateReason.
type stateReasonArgs struct{ EnableDuplicate bool }

// StateReason is why the issue was last closed or reopened (REST's
// state_reason), null when it never was; a duplicate is NOT_PLANNED
// unless enableDuplicate asks for DUPLICATE.
func (r *issueResolver) StateReason(args stateReasonArgs) *string {
	if r.is.StateReason == "" {
		return nil
	}
	reason := strings.ToUpper(r.is.StateReason)
	if reason == "DUPLICATE" && !args.EnableDuplicate {
		reason = "NOT_PLANNED"
	}
	return &reason
}

// Assignees are the issue's assignees, by id.
func (r *issueResolver) Assignees(args connectionArgs) (*connection[*userResolver], error) {
	if err := args.checkCounted("assignees"); err != nil {
		return nil, err
	}
	list := make([]*userResolver, len(r.is.Assignees))
	for i, a := range r.is.Assignees {
		list[i] = &userResolver{r.h.account(a)}
	}
	return pageList(list, args, "assignees")
}

// Labels are the issue's labels in the order asked (creation by
// default).
func (r *issueResolver) Labels(args labelsArgs) (*connection[*labelResolver], error) {
	if err := args.checkCounted("labels"); err != nil {
		return nil, err
	}
	list := make([]*labelResolver, len(r.is.Labels))
	for i, lb := range r.is.Labels {
		list[i] = &labelResolver{lb: lb, repo: r.repo}
	}
	sortLabels(list, args.OrderBy)
	return pageList(list, args.connectionArgs, "labels")
}

// Milestone is the issue's milestone, null when none.
func (r *issueResolver) Milestone() *milestoneResolver {
	if r.is.Milestone == nil {
		return nil
	}
	return &milestoneResolver{m: r.is.Milestone, repo: r.repo}
}

// ViewerCanUpdate reports whether the caller may change the issue: its
// author or a triager, with credentials that may write issues.
func (r *issueResolver) ViewerCanUpdate(ctx context.Context) (bool, error) {
	p := requestFrom(ctx).principal
	if r.repo.r.Archived || !mayWrite(p, r.repo.r, issuesWrite) {
		return false, nil
	}
	if r.is.User != nil && r.is.User.ID == p.UserID() {
		return true, nil
	}
	return issues.CanTriage(ctx, r.h.DB, p, r.repo.role, r.repo.r)
}

// ReactionGroups are the issue's reactions by content.
func (r *issueResolver) ReactionGroups() *[]*reactionGroupResolver {
	return r.h.reactionGroups(reactions.Issue, r.is.ID, r.is.Reactions, r)
}

// ProjectCards are the issue's cards on classic projects: forgeapi has
// no projects, so there are none.
func (r *issueResolver) ProjectCards(args projectCardsArgs) (*connection[*projectCardResolver], error) {
	return noProjectCards(args)
}

// optionalTime is the DateTime of t, null for nil.
func optionalTime(t *time.Time) *dateTime {
	if t == nil {
		return nil
	}
	d := at(*t)
	return &d
}

// issueNode resolves the node id of an issue (I_), issue comment (IC_),
// label (LA_) or milestone (MI_) of database id when the caller sees its
// repository and the credentials read its issues (labels: or its pull
// requests); store.ErrNotFound otherwise. The issue row of a pull
// request resolves to the pull request.
func (h *Handler) issueNode(ctx context.Context, typ string, id int64) (*nodeResolver, error) {
	var (
		repo *repos.Repository
		wrap func(*repositoryResolver) node
		err  error
	)
	switch typ {
	case "I":
		var is *issues.Issue
		if is, repo, err = h.Issues.IssueByID(ctx, id); err == nil && is.PullRequest {
			return h.pullOfIssue(ctx, repo, is.Number)
		}
		wrap = func(r *repositoryResolver) node { return &issueResolver{h: h, is: is, repo: r} }
	case "IC":
		var c *issues.Comment
		c, repo, err = h.Issues.CommentByID(ctx, id)
		wrap = func(r *repositoryResolver) node { return &commentResolver{h: h, c: c, repo: r} }
	case "LA":
		var lb *issues.Label
		lb, repo, err = h.Issues.LabelByID(ctx, id)
		wrap = func(r *repositoryResolver) node { return &labelResolver{lb: lb, repo: r} }
	case "MI":
		var m *issues.Milestone
		m, repo, err = h.Issues.MilestoneByID(ctx, id)
		wrap = func(r *repositoryResolver) node { return &milestoneResolver{m: m, repo: r} }
	default:
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	r, err := h.visibleRepository(ctx, repo)
	if err != nil {
		return nil, err
	}
	p := requestFrom(ctx).principal
	if typ == "LA" && !mayReadLabels(p, repo) || typ != "LA" && !mayReadIssues(p, repo) {
		return nil, store.ErrNotFound
	}
	return &nodeResolver{wrap(r)}, nil
}

// pullOfIssue is the pull request of the repository's issue number when
// the caller reads it; store.ErrNotFound otherwise.
func (h *Handler) pullOfIssue(ctx context.Context, repo *repos.Repository, number int64) (*nodeResolver, error) {
	r, err := h.visibleRepository(ctx, repo)
	if err != nil {
		return nil, err
	}
	if !mayReadPulls(requestFrom(ctx).principal, repo) {
		return nil, store.ErrNotFound
	}
	p, err := h.Pulls.Get(ctx, repo, number)
	if err != nil {
		return nil, err
	}
	return &nodeResolver{&pullRequestResolver{h: h, p: p, repo: r}}, nil
}

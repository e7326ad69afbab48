package graphql

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"

	gql "github.com/graph-gophers/graphql-go"

	"forgeapi/internal/issues"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// milestoneResolver resolves Milestone.
type milestoneResolver struct {
	m    *issues.Milestone
	repo *repositoryResolver
}

func (r *milestoneResolver) ID() gql.ID           { return gql.ID(wire.NodeID("MI", r.m.ID)) }
func (r *milestoneResolver) Number() int32        { return int32(r.m.Number) }
func (r *milestoneResolver) Title() string        { return r.m.Title }
func (r *milestoneResolver) Description() *string { return optional(r.m.Description) }
func (r *milestoneResolver) State() string        { return strings.ToUpper(r.m.State) }
func (r *milestoneResolver) Closed() bool         { return r.m.State == issues.StateClosed }
func (r *milestoneResolver) ClosedAt() *dateTime  { return optionalTime(r.m.ClosedAt) }
func (r *milestoneResolver) DueOn() *dateTime     { return optionalTime(r.m.DueOn) }
func (r *milestoneResolver) CreatedAt() dateTime  { return at(r.m.CreatedAt) }
func (r *milestoneResolver) UpdatedAt() dateTime  { return at(r.m.UpdatedAt) }

// URL is the milestone's web page.
func (r *milestoneResolver) URL(ctx context.Context) uri {
	return r.repo.URL(ctx) + uri("/milestone/"+wire.Itoa(r.m.Number))
}

// Milestone is the repository's milestone of that number, null when
// none.
func (r *repositoryResolver) Milestone(ctx context.Context, args numberArgs) (*milestoneResolver, error) {
	if !mayReadIssues(requestFrom(ctx).principal, r.r) {
		return nil, errIssuesForbidden
	}
	m, err := r.h.Issues.Milestone(ctx, r.r, int64(args.Number))
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	return &milestoneResolver{m: m, repo: r}, nil
}

// milestoneOrder is the MilestoneOrder input.
type milestoneOrder struct {
	Field     string
	Direction string
}

// milestonesArgs are the arguments of Repository.milestones.
type milestonesArgs struct {
	connectionArgs
	OrderBy *milestoneOrder
	Query   *string
	States  *[]string
}

// maxMilestones bounds the milestones a repository's connection reads to
// filter and order them.
const maxMilestones = 10000

// Milestones are the repository's milestones in the states asked (all by
// default) whose title contains query (any case), ordered as orderBy
// asks (by number when it is absent) and paged.
func (r *repositoryResolver) Milestones(ctx context.Context, args milestonesArgs) (*connection[*milestoneResolver], error) {
	if err := args.checkCounted("milestones"); err != nil {
		return nil, err
	}
	if !mayReadIssues(requestFrom(ctx).principal, r.r) {
		return nil, errIssuesForbidden
	}
	state := stateFilter(args.States)
	if state == "none" {
		return pageOf([]*milestoneResolver{}, 0, 0), nil
	}
	all, err := r.h.Issues.Milestones(ctx, r.r, state, "due_on", "asc", maxMilestones, 0)
	if err != nil {
		return nil, err
	}
	var list []*milestoneResolver
	for _, m := range all {
		if args.Query == nil || containsFold(m.Title, *args.Query) {
			list = append(list, &milestoneResolver{m: m, repo: r})
		}
	}
	order := milestoneOrder{Field: "NUMBER", Direction: "ASC"}
	if args.OrderBy != nil {
		order = *args.OrderBy
	}
	slices.SortStableFunc(list, func(a, b *milestoneResolver) int {
		c := cmp.Or(compareMilestones(a.m, b.m, order.Field), cmp.Compare(a.m.Number, b.m.Number))
		if order.Direction == "DESC" {
			return -c
		}
		return c
	})
	return pageList(list, args.connectionArgs, "milestones")
}

// compareMilestones compares by one MilestoneOrderField; milestones
// without a due date come after those with one.
func compareMilestones(a, b *issues.Milestone, field string) int {
	switch field {
	case "CREATED_AT":
		return a.CreatedAt.Compare(b.CreatedAt)
	case "UPDATED_AT":
		return a.UpdatedAt.Compare(b.UpdatedAt)
	case "DUE_DATE":
		switch {
		case a.DueOn == nil || b.DueOn == nil:
			return cmp.Compare(boolRank(a.DueOn == nil), boolRank(b.DueOn == nil))
		}
		return a.DueOn.Compare(*b.DueOn)
	}
	return 0
}

// boolRank is 1 for true, 0 for false.
func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

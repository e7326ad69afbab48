package graphql

import (
	"cmp"
	"context"
	"errors"
	"net/url"
	"slices"
	"strings"

	gql "github.com/graph-gophers/graphql-go"

	"forgeapi/internal/auth"
	"forgeapi/internal/issues"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// mayReadLabels reports whether credentials that see the repository read
// its labels: a fine-grained or installation token reads a private
// one's with Issues or Pull requests read (REST's rule for the labels
// routes).
func mayReadLabels(p *auth.Principal, repo *repos.Repository) bool {
	if p.FineGrained() && repo.Private {
		return p.Token.Selects(repo.ID, repo.Owner.ID) && p.Token.Grant.Satisfies(auth.Perm("issues:read", "pull_requests:read"))
	}
	return true
}

// labelResolver resolves Label.
type labelResolver struct {
	lb   *issues.Label
	repo *repositoryResolver
}

func (r *labelResolver) ID() gql.ID           { return gql.ID(wire.NodeID("LA", r.lb.ID)) }
func (r *labelResolver) Name() string         { return r.lb.Name }
func (r *labelResolver) Color() string        { return r.lb.Color }
func (r *labelResolver) Description() *string { return optional(r.lb.Description) }

// IsDefault is true for the labels the repository was created with, as
// REST's default shows.
func (r *labelResolver) IsDefault() bool { return r.lb.Default }

// URL is the label's web page (the repository's issues with it).
func (r *labelResolver) URL(ctx context.Context) uri {
	return r.repo.URL(ctx) + uri("/labels/"+url.PathEscape(r.lb.Name))
}

// labelOrder is the LabelOrder input.
type labelOrder struct {
	Field     string
	Direction string
}

// labelsArgs are the arguments of Issue.labels and PullRequest.labels.
type labelsArgs struct {
	connectionArgs
	OrderBy *labelOrder
}

// sortLabels orders labels by creation (the id) or NAME, as orderBy
// asks (creation ascending when it is absent).
func sortLabels(list []*labelResolver, orderBy *labelOrder) {
	order := labelOrder{Field: "CREATED_AT", Direction: "ASC"}
	if orderBy != nil {
		order = *orderBy
	}
	slices.SortStableFunc(list, func(a, b *labelResolver) int {
		c := cmp.Compare(a.lb.ID, b.lb.ID)
		if order.Field == "NAME" {
			c = cmp.Or(cmp.Compare(strings.ToLower(a.lb.Name), strings.ToLower(b.lb.Name)), c)
		}
		if order.Direction == "DESC" {
			return -c
		}
		return c
	})
}

// repositoryLabelsArgs are the arguments of Repository.labels.
type repositoryLabelsArgs struct {
	connectionArgs
	OrderBy *labelOrder
	Query   *string
}

// maxLabels bounds the labels a repository's connection reads to filter
// and order them (a repository's labels are a short list).
const maxLabels = 10000

// Labels are the repository's labels whose name or description contains
// query (any case), ordered and paged as args ask.
func (r *repositoryResolver) Labels(ctx context.Context, args repositoryLabelsArgs) (*connection[*labelResolver], error) {
	if err := args.checkCounted("labels"); err != nil {
		return nil, err
	}
	if !mayReadLabels(requestFrom(ctx).principal, r.r) {
		return nil, errIssuesForbidden
	}
	all, err := r.h.Issues.Labels(ctx, r.r.ID, maxLabels, 0)
	if err != nil {
		return nil, err
	}
	var list []*labelResolver
	for _, lb := range all {
		if args.Query == nil || containsFold(lb.Name, *args.Query) || containsFold(lb.Description, *args.Query) {
			list = append(list, &labelResolver{lb: lb, repo: r})
		}
	}
	sortLabels(list, args.OrderBy)
	return pageList(list, args.connectionArgs, "labels")
}

// containsFold reports whether s contains sub, in any case.
func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}

// nameOnlyArgs are the argument of Repository.label.
type nameOnlyArgs struct{ Name string }

// Label is the repository's label of that name (any case), null when
// none.
func (r *repositoryResolver) Label(ctx context.Context, args nameOnlyArgs) (*labelResolver, error) {
	if !mayReadLabels(requestFrom(ctx).principal, r.r) {
		return nil, errIssuesForbidden
	}
	lb, err := r.h.Issues.Label(ctx, r.r.ID, args.Name)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	return &labelResolver{lb: lb, repo: r}, nil
}

// labelable is what Issue and PullRequest resolve of the Labelable
// interface.
type labelable interface {
	Labels(args labelsArgs) (*connection[*labelResolver], error)
}

// labelableResolver resolves Labelable.
type labelableResolver struct{ labelable }

func (r *labelableResolver) ToIssue() (*issueResolver, bool) {
	i, ok := r.labelable.(*issueResolver)
	return i, ok
}

func (r *labelableResolver) ToPullRequest() (*pullRequestResolver, bool) {
	p, ok := r.labelable.(*pullRequestResolver)
	return p, ok
}

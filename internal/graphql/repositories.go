package graphql

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"forgeapi/internal/accounts"
	"forgeapi/internal/repos"
)

// affiliation names how an account relates to a repository.
const (
	affOwner        = "OWNER"
	affCollaborator = "COLLABORATOR"
	affMember       = "ORGANIZATION_MEMBER"
)

// defaultOwnerAffiliations are ownerAffiliations' default, as the
// schema declares it.
var defaultOwnerAffiliations = []string{affOwner, affCollaborator}

// affiliationsOf reads an affiliation list argument (nil when absent).
func affiliationsOf(list []*string) []string {
	var out []string
	for _, a := range list {
		if a != nil {
			out = append(out, *a)
		}
	}
	return out
}

// affiliationOf is how the account relates to the repository: OWNER,
// ORGANIZATION_MEMBER (of the owning organization), COLLABORATOR
// (granted, directly or through a team), or "".
func (h *Handler) affiliationOf(ctx context.Context, accountID int64, orgs []int64, repo *repos.Repository) (string, error) {
	switch {
	case repo.Owner.ID == accountID:
		return affOwner, nil
	case slices.Contains(orgs, repo.Owner.ID):
		return affMember, nil
	}
	perm, err := repos.GrantedPermission(ctx, h.DB, repo.ID, accountID)
	if err != nil || perm == "" {
		return "", err
	}
	return affCollaborator, nil
}

// ownedOrAffiliated are the repositories the owner relates to as the
// ownerAffiliations ask (default OWNER and COLLABORATOR).
func (h *Handler) ownedOrAffiliated(ctx context.Context, owner *accounts.Account, list []*string) ([]*repos.Repository, error) {
	want := affiliationsOf(list)
	if list == nil {
		want = defaultOwnerAffiliations
	}
	if slices.Equal(want, []string{affOwner}) {
		return repos.ByOwner(ctx, h.DB, owner.ID)
	}
	candidates, err := repos.Affiliated(ctx, h.DB, owner.ID)
	if err != nil {
		return nil, err
	}
	orgs, err := accounts.OrgsOf(ctx, h.DB, owner.ID)
	if err != nil {
		return nil, err
	}
	var out []*repos.Repository
	for _, repo := range candidates {
		aff, err := h.affiliationOf(ctx, owner.ID, orgs, repo)
		if err != nil {
			return nil, err
		}
		if slices.Contains(want, aff) {
			out = append(out, repo)
		}
	}
	return out, nil
}

// filter is the repository filter of args: privacy, visibility, the
// flags (forgeapi's repositories all have issues, none is archived or
// locked) and the caller's affiliations.
func (h *Handler) filter(ctx context.Context, args repositoriesArgs) (func(*repos.Repository) (bool, error), error) {
	var want []string // the caller's affiliations asked; none: any
	if args.Affiliations != nil {
		want = affiliationsOf(*args.Affiliations)
	}
	var viewer int64
	var orgs []int64
	if len(want) > 0 {
		viewer = requestFrom(ctx).principal.UserID()
		var err error
		if orgs, err = accounts.OrgsOf(ctx, h.DB, viewer); err != nil {
			return nil, err
		}
	}
	return func(repo *repos.Repository) (bool, error) {
		vis := strings.ToUpper(repo.Visibility())
		switch {
		case args.Privacy != nil && *args.Privacy != vis,
			args.Visibility != nil && *args.Visibility != vis,
			args.IsFork != nil && *args.IsFork != (repo.ForkOfID != 0),
			args.HasIssuesEnabled != nil && !*args.HasIssuesEnabled,
			args.IsArchived != nil && *args.IsArchived != repo.Archived,
			args.IsLocked != nil && *args.IsLocked:
			return false, nil
		case len(want) == 0:
			return true, nil
		}
		aff, err := h.affiliationOf(ctx, viewer, orgs, repo)
		return slices.Contains(want, aff), err
	}, nil
}

// sortRepositories orders the repositories as orderBy asks (by name
// when it is absent), ties by creation (the id), in the same direction.
func sortRepositories(ctx context.Context, list []*repositoryResolver, orderBy *repositoryOrder) error {
	order := repositoryOrder{Field: "NAME", Direction: "ASC"}
	if orderBy != nil {
		order = *orderBy
	}
	if order.Field == "STARGAZERS" {
		for _, r := range list {
			if _, err := r.statsOf(ctx); err != nil {
				return err
			}
		}
	}
	slices.SortStableFunc(list, func(a, b *repositoryResolver) int {
		c := cmp.Or(compareRepositories(a, b, order.Field), cmp.Compare(a.r.ID, b.r.ID))
		if order.Direction == "DESC" {
			return -c
		}
		return c
	})
	return nil
}

// compareRepositories compares by one RepositoryOrderField.
func compareRepositories(a, b *repositoryResolver, field string) int {
	switch field {
	case "CREATED_AT":
		return a.r.CreatedAt.Compare(b.r.CreatedAt)
	case "UPDATED_AT":
		return a.r.UpdatedAt.Compare(b.r.UpdatedAt)
	case "PUSHED_AT":
		return a.PushedAt().Compare(b.PushedAt().Time.Time)
	case "STARGAZERS":
		return cmp.Compare(a.stats.Stargazers, b.stats.Stargazers)
	}
	return cmp.Compare(strings.ToLower(a.r.Name), strings.ToLower(b.r.Name))
}

package graphql

import (
	"context"

	"forgeapi/internal/access"
	"forgeapi/internal/accounts"
	"forgeapi/internal/repos"
)

// maxSearchResults is how many results a search pages through, as the
// platform's: its count says how many were found, its pages stop at the
// first 1,000.
const maxSearchResults = 1000

// searchWindow pages the first maxSearchResults of total results as
// args ask, remembering where the page starts.
func searchWindow(args searchArgs, start *int) func(total int) (int, int, error) {
	return func(total int) (int, int, error) {
		from, end, err := args.window(min(total, maxSearchResults))
		*start = from
		return from, end, err
	}
}

// searchRepositories runs a search of type REPOSITORY on
// repos.Service.Search, as REST's GET /search/repositories does (its
// qualifiers and sort:, the public repositories and the private ones the
// caller may read): its items are Repository nodes.
func (h *Handler) searchRepositories(ctx context.Context, args searchArgs) (*searchConnection, error) {
	var start int
	found, total, err := h.Repos.Search(ctx, requestFrom(ctx).principal, access.ListedRepoRole,
		repos.Search{Text: args.Query, Window: searchWindow(args, &start)})
	if err != nil {
		return nil, serviceError(err)
	}
	out := make([]*searchItemResolver, 0, len(found))
	for _, repo := range found {
		r, err := h.visibleRepository(ctx, repo)
		if err != nil {
			return nil, err
		}
		out = append(out, &searchItemResolver{repo: r})
	}
	return &searchConnection{connection: pageOf(out, start, min(total, maxSearchResults)), kind: "REPOSITORY", count: total}, nil
}

// searchUsers runs a search of type USER on accounts.Search, as REST's
// GET /search/users does: its items are User and Organization nodes.
func (h *Handler) searchUsers(ctx context.Context, args searchArgs) (*searchConnection, error) {
	var start int
	found, total, err := accounts.Search(ctx, h.DB, accounts.UserSearch{Text: args.Query, Window: searchWindow(args, &start)})
	if err != nil {
		return nil, serviceError(err)
	}
	out := make([]*searchItemResolver, len(found))
	for i, a := range found {
		if a.IsOrg() {
			out[i] = &searchItemResolver{org: &organizationResolver{h.account(a)}}
		} else {
			out[i] = &searchItemResolver{user: &userResolver{h.account(a)}}
		}
	}
	return &searchConnection{connection: pageOf(out, start, min(total, maxSearchResults)), kind: "USER", count: total}, nil
}

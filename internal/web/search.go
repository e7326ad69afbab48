package web

import (
	"net/http"
	"strconv"
	"strings"

	"forgeapi/internal/console"
	"forgeapi/internal/issues"
	"forgeapi/internal/search"
)

// searchPage is a search of issues and pull requests and its results.
type searchPage struct {
	Query   string
	Results []searchResult
	Total   int
	Page    int
	More    bool
}

// searchResult is one issue or pull request found, with its address.
type searchResult struct {
	Issue       *issues.Issue
	Repo, Href  string
	PullRequest bool
}

// search serves /search?q=: the issues and pull requests that the query
// finds among the repositories the visitor may read, with the API's
// search syntax (GET /search/issues: qualifiers such as repo:, is:open,
// author:), thirty a page.
func (h *Handler) search(w http.ResponseWriter, r *http.Request, x console.Visitor) error {
	ctx := r.Context()
	p := searchPage{Query: strings.TrimSpace(r.URL.Query().Get("q")), Page: pageOf(r)}
	if p.Query == "" {
		return h.render(w, r, x, "search", "Search", p)
	}
	s, err := h.Issues.NewSearch(ctx, x.Principal(), p.Query, "", "")
	if err != nil {
		return err
	}
	const per = 30
	s.Limit, s.Offset = per, (p.Page-1)*per
	found, total, err := h.Issues.Search(ctx, s)
	if err != nil {
		return err
	}
	p.Total, p.More = total, p.Page*per < min(total, search.MaxResults)
	for _, is := range found {
		repo, err := h.Issues.RepoOf(ctx, is)
		if err != nil {
			return err
		}
		kind := "/issues/"
		if is.PullRequest {
			kind = "/pull/"
		}
		p.Results = append(p.Results, searchResult{Issue: is, Repo: repo.FullName(), PullRequest: is.PullRequest,
			Href: "/" + repo.FullName() + kind + strconv.FormatInt(is.Number, 10)})
	}
	return h.render(w, r, x, "search", p.Query+" · Search", p)
}

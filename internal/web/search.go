package web

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"forgeapi/internal/access"
	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/console"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/issues"
	"forgeapi/internal/repos"
	"forgeapi/internal/search"
)

// searchPer is how many results a search page shows.
const searchPer = 30

// searchTypes are the kinds of search the page offers (?type=), the
// first the default.
var searchTypes = []searchType{
	{"issues", "Issues and pull requests"},
	{"repositories", "Repositories"},
	{"code", "Code"},
	{"users", "Users"},
}

// searchType is a kind of search and its name on the page.
type searchType struct{ Key, Name string }

// searchPage is a search and its results.
type searchPage struct {
	Query, Type string
	Types       []searchTab
	Results     []searchResult
	Repos       []searchRepo
	Users       []searchUser
	Code        []searchCode
	Total       int
	Page        int
	More        bool
	// Prev and Next are the neighbouring pages' addresses ("" for none).
	Prev, Next string
}

// searchTab links to the same query as another kind of search.
type searchTab struct {
	Key, Name, Href string
	Current         bool
}

// searchResult is one issue or pull request found, with its address.
type searchResult struct {
	Issue       *issues.Issue
	Repo, Href  string
	PullRequest bool
}

// searchRepo is a repository found.
type searchRepo struct{ FullName, Href, Description, Visibility string }

// searchUser is a user or organization found.
type searchUser struct{ Login, Name, Href, Kind string }

// searchCode is a file found.
type searchCode struct{ Repo, Path, Href string }

// search serves /search?q=&type=: what the query finds with the API's
// search syntax among what the visitor may see, thirty a page: issues
// and pull requests (the default; GET /search/issues: repo:, is:open,
// author:, ...), repositories (GET /search/repositories), code (GET
// /search/code, the default branches) or users and organizations (GET
// /search/users), through the same services. A query the API refuses
// is the error page with the API's status and message.
func (h *Handler) search(w http.ResponseWriter, r *http.Request, x console.Visitor) error {
	q := r.URL.Query()
	p := searchPage{Query: strings.TrimSpace(q.Get("q")), Type: searchTypes[0].Key, Page: pageOf(r)}
	for _, t := range searchTypes {
		if t.Key == q.Get("type") {
			p.Type = t.Key
		}
	}
	for _, t := range searchTypes {
		p.Types = append(p.Types, searchTab{Key: t.Key, Name: t.Name, Href: searchHref(p.Query, t.Key, 1), Current: t.Key == p.Type})
	}
	if p.Query == "" {
		return h.render(w, r, x, "search", "Search", p)
	}
	var err error
	switch p.Type {
	case "repositories":
		err = h.searchRepos(r.Context(), x, &p)
	case "code":
		err = h.searchCode(r.Context(), x, &p)
	case "users":
		err = h.searchUsers(r.Context(), &p)
	default:
		err = h.searchIssues(r.Context(), x, &p)
	}
	if err != nil {
		return err
	}
	p.More = p.Page*searchPer < min(p.Total, search.MaxResults)
	if p.Page > 1 {
		p.Prev = searchHref(p.Query, p.Type, p.Page-1)
	}
	if p.More {
		p.Next = searchHref(p.Query, p.Type, p.Page+1)
	}
	return h.render(w, r, x, "search", p.Query+" · Search", p)
}

// searchHref is the address of a search's page.
func searchHref(query, typ string, page int) string {
	v := url.Values{"q": {query}}
	if typ != searchTypes[0].Key {
		v.Set("type", typ)
	}
	if page > 1 {
		v.Set("page", strconv.Itoa(page))
	}
	return "/search?" + v.Encode()
}

func (h *Handler) searchIssues(ctx context.Context, x console.Visitor, p *searchPage) error {
	s, err := h.Issues.NewSearch(ctx, x.Principal(), p.Query, "", "")
	if err != nil {
		return err
	}
	s.Limit, s.Offset = searchPer, (p.Page-1)*searchPer
	found, total, err := h.Issues.Search(ctx, s)
	if err != nil {
		return err
	}
	p.Total = total
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
	return nil
}

func (h *Handler) searchRepos(ctx context.Context, x console.Visitor, p *searchPage) error {
	found, total, err := h.Repos.Search(ctx, x.Principal(), access.RepoRole, repos.Search{Text: p.Query,
		Limit: searchPer, Offset: (p.Page - 1) * searchPer})
	if err != nil {
		return err
	}
	p.Total = total
	for _, repo := range found {
		p.Repos = append(p.Repos, searchRepo{FullName: repo.FullName(), Href: "/" + repo.FullName(),
			Description: repo.Description, Visibility: repo.Visibility()})
	}
	return nil
}

func (h *Handler) searchUsers(ctx context.Context, p *searchPage) error {
	found, total, err := accounts.Search(ctx, h.DB, accounts.UserSearch{Text: p.Query, Limit: searchPer, Offset: (p.Page - 1) * searchPer})
	if err != nil {
		return err
	}
	p.Total = total
	for _, a := range found {
		kind := "User"
		if a.IsOrg() {
			kind = "Organization"
		}
		p.Users = append(p.Users, searchUser{Login: a.Login, Name: a.Name, Href: "/" + a.Login, Kind: kind})
	}
	return nil
}

func (h *Handler) searchCode(ctx context.Context, x console.Visitor, p *searchPage) error {
	if h.Code == nil {
		return apierr.NotFound()
	}
	found, total, err := h.Code.SearchCode(ctx, x.Principal(), p.Query, httpapi.Page{Page: p.Page, PerPage: searchPer})
	if err != nil {
		return err
	}
	p.Total = total
	names := map[int64]string{}
	for _, f := range found {
		name, ok := names[f.RepoID]
		if !ok {
			repo, err := repos.ByID(ctx, h.DB, f.RepoID)
			if err != nil {
				return err
			}
			name = repo.FullName()
			names[f.RepoID] = name
		}
		p.Code = append(p.Code, searchCode{Repo: name, Path: f.Path, Href: "/" + name + "/blob/" + f.Head + "/" + escapePath(f.Path)})
	}
	return nil
}

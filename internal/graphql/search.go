package graphql

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"forgeapi/internal/issues"
	"forgeapi/internal/pulls"
)

// searchArgs are the arguments of Query.search.
type searchArgs struct {
	connectionArgs
	Query string
	Type  string
}

// Search finds repositories (type REPOSITORY: searchRepositories),
// users and organizations (USER: searchUsers), or issues and pull
// requests (ISSUE). A search of one repository's pull requests
// (pullSearch: what gh pr status and gh pr list --search ask,
// review-requested: included) runs on pulls.Find; any other issue search
// runs on issues.Service.Search, across every repository the caller may
// read, as REST's GET /search/issues does. Another type (DISCUSSION) is
// INVALID_ARGUMENTS, never a wrong answer; a repository the caller may
// not read has no results, as on the platform.
func (q *root) Search(ctx context.Context, args searchArgs) (*searchConnection, error) {
	if args.Type != "ISSUE" && args.Type != "REPOSITORY" && args.Type != "USER" {
		return nil, invalid(fmt.Sprintf("forgeapi searches issues, repositories and users, not %s.", args.Type))
	}
	if err := args.checkCounted("search"); err != nil { // counts asked alone need no bounds
		return nil, err
	}
	switch args.Type {
	case "REPOSITORY":
		return q.handler(ctx).searchRepositories(ctx, args)
	case "USER":
		return q.handler(ctx).searchUsers(ctx, args)
	}
	viewer := ""
	if a := requestFrom(ctx).principal.Account; a != nil {
		viewer = a.Login
	}
	s, err := parseSearch(args.Query, viewer)
	if err != nil {
		return q.handler(ctx).searchIssues(ctx, args)
	}
	repo, err := q.handler(ctx).repository(ctx, s.owner, s.name, true)
	if _, hidden := errors.AsType[*fieldError](err); hidden || err == nil && !mayReadPulls(requestFrom(ctx).principal, repo.r) {
		return &searchConnection{connection: pageOf([]*searchItemResolver{}, 0, 0), kind: "ISSUE"}, nil
	} else if err != nil {
		return nil, err
	}
	list, offset, total, err := q.handler(ctx).Pulls.Find(ctx, repo.r, s.query, args.window)
	if err != nil {
		return nil, err
	}
	out := make([]*searchItemResolver, len(list))
	for i, p := range q.handler(ctx).pullPage(repo, list) {
		out[i] = &searchItemResolver{pull: p}
	}
	return &searchConnection{connection: pageOf(out, offset, total), kind: "ISSUE", count: total}, nil
}

// searchIssues runs a search on issues.Service.Search: its items are
// Issue and PullRequest nodes.
func (h *Handler) searchIssues(ctx context.Context, args searchArgs) (*searchConnection, error) {
	s, err := h.Issues.NewSearch(ctx, requestFrom(ctx).principal, args.Query, "", "")
	if err != nil {
		return nil, serviceError(err)
	}
	var start int
	s.Window = func(total int) (int, int, error) {
		from, end, err := args.window(total)
		start = from
		return from, end, err
	}
	list, total, err := h.Issues.Search(ctx, s)
	if err != nil {
		return nil, serviceError(err)
	}
	out := make([]*searchItemResolver, 0, len(list))
	for _, is := range list {
		item, err := h.searchItem(ctx, is)
		if err != nil {
			return nil, err
		}
		out = append(out, item)
	}
	return &searchConnection{connection: pageOf(out, start, total), kind: "ISSUE", count: total}, nil
}

// searchItem is an issue found, as an Issue or a PullRequest.
func (h *Handler) searchItem(ctx context.Context, is *issues.Issue) (*searchItemResolver, error) {
	repo, err := h.Issues.RepoOf(ctx, is)
	if err != nil {
		return nil, err
	}
	r, err := h.visibleRepository(ctx, repo)
	if err != nil {
		return nil, err
	}
	if !is.PullRequest {
		return &searchItemResolver{issue: &issueResolver{h: h, is: is, repo: r}}, nil
	}
	n, err := h.pullOfIssue(ctx, repo, is.Number)
	if err != nil {
		return nil, err
	}
	return &searchItemResolver{pull: n.node.(*pullRequestResolver)}, nil
}

// pullSearch is a search query read: the repository and the selection.
type pullSearch struct {
	owner, name string
	query       pulls.Query
}

// parseSearch reads a search query of pull requests: repo:OWNER/NAME
// (required), is:pr or type:pr (or a qualifier only pull requests have),
// is: or state: open, closed or merged, is:draft, draft:, author:,
// assignee:, review-requested: (@me is the viewer), label:, head:,
// base:, sort: created, updated or comments with -asc or -desc (newest
// first by default), and words the title or body holds.
func parseSearch(text, viewer string) (pullSearch, error) {
	s := pullSearch{query: pulls.Query{Desc: true}}
	isPull := false
	var words []string
	for _, tok := range searchTokens(text) {
		key, value, ok := strings.Cut(tok, ":")
		if !ok || value == "" {
			words = append(words, tok)
			continue
		}
		if value == "@me" {
			value = viewer
		}
		switch key = strings.ToLower(key); {
		case key == "repo":
			owner, name, ok := strings.Cut(value, "/")
			if !ok || s.owner != "" {
				return s, invalid("forgeapi's search needs one repo:OWNER/NAME qualifier.")
			}
			s.owner, s.name = owner, name
		case (key == "is" || key == "type") && (value == "pr" || value == "pull-request"):
			isPull = true
		case (key == "is" || key == "state") && (value == "open" || value == "closed"):
			s.query.States = append(s.query.States, map[string][]string{"open": {pulls.QueryOpen},
				"closed": {pulls.QueryClosed, pulls.QueryMerged}}[value]...)
		case key == "is" && value == "merged":
			s.query.States, isPull = append(s.query.States, pulls.QueryMerged), true
		case key == "is" && value == "draft", key == "draft":
			draft := value != "false"
			s.query.Draft, isPull = &draft, true
		case key == "author":
			s.query.Author = value
		case key == "assignee":
			s.query.Assignee = value
		case key == "review-requested":
			s.query.ReviewRequested, isPull = value, true
		case key == "label":
			s.query.Labels = append(s.query.Labels, value)
		case key == "head":
			s.query.HeadRef, isPull = value, true
		case key == "base":
			s.query.BaseRef, isPull = value, true
		case key == "sort":
			field, dir, _ := strings.Cut(value, "-")
			s.query.Order, s.query.Desc = field, dir != "asc"
		default:
			return s, invalid(fmt.Sprintf("forgeapi's search does not know the qualifier %s.", tok))
		}
	}
	switch {
	case s.owner == "":
		return s, invalid("forgeapi's search needs one repo:OWNER/NAME qualifier.")
	case !isPull:
		return s, invalid("forgeapi searches pull requests only: add is:pr.")
	}
	s.query.Text = strings.Join(words, " ")
	return s, nil
}

// searchTokens splits a search query at spaces outside double quotes,
// which it drops (label:"needs review").
func searchTokens(text string) []string {
	var out []string
	var cur strings.Builder
	quoted := false
	for _, r := range text {
		switch {
		case r == '"':
			quoted = !quoted
		case r == ' ' && !quoted:
			if cur.Len() > 0 {
				out = append(out, cur.String())
				cur.Reset()
			}
		default:
			cur.WriteRune(r)
		}
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}

// searchConnection resolves SearchResultItemConnection: a page of the
// results of one type (kind), count of them found in all.
type searchConnection struct {
	*connection[*searchItemResolver]
	kind  string
	count int
}

// IssueCount counts the issues and pull requests found (0 when another
// type was searched).
func (c *searchConnection) IssueCount() int32 { return c.countOf("ISSUE") }

// RepositoryCount counts the repositories found (0 when another type
// was searched).
func (c *searchConnection) RepositoryCount() int32 { return c.countOf("REPOSITORY") }

// UserCount counts the users and organizations found (0 when another
// type was searched).
func (c *searchConnection) UserCount() int32 { return c.countOf("USER") }

func (c *searchConnection) countOf(kind string) int32 {
	if c.kind != kind {
		return 0
	}
	return int32(c.count)
}

// searchItemResolver resolves the SearchResultItem union: a pull
// request, an issue, a repository, a user or an organization.
type searchItemResolver struct {
	pull  *pullRequestResolver
	issue *issueResolver
	repo  *repositoryResolver
	user  *userResolver
	org   *organizationResolver
}

func (r *searchItemResolver) ToPullRequest() (*pullRequestResolver, bool) {
	return r.pull, r.pull != nil
}
func (r *searchItemResolver) ToRepository() (*repositoryResolver, bool) { return r.repo, r.repo != nil }
func (r *searchItemResolver) ToUser() (*userResolver, bool)             { return r.user, r.user != nil }
func (r *searchItemResolver) ToOrganization() (*organizationResolver, bool) {
	return r.org, r.org != nil
}
func (r *searchItemResolver) ToIssue() (*issueResolver, bool) { return r.issue, r.issue != nil }

// BaseRef is the base branch, null when it no longer exists.
func (r *pullRequestResolver) BaseRef() (*refResolver, error) {
	return r.repo.refNamed("refs/heads/" + r.p.BaseRef)
}

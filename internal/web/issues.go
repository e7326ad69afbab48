package web

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"forgeapi/internal/apierr"
	"forgeapi/internal/issues"
	"forgeapi/internal/markdown"
	mdapi "forgeapi/internal/markdown/api"
	"forgeapi/internal/repos"
)

// perPage is how many issues, pull requests or releases a list shows.
const perPage = 50

// maxComments is how many comments an issue's page shows.
const maxComments = 500

// listPage lists a repository's issues or pull requests.
type listPage struct {
	RepoHeader
	State  string
	Issues []*issues.Issue
	Kind   string // "issues" or "pull"
	Page   int
	More   bool
}

// issuePages serves /{owner}/{repo}/issues and /issues/{number}.
func (h *Handler) issuePages(w http.ResponseWriter, r *http.Request, v *repoVisit, rest string) error {
	if rest == "" {
		return h.issueList(w, r, v)
	}
	n, err := strconv.ParseInt(rest, 10, 64)
	if err != nil || n <= 0 {
		return apierr.NotFound()
	}
	return h.issue(w, r, v, n)
}

// listState is the list's ?state= (open by default).
func listState(r *http.Request) string {
	switch s := r.URL.Query().Get("state"); s {
	case "closed", "all":
		return s
	}
	return "open"
}

func pageOf(r *http.Request) int {
	n, _ := strconv.Atoi(r.URL.Query().Get("page"))
	return max(n, 1)
}

// issueList serves /{owner}/{repo}/issues: the issues, newest first.
func (h *Handler) issueList(w http.ResponseWriter, r *http.Request, v *repoVisit) error {
	p := listPage{RepoHeader: header(v, "issues"), State: listState(r), Kind: "issues", Page: pageOf(r)}
	list, more, err := h.Issues.List(r.Context(), v.repo, issues.Filter{State: p.State, IssuesOnly: true, Sort: "created", Desc: true,
		Limit: perPage, Offset: (p.Page - 1) * perPage})
	if err != nil {
		return err
	}
	p.Issues, p.More = list, more
	return h.render(w, r, v.x, "list", "Issues · "+v.repo.FullName(), p)
}

// comment is a rendered comment of an issue's or pull request's page.
type comment struct {
	Anchor, Login, Association string
	At                         string
	Body                       any // template.HTML
}

// issuePage is an issue with its comments.
type issuePage struct {
	RepoHeader
	Issue    *issues.Issue
	Body     any
	Comments []comment
}

// issue serves /{owner}/{repo}/issues/{number}; a pull request's number
// is its page.
func (h *Handler) issue(w http.ResponseWriter, r *http.Request, v *repoVisit, n int64) error {
	ctx := r.Context()
	is, err := h.Issues.Get(ctx, v.repo, n)
	if err != nil {
		return hidden(v.x, err)
	}
	if is.PullRequest {
		http.Redirect(w, r, header(v, "").Path+"/pull/"+strconv.FormatInt(n, 10), http.StatusFound)
		return nil
	}
	p := issuePage{RepoHeader: header(v, "issues"), Issue: is}
	if p.Body, err = h.renderGFM(ctx, v.repo, is.Body); err != nil {
		return err
	}
	if p.Comments, err = h.issueComments(ctx, v.repo, n); err != nil {
		return err
	}
	return h.render(w, r, v.x, "issue", is.Title+" · Issue #"+strconv.FormatInt(n, 10)+" · "+v.repo.FullName(), p)
}

// issueComments renders the comments of an issue or pull request.
func (h *Handler) issueComments(ctx context.Context, repo *repos.Repository, n int64) ([]comment, error) {
	list, err := h.Issues.Comments(ctx, repo, n, maxComments, 0)
	if err != nil {
		return nil, err
	}
	out := make([]comment, 0, len(list))
	for _, c := range list {
		body, err := h.renderGFM(ctx, repo, c.Body)
		if err != nil {
			return nil, err
		}
		out = append(out, comment{Anchor: "issuecomment-" + strconv.FormatInt(c.ID, 10), Login: login(c.User),
			Association: c.Association, At: c.CreatedAt.UTC().Format("Jan 2, 2006 15:04 UTC"), Body: body})
	}
	return out, nil
}

// renderGFM renders a comment's Markdown as the API's POST /markdown in
// gfm mode does: @mentions of accounts and #123 of the repository's
// issues linked.
func (h *Handler) renderGFM(ctx context.Context, repo *repos.Repository, text string) (any, error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	out, err := markdown.Render([]byte(text), markdown.Options{GFM: true, Resolve: (&mdapi.Handler{DB: h.DB}).Resolver(ctx, repo)})
	if err != nil {
		return nil, err
	}
	return trustedHTML(out), nil
}

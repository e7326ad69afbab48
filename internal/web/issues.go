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
	Kind   string // "issues", "pull" or "milestone"
	Page   int
	More   bool
	// Milestone is the milestone page's (its issues and pull requests).
	Milestone *issues.Milestone
}

// issuePages serves /{owner}/{repo}/issues, /issues/new and
// /issues/{number}.
func (h *Handler) issuePages(w http.ResponseWriter, r *http.Request, v *repoVisit, rest string) error {
	switch rest {
	case "":
		return h.issueList(w, r, v)
	case "new":
		return h.newIssue(w, r, v)
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

// maxPage bounds ?page= (deeper pages are the API's to page through).
const maxPage = 1000

// pageOf is the list's ?page=, from 1 (the default) to maxPage.
func pageOf(r *http.Request) int {
	n, _ := strconv.Atoi(r.URL.Query().Get("page"))
	return min(max(n, 1), maxPage)
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
	Where                      string // a commit comment's file and line, "" for none
	Body                       any    // template.HTML
}

// issuePage is an issue with its comments.
type issuePage struct {
	RepoHeader
	Issue    *issues.Issue
	Body     any
	Comments []timelineEntry
	Edit     *issueEdit // nil when the visitor may not edit it
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
	if p.Edit, err = h.editForm(ctx, v, is); err != nil {
		return err
	}
	return h.render(w, r, v.x, "issue", is.Title+" · Issue #"+strconv.FormatInt(n, 10)+" · "+v.repo.FullName(), p)
}

// timelineEntry is one entry of an issue's or pull request's timeline: a
// comment, or an event told in a line.
type timelineEntry struct {
	Comment *comment
	Event   *eventLine
}

// eventLine is an event of the timeline: who did what, when.
type eventLine struct {
	Anchor, Actor, What, At string
}

// issueComments renders the timeline of an issue or pull request: its
// comments and its events (labels, assignees, milestones, renames,
// state and lock changes), oldest first.
func (h *Handler) issueComments(ctx context.Context, repo *repos.Repository, n int64) ([]timelineEntry, error) {
	items, err := h.Issues.Timeline(ctx, repo, n, maxComments, 0)
	if err != nil {
		return nil, err
	}
	out := make([]timelineEntry, 0, len(items))
	for _, it := range items {
		if it.Event != nil {
			out = append(out, timelineEntry{Event: toEventLine(it.Event)})
			continue
		}
		c := it.Comment
		body, err := h.renderGFM(ctx, repo, c.Body)
		if err != nil {
			return nil, err
		}
		out = append(out, timelineEntry{Comment: &comment{Anchor: "issuecomment-" + strconv.FormatInt(c.ID, 10), Login: login(c.User),
			Association: c.Association, At: c.CreatedAt.UTC().Format("Jan 2, 2006 15:04 UTC"), Body: body}})
	}
	return out, nil
}

// toEventLine tells an event in words.
func toEventLine(e *issues.Event) *eventLine {
	what := strings.ReplaceAll(e.Event, "_", " ")
	switch e.Event {
	case "labeled", "unlabeled":
		what += " " + e.LabelName
	case "assigned", "unassigned":
		what += " " + login(e.Assignee)
	case "milestoned", "demilestoned":
		what += " " + e.MilestoneTitle
	case "renamed":
		what = "changed the title from “" + e.RenameFrom + "” to “" + e.RenameTo + "”"
	case "closed", "merged", "referenced":
		if e.CommitID != "" {
			what += " in " + shortSHA(e.CommitID)
		}
	}
	return &eventLine{Anchor: "event-" + strconv.FormatInt(e.ID, 10), Actor: login(e.Actor), What: what,
		At: e.CreatedAt.UTC().Format("Jan 2, 2006 15:04 UTC")}
}

// renderGFM renders a comment's Markdown as the API's POST /markdown in
// gfm mode does: single line breaks kept, @mentions of accounts and #123
// of the repository's issues linked.
func (h *Handler) renderGFM(ctx context.Context, repo *repos.Repository, text string) (any, error) {
	return h.renderLinked(ctx, repo, text, true)
}

// renderLinked renders Markdown with the repository as the context of its
// @mentions and #123 references, which are linked: as a comment (gfm) or
// as a file, whose single line breaks join its lines.
func (h *Handler) renderLinked(ctx context.Context, repo *repos.Repository, text string, gfm bool) (any, error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	out, err := markdown.Render([]byte(text), markdown.Options{GFM: gfm, Resolve: (&mdapi.Handler{DB: h.DB}).Resolver(ctx, repo)})
	if err != nil {
		return nil, err
	}
	return trustedHTML(out), nil
}

// milestone serves /{owner}/{repo}/milestone/{number}: the milestone and
// its issues and pull requests.
func (h *Handler) milestone(w http.ResponseWriter, r *http.Request, v *repoVisit, rest string) error {
	n, err := strconv.ParseInt(rest, 10, 64)
	if err != nil || n <= 0 {
		return apierr.NotFound()
	}
	ms, err := h.Issues.Milestone(r.Context(), v.repo, n)
	if err != nil {
		return hidden(v.x, err)
	}
	p := listPage{RepoHeader: header(v, "issues"), State: listState(r), Kind: "milestone", Page: pageOf(r), Milestone: ms}
	list, more, err := h.Issues.List(r.Context(), v.repo, issues.Filter{State: p.State, Milestone: rest, Sort: "created", Desc: true,
		Limit: perPage, Offset: (p.Page - 1) * perPage})
	if err != nil {
		return err
	}
	p.Issues, p.More = list, more
	return h.render(w, r, v.x, "list", ms.Title+" · Milestone · "+v.repo.FullName(), p)
}

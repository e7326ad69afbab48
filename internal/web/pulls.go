package web

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/pulls"
	"forgeapi/internal/store"
)

// pullList serves /{owner}/{repo}/pulls: the pull requests, newest first.
func (h *Handler) pullList(w http.ResponseWriter, r *http.Request, v *repoVisit, rest string) error {
	if rest != "" {
		return apierr.NotFound()
	}
	p := listPage{RepoHeader: header(v, "pulls"), State: listState(r), Kind: "pull", Page: pageOf(r)}
	list, more, err := h.Pulls.List(r.Context(), v.repo, pulls.Filter{State: p.State, Sort: "created", Desc: true,
		Page: httpapi.Page{Page: p.Page, PerPage: perPage}})
	if err != nil {
		return err
	}
	for _, pr := range list {
		p.Issues = append(p.Issues, pr.Issue)
	}
	p.More = more
	return h.render(w, r, v.x, "list", "Pull requests · "+v.repo.FullName(), p)
}

// pullPage is a pull request: its conversation, commits or files.
type pullPage struct {
	RepoHeader
	Pull      *pulls.PullRequest
	Tab       string // conversation, commits or files
	Base      string // the pull request's web path
	Body      any
	Comments  []timelineEntry
	Reviews   []review
	Commits   []gitread.Commit
	Files     []diffFile
	DiffHref  string
	PatchHref string
	CanMerge  bool // the visitor may push, and the pull request is open
}

// review is a submitted review as the conversation shows it, with its
// comments on lines of the diff.
type review struct {
	Anchor, Login, State string
	Body                 any
	Comments             []lineComment
}

// lineComment is a review comment on a line of the diff.
type lineComment struct {
	Anchor, Login, Path, Line, Hunk string
	Body                            any
}

// pullPages serves /{owner}/{repo}/pull/{number} and its /commits and
// /files.
func (h *Handler) pullPages(w http.ResponseWriter, r *http.Request, v *repoVisit, rest string) error {
	num, tab, _ := strings.Cut(rest, "/")
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 {
		return apierr.NotFound()
	}
	ctx := r.Context()
	pr, err := h.Pulls.Get(ctx, v.repo, n)
	if errors.Is(err, store.ErrNotFound) && tab == "" {
		if is, ierr := h.Issues.Get(ctx, v.repo, n); ierr == nil && !is.PullRequest { // an issue's number: its page
			http.Redirect(w, r, header(v, "").Path+"/issues/"+num, http.StatusFound)
			return nil
		}
	}
	if err != nil {
		return hidden(v.x, err)
	}
	hd := header(v, "pulls")
	base := hd.Path + "/pull/" + num
	p := pullPage{RepoHeader: hd, Pull: pr, Base: base, DiffHref: base + ".diff", PatchHref: base + ".patch",
		CanMerge: v.x.Login() != "" && v.role >= auth.RoleWrite && pr.Open() && pr.MergedAt == nil}
	title := pr.Issue.Title + " · Pull Request #" + num + " · " + v.repo.FullName()
	switch tab {
	case "":
		p.Tab = "conversation"
		if p.Body, err = h.renderGFM(ctx, v.repo, pr.Issue.Body); err != nil {
			return err
		}
		if p.Comments, err = h.issueComments(ctx, v.repo, n); err != nil {
			return err
		}
		if p.Reviews, err = h.reviews(r, v, pr); err != nil {
			return err
		}
	case "commits":
		p.Tab = "commits"
		if p.Commits, err = h.Pulls.Commits(ctx, pr); err != nil {
			return gitError(err)
		}
	case "files":
		p.Tab = "files"
		diffs, err := h.Pulls.Files(ctx, pr)
		if err != nil {
			return gitError(err)
		}
		p.Files = diffFiles(diffs)
		if err := h.fillLines(r, v, pr, p.Files, base+"/files"); err != nil {
			return err
		}
	default:
		return apierr.NotFound()
	}
	return h.render(w, r, v.x, "pull", title, p)
}

// reviews renders the submitted reviews (a pending one is its author's
// alone, and the page shows none).
func (h *Handler) reviews(r *http.Request, v *repoVisit, pr *pulls.PullRequest) ([]review, error) {
	list, err := h.Pulls.Reviews(r.Context(), pr, v.x.Principal().UserID())
	if err != nil {
		return nil, err
	}
	comments, err := h.lineComments(r, v, pr)
	if err != nil {
		return nil, err
	}
	out := make([]review, 0, len(list))
	for _, rv := range list {
		if rv.State == pulls.ReviewPending {
			continue
		}
		body, err := h.renderGFM(r.Context(), v.repo, rv.Body)
		if err != nil {
			return nil, err
		}
		out = append(out, review{Anchor: "pullrequestreview-" + strconv.FormatInt(rv.ID, 10), Login: login(rv.User),
			State: strings.ReplaceAll(strings.ToLower(rv.State), "_", " "), Body: body, Comments: comments[rv.ID]})
	}
	return out, nil
}

// lineComments renders the pull request's review comments by review.
func (h *Handler) lineComments(r *http.Request, v *repoVisit, pr *pulls.PullRequest) (map[int64][]lineComment, error) {
	list, err := h.Pulls.Comments(r.Context(), pr)
	if err != nil {
		return nil, err
	}
	out := map[int64][]lineComment{}
	for _, c := range list {
		body, err := h.renderGFM(r.Context(), v.repo, c.Body)
		if err != nil {
			return nil, err
		}
		lc := lineComment{Anchor: "discussion_r" + strconv.FormatInt(c.ID, 10), Login: login(c.User), Path: c.Path,
			Hunk: c.DiffHunk, Body: body}
		if c.Line != nil {
			lc.Line = strconv.Itoa(*c.Line)
		}
		out[c.ReviewID] = append(out[c.ReviewID], lc)
	}
	return out, nil
}

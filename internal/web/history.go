package web

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"forgeapi/internal/apierr"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/httpapi"
)

// Limits of the history pages.
const (
	commitsPerPage = 50
	maxDiffFiles   = 300 // as the API's commit and comparison
	maxCompare     = 250
)

// commitsPage lists the history of a ref.
type commitsPage struct {
	RepoHeader
	Ref     string
	Commits []gitread.Commit
	Page    int
	More    bool
}

// commits serves /{owner}/{repo}/commits/{ref}: its history, newest
// first, fifty a page (?page=).
func (h *Handler) commits(w http.ResponseWriter, r *http.Request, v *repoVisit, ref string) error {
	ref = strings.Trim(ref, "/")
	if ref == "" {
		ref = v.repo.DefaultBranch
	}
	page := pageOf(r)
	g, err := h.openGit(v)
	if err != nil {
		return err
	}
	defer g.Close()
	list, more, err := g.Log(r.Context(), gitread.LogQuery{Head: ref, Skip: (page - 1) * commitsPerPage, Limit: commitsPerPage})
	if err != nil {
		return gitError(err)
	}
	p := commitsPage{RepoHeader: header(v, "code"), Ref: ref, Commits: list, Page: page, More: more}
	return h.render(w, r, v.x, "commits", "Commits · "+ref+" · "+v.repo.FullName(), p)
}

// changePage is a commit or a comparison with its diff.
type changePage struct {
	RepoHeader
	Commit        *gitread.Commit // the commit page's
	Comments      []comment       // the commit page's commit comments
	Base, Head    string          // the comparison's
	Commits       []gitread.Commit
	Files         []diffFile
	TotalFiles    int
	DiffHref      string
	PatchHref     string
	Additions     int
	Deletions     int
	NothingToShow bool
}

// commit serves /{owner}/{repo}/commit/{sha}: its message and its diff
// against its first parent.
func (h *Handler) commit(w http.ResponseWriter, r *http.Request, v *repoVisit, sha string) error {
	if sha == "" || strings.Contains(sha, "/") {
		return apierr.NotFound()
	}
	g, err := h.openGit(v)
	if err != nil {
		return err
	}
	defer g.Close()
	c, err := g.CommitMeta(sha)
	if err != nil {
		return gitError(err)
	}
	parent := ""
	if len(c.ParentSHAs) > 0 {
		parent = c.ParentSHAs[0]
	}
	diffs, total, err := g.Diff(r.Context(), parent, c.SHA, maxDiffFiles)
	if err != nil {
		return gitError(err)
	}
	hd := header(v, "code")
	p := changePage{RepoHeader: hd, Commit: &c, TotalFiles: total,
		DiffHref: hd.Path + "/commit/" + c.SHA + ".diff", PatchHref: hd.Path + "/commit/" + c.SHA + ".patch"}
	p.addFiles(diffs)
	if p.Comments, err = h.commitComments(r, v, c.SHA); err != nil {
		return err
	}
	title := firstLine(c.Message) + " · " + v.repo.FullName() + "@" + shortSHA(c.SHA)
	return h.render(w, r, v.x, "change", title, p)
}

// compare serves /{owner}/{repo}/compare/{base}...{head}: the commits of
// head since their merge base and the diff.
func (h *Handler) compare(w http.ResponseWriter, r *http.Request, v *repoVisit, basehead string) error {
	baseRev, headRev, ok := gitread.SplitBasehead(basehead)
	if !ok {
		return apierr.NotFound()
	}
	g, err := h.openGit(v)
	if err != nil {
		return err
	}
	defer g.Close()
	ctx := r.Context()
	baseSHA, err1 := g.Resolve(baseRev)
	headSHA, err2 := g.Resolve(headRev)
	if err := errors.Join(err1, err2); err != nil {
		return gitError(err)
	}
	mergeBase, err := g.MergeBase(ctx, baseSHA, headSHA)
	if errors.Is(err, gitread.ErrNoMergeBase) {
		return apierr.New(http.StatusNotFound, "%s and %s have no history in common.", baseRev, headRev)
	}
	if err != nil {
		return err
	}
	list, err := g.CommitsBetween(ctx, mergeBase, headSHA, maxCompare)
	if err != nil {
		return err
	}
	diffs, total, err := g.Diff(ctx, mergeBase, headSHA, maxDiffFiles)
	if err != nil {
		return err
	}
	hd := header(v, "code")
	esc := escapePath(basehead)
	p := changePage{RepoHeader: hd, Base: baseRev, Head: headRev, Commits: list.Commits, TotalFiles: total,
		DiffHref: hd.Path + "/compare/" + esc + ".diff", PatchHref: hd.Path + "/compare/" + esc + ".patch",
		NothingToShow: list.Total == 0}
	p.addFiles(diffs)
	return h.render(w, r, v.x, "change", "Comparing "+baseRev+"..."+headRev+" · "+v.repo.FullName(), p)
}

func (p *changePage) addFiles(diffs []gitread.FileDiff) {
	p.Files = diffFiles(diffs)
	for _, d := range diffs {
		p.Additions += d.Additions
		p.Deletions += d.Deletions
	}
}

// firstLine is a commit message's subject.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// maxCommitComments is how many comments a commit's page shows.
const maxCommitComments = 100

// commitComments renders the comments on a commit (on the whole commit
// or on a line of its diff), oldest first.
func (h *Handler) commitComments(r *http.Request, v *repoVisit, sha string) ([]comment, error) {
	list, _, err := h.CommitComments.List(r.Context(), v.repo, sha, httpapi.Page{Page: 1, PerPage: maxCommitComments})
	if err != nil {
		return nil, err
	}
	out := make([]comment, 0, len(list))
	for _, c := range list {
		body, err := h.renderGFM(r.Context(), v.repo, c.Body)
		if err != nil {
			return nil, err
		}
		where := ""
		if c.Path != "" {
			where = c.Path
			if c.Line > 0 {
				where += " line " + strconv.Itoa(c.Line)
			}
		}
		out = append(out, comment{Anchor: "commitcomment-" + strconv.FormatInt(c.ID, 10), Login: login(c.User),
			Association: c.Association, At: c.CreatedAt.UTC().Format("Jan 2, 2006 15:04 UTC"), Where: where, Body: body})
	}
	return out, nil
}

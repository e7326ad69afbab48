package web

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"forgeapi/internal/apierr"
	"forgeapi/internal/git/gitcmd"
	"forgeapi/internal/git/gitdiff"
	"forgeapi/internal/git/gitread"
)

// changeFormat splits "NAME.diff" or "NAME.patch" into NAME and its
// format; ok is false for anything else.
func changeFormat(name string) (string, gitdiff.Format, bool) {
	for _, f := range []gitdiff.Format{gitdiff.Diff, gitdiff.Patch} {
		if n, found := strings.CutSuffix(name, "."+string(f)); found && n != "" {
			return n, f, true
		}
	}
	return "", "", false
}

// change serves the diff or patch of a pull request, a commit or a
// comparison (/{owner}/{repo}/pull/{number}.diff, commit/{sha}.patch,
// compare/{basehead}.diff) to a browser with a session, as text
// (gitdiff.Serve, the API's diff and patch media types and limits). The
// same addresses without a session are the API's (its credentials).
func (h *Handler) change(w http.ResponseWriter, r *http.Request, v *repoVisit, kind, name string, f gitdiff.Format) error {
	g, err := h.openGit(v)
	if err != nil {
		return err
	}
	defer g.Close()
	var c gitdiff.Change
	switch kind {
	case "commit":
		cm, err := g.CommitMeta(name)
		if err != nil {
			return gitError(err)
		}
		c = gitdiff.Commit(cm.SHA, cm.ParentSHAs)
	case "compare":
		baseRev, headRev, ok := gitread.SplitBasehead(name)
		if !ok {
			return apierr.NotFound()
		}
		base, head, mb, err := mergeBaseOf(r, g, baseRev, headRev)
		if err != nil {
			return err
		}
		c = gitdiff.Between("Comparison", base, mb, head)
	case "pull":
		n, err := strconv.ParseInt(name, 10, 64)
		if err != nil {
			return apierr.NotFound()
		}
		pr, err := h.Pulls.Get(r.Context(), v.repo, n)
		if err != nil {
			return hidden(v.x, err)
		}
		base, head, mb, err := mergeBaseOf(r, g, pr.BaseSHA, pr.HeadSHA)
		if err != nil {
			return err
		}
		c = gitdiff.Between("PullRequest", base, mb, head)
	default:
		return apierr.NotFound()
	}
	return gitdiff.Serve(&plainText{ResponseWriter: w}, r, gitcmd.In(g.Dir()), c, f)
}

// mergeBaseOf resolves two revisions and their merge base; none is a 404
// (as the API's comparison).
func mergeBaseOf(r *http.Request, g *gitread.Repository, baseRev, headRev string) (base, head, mb string, err error) {
	base, err1 := g.Resolve(baseRev)
	head, err2 := g.Resolve(headRev)
	if err := errors.Join(err1, err2); err != nil {
		return "", "", "", gitError(err)
	}
	mb, err = g.MergeBase(r.Context(), base, head)
	if errors.Is(err, gitread.ErrNoMergeBase) {
		return "", "", "", apierr.New(http.StatusNotFound, "%s and %s have no history in common.", baseRev, headRev)
	}
	return base, head, mb, err
}

// plainText answers a 200 as text/plain (the web's type of a diff and a
// patch) whatever Content-Type gitdiff set; other answers keep theirs.
type plainText struct {
	http.ResponseWriter
	wrote bool
}

func (p *plainText) WriteHeader(code int) {
	if !p.wrote && code == http.StatusOK {
		p.Header().Set("Content-Type", "text/plain; charset=utf-8")
	}
	p.wrote = true
	p.ResponseWriter.WriteHeader(code)
}

func (p *plainText) Write(b []byte) (int, error) {
	if !p.wrote {
		p.WriteHeader(http.StatusOK)
	}
	return p.ResponseWriter.Write(b)
}

// Unwrap lets the HTTP layer find its recorder of the response.
func (p *plainText) Unwrap() http.ResponseWriter { return p.ResponseWriter }

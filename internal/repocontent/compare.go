package repocontent

import (
	"errors"
	"net/http"

	"forgeapi/internal/apierr"
	"forgeapi/internal/git/gitcmd"
	"forgeapi/internal/git/gitdiff"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos/gitjson"
)

// comparisonJSON is the platform's commit-comparison.
type comparisonJSON struct {
	URL             string           `json:"url"`
	HTMLURL         string           `json:"html_url"`
	PermalinkURL    string           `json:"permalink_url"`
	DiffURL         string           `json:"diff_url"`
	PatchURL        string           `json:"patch_url"`
	BaseCommit      gitjson.Commit   `json:"base_commit"`
	MergeBaseCommit gitjson.Commit   `json:"merge_base_commit"`
	Status          string           `json:"status"`
	AheadBy         int              `json:"ahead_by"`
	BehindBy        int              `json:"behind_by"`
	TotalCommits    int              `json:"total_commits"`
	Commits         []gitjson.Commit `json:"commits"`
	Files           []fileJSON       `json:"files"`
}

// compareStatus names how head relates to base.
func compareStatus(ahead, behind int) string {
	switch {
	case ahead == 0 && behind == 0:
		return "identical"
	case behind == 0:
		return "ahead"
	case ahead == 0:
		return "behind"
	}
	return "diverged"
}

// compare answers GET /repos/{owner}/{repo}/compare/{basehead}: how HEAD
// relates to BASE through their merge base (the same merge base that
// dependency review uses), the commits of merge-base..head, oldest first
// (at most MaxCompareCommit), and the files changed from the merge base
// to head (at most MaxCommitFiles); for the diff and patch media types,
// the diff from the merge base to head and the patches of those commits
// (gitdiff).
func (h *Handler) compare(w http.ResponseWriter, r *http.Request) error {
	basehead := r.PathValue("basehead")
	baseRev, headRev, ok := gitread.SplitBasehead(basehead)
	if !ok {
		return apierr.NotFound()
	}
	g, repo, release, err := h.openHistory(r)
	if err != nil {
		return err
	}
	defer release()
	ctx := r.Context()
	baseSHA, err1 := g.Resolve(baseRev)
	headSHA, err2 := g.Resolve(headRev)
	if err := errors.Join(err1, err2); err != nil {
		return apierr.New(http.StatusNotFound, "Not Found: no commit found for %s or %s", baseRev, headRev)
	}
	mergeBase, err := g.MergeBase(ctx, baseSHA, headSHA)
	if errors.Is(err, gitread.ErrNoMergeBase) {
		return apierr.New(http.StatusNotFound, "No common ancestor between %s and %s.", baseRev, headRev)
	}
	if err != nil {
		return err
	}
	if f := gitdiff.Requested(r); f != "" {
		return gitdiff.Serve(w, r, gitcmd.In(g.Dir()), gitdiff.Between("Comparison", baseSHA, mergeBase, headSHA), f)
	}
	ahead, err := g.CommitsBetween(ctx, mergeBase, headSHA, MaxCompareCommit)
	if err != nil {
		return err
	}
	behind, err := g.CountCommits(ctx, mergeBase, baseSHA)
	if err != nil {
		return err
	}
	diffs, _, err := g.Diff(ctx, mergeBase, headSHA, MaxCommitFiles)
	if err != nil {
		return err
	}
	base := httpapi.BaseURL(ctx)
	pl := newPlace(base, repo, headSHA)
	render := func(sha string) (gitjson.Commit, error) {
		c, err := g.CommitMeta(sha)
		if err != nil {
			return gitjson.Commit{}, err
		}
		return gitjson.CommitOf(ctx, h.Repos.DB, base, repo, c)
	}
	out := comparisonJSON{
		URL: pl.api + "/compare/" + basehead, HTMLURL: pl.web + "/compare/" + basehead,
		PermalinkURL: pl.web + "/compare/" + baseSHA + "..." + headSHA,
		DiffURL:      pl.web + "/compare/" + basehead + ".diff", PatchURL: pl.web + "/compare/" + basehead + ".patch",
		Status: compareStatus(ahead.Total, behind), AheadBy: ahead.Total, BehindBy: behind, TotalCommits: ahead.Total,
		Commits: []gitjson.Commit{},
	}
	if out.BaseCommit, err = render(baseSHA); err != nil {
		return err
	}
	if out.MergeBaseCommit, err = render(mergeBase); err != nil {
		return err
	}
	for i := len(ahead.Commits) - 1; i >= 0; i-- { // oldest first, as the platform lists them
		j, err := gitjson.CommitOf(ctx, h.Repos.DB, base, repo, ahead.Commits[i])
		if err != nil {
			return err
		}
		out.Commits = append(out.Commits, j)
	}
	out.Files, _ = filesJSON(pl, headSHA, diffs)
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

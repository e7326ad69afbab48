package pulls

import (
	"context"
	"errors"

	"forgeapi/internal/apierr"
	"forgeapi/internal/git/gitdiff"
	"forgeapi/internal/git/gitread"
)

// spot is where a review comment sits in a file's diff (gitdiff.Spot).
type spot = gitdiff.Spot

// errNotInDiff is the 422 of a comment on a line the diff does not show.
func errNotInDiff() error {
	return apierr.Custom("PullRequestReviewComment", "line", "pull_request_review_thread.line must be part of the diff")
}

// filePatch is the unified patch of path between the merge base of base
// and commit, and commit; "" when the file did not change.
func (s *Service) filePatch(ctx context.Context, repoID int64, base, commit, path string) (string, error) {
	g, err := gitread.Open(s.Repos.GitDir(repoID))
	if err != nil {
		return "", err
	}
	defer g.Close()
	mb, err := g.MergeBase(ctx, base, commit)
	if errors.Is(err, gitread.ErrNoMergeBase) {
		mb, err = "", nil
	}
	if err != nil {
		return "", err
	}
	diffs, _, err := g.Diff(ctx, mb, commit, MaxFiles)
	if err != nil {
		return "", err
	}
	for _, d := range diffs {
		if d.Path == path {
			return d.Patch, nil
		}
	}
	return "", nil
}

// locate finds the comment's spot in patch (gitdiff.Locate): by line
// and side (RIGHT: the new file's numbering, LEFT: the old one's), or by
// position when line is 0. errNotInDiff when the patch does not show it.
func locate(patch string, line int, side string, position int) (spot, error) {
	sp, ok := gitdiff.Locate(patch, line, side, position)
	if !ok {
		return spot{}, errNotInDiff()
	}
	return sp, nil
}

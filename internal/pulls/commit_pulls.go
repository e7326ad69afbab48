package pulls

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"forgeapi/internal/apierr"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// WithCommit lists the pull requests of the repository that hold the
// commit sha (a full SHA), by number, as the platform does: when the
// default branch holds the commit, the merged pull requests that brought
// it there (the commit is among their commits, or is their merge commit,
// as a squash's is); otherwise the open and merged pull requests among
// whose commits it is. A pull request's commits are those of its head
// (refs/pull/N/head) that its base did not hold: the base branch's tip
// while open, the base commit it was merged into once merged. Closed
// pull requests that were not merged are left out.
func (s *Service) WithCommit(ctx context.Context, repo *repos.Repository, sha string) ([]*PullRequest, error) {
	git := gitDir(s.Repos.GitDir(repo.ID))
	numbers, err := s.candidates(ctx, git, repo, sha)
	if err != nil {
		return nil, err
	}
	inDefault := false
	if tip, ok, err := git.commit(ctx, "refs/heads/"+repo.DefaultBranch); err != nil {
		return nil, err
	} else if ok {
		if inDefault, err = git.isAncestor(ctx, sha, tip); err != nil {
			return nil, err
		}
	}
	var out []*PullRequest
	for _, n := range numbers {
		p, err := byNumber(ctx, s.DB, repo, n)
		if errors.Is(err, store.ErrNotFound) {
			continue
		} else if err != nil {
			return nil, err
		}
		if ok, err := holds(ctx, git, p, sha, inDefault); err != nil {
			return nil, err
		} else if ok {
			out = append(out, p)
		}
	}
	return out, nil
}

// candidates are the numbers, ascending, of the pull requests whose head
// reaches sha, and of those merged with sha as their merge commit.
func (s *Service) candidates(ctx context.Context, git gitDir, repo *repos.Repository, sha string) ([]int64, error) {
	out, err := git.run(ctx, nil, "", "for-each-ref", "--contains", sha, "--format=%(refname)", "refs/pull/")
	if err != nil {
		return nil, err
	}
	var numbers []int64
	for ref := range strings.SplitSeq(out, "\n") {
		rest, ok := strings.CutPrefix(ref, "refs/pull/")
		n, head := strings.CutSuffix(rest, "/head")
		if number, err := strconv.ParseInt(n, 10, 64); ok && head && err == nil {
			numbers = append(numbers, number)
		}
	}
	rows, err := s.DB.QueryContext(ctx, `SELECT number FROM pull_requests
		WHERE repository_id = $1 AND merged_at IS NOT NULL AND merge_commit_sha = $2`, repo.ID, sha)
	if err != nil {
		return nil, store.Normalize(err)
	}
	defer rows.Close()
	for rows.Next() {
		var n int64
		if err := rows.Scan(&n); err != nil {
			return nil, store.Normalize(err)
		}
		numbers = append(numbers, n)
	}
	if err := rows.Err(); err != nil {
		return nil, store.Normalize(err)
	}
	slices.Sort(numbers)
	return slices.Compact(numbers), nil
}

// holds reports whether the pull request p counts as holding sha (see
// WithCommit); inDefault is whether the default branch holds it.
func holds(ctx context.Context, git gitDir, p *PullRequest, sha string, inDefault bool) (bool, error) {
	merged := p.MergedAt != nil
	switch {
	case !merged && (!p.Open() || inDefault):
		return false, nil
	case merged && p.MergeCommitSHA == sha:
		return true, nil
	}
	base := p.BaseSHA
	if !merged {
		tip, ok, err := git.commit(ctx, "refs/heads/"+p.BaseRef)
		if err != nil || !ok {
			return ok, err // a base branch that is gone holds nothing
		}
		base = tip
	}
	if base == "" {
		return true, nil
	}
	inBase, err := git.isAncestor(ctx, sha, base)
	return !inBase, err
}

// listWithCommit answers GET /repos/{owner}/{repo}/commits/{commit_sha}/pulls:
// the pull requests holding the commit (Service.WithCommit), paged, as
// pull request lists show them. A revision that names no commit is the
// platform's 422 "No commit found for SHA".
func (h *Handler) listWithCommit(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	repo := repos.From(r.Context())
	ref := r.PathValue("commit_sha")
	g, err := gitread.Open(h.Service.Repos.GitDir(repo.ID))
	if err != nil {
		return err
	}
	c, err := g.CommitMeta(ref)
	g.Close()
	if errors.Is(err, gitread.ErrRevisionNotFound) {
		return apierr.Unprocessable("No commit found for SHA: %s", ref)
	} else if err != nil {
		return err
	}
	list, err := h.Service.WithCommit(r.Context(), repo, c.SHA)
	if err != nil {
		return err
	}
	rd := h.render(r)
	out := make([]*pullJSON, 0, page.PerPage)
	for _, p := range httpapi.Slice(page, list) {
		j, err := rd.pull(r.Context(), p, false)
		if err != nil {
			return err
		}
		out = append(out, j)
	}
	httpapi.SetLinks(w, r, page, len(list))
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

package graphql

import (
	"context"
	"sync"

	"forgeapi/internal/checks"
	"forgeapi/internal/pulls"
	"forgeapi/internal/repos"
	"forgeapi/internal/statuses"
)

// pullPage is a page of one repository's pull requests (a connection's
// or a search's): what their resolvers ask of each, their reviews and
// their head commits' statuses, it loads once for the whole page, so
// that the page costs the same queries whatever its size.
type pullPage struct {
	h     *Handler
	repo  *repos.Repository
	pulls []*pulls.PullRequest

	reviewsOnce sync.Once
	reviews     map[int64][]*pulls.Review
	reviewsErr  error

	statusesOnce sync.Once
	statuses     map[string][]*statuses.Status
	runs         map[string][]*checks.Run
	statusesErr  error
}

// resolvers are the page's pull requests for their resolvers, which
// share the page.
func (h *Handler) pullPage(repo *repositoryResolver, list []*pulls.PullRequest) []*pullRequestResolver {
	page := &pullPage{h: h, repo: repo.r, pulls: list}
	out := make([]*pullRequestResolver, len(list))
	for i, p := range list {
		out[i] = &pullRequestResolver{h: h, p: p, repo: repo, page: page}
	}
	return out
}

// reviewsOf are the reviews the caller sees of the page's pull request
// id.
func (pg *pullPage) reviewsOf(ctx context.Context, id int64) ([]*pulls.Review, error) {
	pg.reviewsOnce.Do(func() {
		pg.reviews, pg.reviewsErr = pg.h.Pulls.ReviewsOfPage(ctx, pg.repo, pg.pulls, requestFrom(ctx).principal.UserID())
	})
	return pg.reviews[id], pg.reviewsErr
}

// latestChecks are the latest statuses and check runs of sha when it
// is the head of one of the page's pull requests; ok is false for
// another commit.
func (pg *pullPage) latestChecks(ctx context.Context, sha string) (list []*statuses.Status, runs []*checks.Run, ok bool, err error) {
	pg.statusesOnce.Do(func() {
		heads := make([]string, len(pg.pulls))
		for i, p := range pg.pulls {
			heads[i] = p.HeadSHA
		}
		pg.statuses, pg.statusesErr = (&statuses.Service{DB: pg.h.DB}).LatestOf(ctx, pg.repo.ID, heads)
		if pg.statusesErr == nil {
			pg.runs, pg.statusesErr = checks.LatestRunsOf(ctx, pg.h.DB, pg.repo.ID, heads)
		}
	})
	for _, p := range pg.pulls {
		if p.HeadSHA == sha {
			return pg.statuses[sha], pg.runs[sha], true, pg.statusesErr
		}
	}
	return nil, nil, false, nil
}

package pulls

import (
	"context"
	"errors"

	"forgeapi/internal/accounts"
	"forgeapi/internal/issues"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// prColumns are the columns scanPR reads, of pull_requests aliased p.
const prColumns = `p.id, p.number, p.head_repository_id, p.head_ref, p.head_sha, p.base_ref, p.base_sha, p.draft,
	p.merged_at, p.merged_by_id, p.merge_commit_sha, p.mergeable, p.mergeable_state, p.check_due,
	p.commits, p.additions, p.deletions, p.changed_files`

type scanner = store.Scanner

func scanPR(s scanner) (*PullRequest, int64, error) {
	p := &PullRequest{}
	var number int64
	err := s.Scan(&p.ID, &number, &p.headRepoID, &p.HeadRef, &p.HeadSHA, &p.BaseRef, &p.BaseSHA, &p.Draft,
		&p.MergedAt, &p.mergedByID, &p.MergeCommitSHA, &p.Mergeable, &p.MergeableState, &p.checkDue,
		&p.Commits, &p.Additions, &p.Deletions, &p.ChangedFiles)
	return p, number, err
}

// byNumber loads the repository's pull request; store.ErrNotFound when
// none (an issue that is no pull request included).
func byNumber(ctx context.Context, q store.Q, repo *repos.Repository, number int64) (*PullRequest, error) {
	p, _, err := scanPR(q.QueryRowContext(ctx, `SELECT `+prColumns+` FROM pull_requests p
		WHERE p.repository_id = $1 AND p.number = $2`, repo.ID, number))
	if err != nil {
		return nil, store.Normalize(err)
	}
	return p, complete(ctx, q, repo, p, number)
}

// complete loads the pull request's issue row, head repository and
// merger.
func complete(ctx context.Context, q store.Q, repo *repos.Repository, p *PullRequest, number int64) error {
	var err error
	p.Repo = repo
	if p.Issue, err = issues.ByNumber(ctx, q, repo, number); err != nil {
		return err
	}
	if p.headRepoID != nil {
		if *p.headRepoID == repo.ID {
			p.HeadRepo = repo
		} else if p.HeadRepo, err = repos.ByID(ctx, q, *p.headRepoID); errors.Is(err, store.ErrNotFound) {
			p.HeadRepo, err = nil, nil
		} else if err != nil {
			return err
		}
	}
	if p.RequestedReviewers, err = requestedReviewers(ctx, q, p); err != nil {
		return err
	}
	if p.mergedByID != nil {
		if p.MergedBy, err = accounts.ByID(ctx, q, *p.mergedByID); errors.Is(err, store.ErrNotFound) {
			p.MergedBy, err = nil, nil
		}
	}
	return err
}

// openFor returns the open pull request of head (repository and branch)
// into the base branch, nil when there is none.
func openFor(ctx context.Context, q store.Q, repo *repos.Repository, headRepoID int64, headRef, baseRef string) (int64, error) {
	var number int64
	err := store.Normalize(q.QueryRowContext(ctx, `SELECT p.number FROM pull_requests p JOIN issues i ON i.id = p.issue_id
		WHERE p.repository_id = $1 AND p.head_repository_id = $2 AND p.head_ref = $3 AND p.base_ref = $4 AND i.state = 'open'`,
		repo.ID, headRepoID, headRef, baseRef).Scan(&number))
	if errors.Is(err, store.ErrNotFound) {
		return 0, nil
	}
	return number, err
}

// touch sets the pull request's updated_at (its issue row's) to now.
func touch(ctx context.Context, tx store.Q, p *PullRequest) error {
	return issues.Touch(ctx, tx, p.Issue.ID)
}

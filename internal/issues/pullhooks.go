package issues

import (
	"context"

	"forgeapi/internal/accounts"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// The hooks of this file let internal/pulls (which sits on issues) keep a
// pull request's issue row in its own transactions: a pull request is an
// issue row marked is_pull_request plus its pull_requests row. They emit
// no events; the caller emits pull_request events instead of issues ones.

// InsertPullRequest inserts, in tx, the issue row of a new pull request
// by actor with the repository's next number, and returns it loaded. A
// user the owner blocks is a 403.
func InsertPullRequest(ctx context.Context, tx store.Q, repo *repos.Repository, actor *accounts.Account, title, body string) (*Issue, error) {
	if err := accounts.CheckNotBlocked(ctx, tx, repo.Owner, actor.ID); err != nil {
		return nil, err
	}
	number, err := nextNumber(ctx, tx, repo.ID, false)
	if err != nil {
		return nil, err
	}
	now := store.Now()
	if _, err := tx.ExecContext(ctx, `INSERT INTO issues (repository_id, number, is_pull_request, title, body, user_id, created_at, updated_at)
		VALUES ($1, $2, TRUE, $3, $4, $5, $6, $6)`, repo.ID, number, title, body, actor.ID, now); err != nil {
		return nil, store.Normalize(err)
	}
	return issueByNumber(ctx, tx, repo, number)
}

// MarkPullRequest turns the repository's open issue into a pull
// request's issue row, in tx, and returns it loaded; store.ErrNotFound
// when there is no such issue, store.ErrConflict when it is a pull
// request already or closed.
func MarkPullRequest(ctx context.Context, tx store.Q, repo *repos.Repository, number int64) (*Issue, error) {
	res, err := tx.ExecContext(ctx, `UPDATE issues SET is_pull_request = TRUE, updated_at = $1
		WHERE repository_id = $2 AND number = $3 AND NOT is_pull_request AND state = 'open'`, store.Now(), repo.ID, number)
	if err != nil {
		return nil, store.Normalize(err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return nil, err
	} else if n == 0 {
		if _, err := issueByNumber(ctx, tx, repo, number); err != nil {
			return nil, err
		}
		return nil, store.ErrConflict
	}
	return issueByNumber(ctx, tx, repo, number)
}

// ByNumber returns the repository's issue (or pull request's issue row)
// with its people, labels, assignees and milestone; store.ErrNotFound
// when none.
func ByNumber(ctx context.Context, q store.Q, repo *repos.Repository, number int64) (*Issue, error) {
	return issueByNumber(ctx, q, repo, number)
}

// SetFields changes the title, body and state of the repository's issue
// row in tx as Update does (closing sets closed_at and closed_by), with
// no event and no permission check, and returns it before and after.
func SetFields(ctx context.Context, tx store.Q, repo *repos.Repository, actor *accounts.Account, number int64, c Changes) (before, after *Issue, err error) {
	before, err = issueByNumber(ctx, tx, repo, number)
	if err != nil {
		return nil, nil, err
	}
	next := *before
	applyChanges(&next, c, actor)
	if _, err := tx.ExecContext(ctx, `UPDATE issues SET title = $1, body = $2, state = $3, state_reason = $4, closed_at = $5,
		closed_by_id = $6, updated_at = $7 WHERE id = $8`, next.Title, next.Body, next.State, next.StateReason, next.ClosedAt,
		idOf(next.ClosedBy), store.Now(), before.ID); err != nil {
		return nil, nil, store.Normalize(err)
	}
	after, err = issueByNumber(ctx, tx, repo, number)
	return before, after, err
}

// Touch sets the issue row's updated_at to now.
func Touch(ctx context.Context, tx store.Q, issueID int64) error {
	_, err := tx.ExecContext(ctx, `UPDATE issues SET updated_at = $1 WHERE id = $2`, store.Now(), issueID)
	return store.Normalize(err)
}

// LabelJSON is the platform's label object of lb under the API base.
func LabelJSON(base string, repo *repos.Repository, lb *Label) any {
	return toLabelJSON(urlsOf(base, repo), lb)
}

// MilestoneJSON is the platform's milestone object of m under the API
// base.
func MilestoneJSON(base string, repo *repos.Repository, m *Milestone) any {
	return toMilestoneJSON(urlsOf(base, repo), m)
}

// Association is the platform's author_association of the account with
// the repository: OWNER, MEMBER, COLLABORATOR or NONE (nil is NONE).
func Association(ctx context.Context, q store.Q, repo *repos.Repository, a *accounts.Account) (string, error) {
	return newLoader(q, repo).association(ctx, a)
}

// MarkMerged records, in tx, that the pull request of the issue row was
// merged at sha by merger: the row's merged_at (the issue view's
// pull_request.merged_at) and the merged event of its history.
func MarkMerged(ctx context.Context, tx store.Q, is *Issue, merger *accounts.Account, sha string) error {
	if _, err := tx.ExecContext(ctx, `UPDATE issues SET merged_at = $1 WHERE id = $2`, store.Now(), is.ID); err != nil {
		return store.Normalize(err)
	}
	return RecordEvent(ctx, tx, is, merger, EventRecord{Event: "merged", CommitID: sha})
}

// PullRequestEvents sends the pull_request event of a change made to a
// pull request through the issues endpoints (a label, an assignee, a
// milestone, its title, state or lock), which the platform sends instead
// of issues. internal/pulls implements it.
type PullRequestEvents interface {
	EmitForIssue(ctx context.Context, tx *store.Tx, repo *repos.Repository, actor *accounts.Account, action string, number int64, extra map[string]any) error
}

package pulls

import (
	"context"
	"encoding/base64"
	"strconv"
	"strings"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// ByNodeID returns the pull request whose node_id (as the REST API
// renders it, wire.NodeID("PR", id)) is nodeID, with its base repository;
// store.ErrNotFound when the id names no pull request.
func (s *Service) ByNodeID(ctx context.Context, nodeID string) (*PullRequest, error) {
	enc, ok := strings.CutPrefix(nodeID, "PR_")
	if !ok {
		return nil, store.ErrNotFound
	}
	raw, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil {
		return nil, store.ErrNotFound
	}
	id, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || id <= 0 {
		return nil, store.ErrNotFound
	}
	var repoID, number int64
	if err := s.DB.QueryRowContext(ctx, `SELECT repository_id, number FROM pull_requests WHERE id = $1`, id).Scan(&repoID, &number); err != nil {
		return nil, store.Normalize(err)
	}
	repo, err := repos.ByID(ctx, s.DB, repoID)
	if err != nil {
		return nil, err
	}
	return byNumber(ctx, s.DB, repo, number)
}

// SetDraft marks the repository's pull request number a draft (draft
// true, pull_request converted_to_draft) or ready for review (draft
// false, ready_for_review), as the platform's GraphQL mutations
// convertPullRequestToDraft and markPullRequestReadyForReview do. The
// pull request's author may, anyone else needs push access (mayPush;
// apierr 403 otherwise). A closed pull request cannot change (422). When
// it is already in that state nothing changes and nothing is emitted.
// A known clean mergeable_state becomes "draft" and back; the change
// bumps the check generation, so a check that read the old draft flag
// records nothing and runs again. Neither action is a PullRequestEvent
// in the feeds, as on the platform.
func (s *Service) SetDraft(ctx context.Context, repo *repos.Repository, actor *accounts.Account, number int64, draft, mayPush bool) (*PullRequest, error) {
	var out *PullRequest
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		p, err := byNumber(ctx, tx, repo, number)
		if err != nil {
			return err
		}
		if !mayPush && (p.Issue.User == nil || p.Issue.User.ID != actor.ID) {
			return apierr.Forbidden("Must have push access to repository.")
		}
		if !p.Open() {
			return apierr.Unprocessable("Pull request is closed.")
		}
		if p.Draft == draft {
			out = p
			return nil
		}
		if _, err := tx.ExecContext(ctx, `UPDATE pull_requests SET draft = $1,
			mergeable_state = CASE WHEN mergeable_state IN ('clean', 'draft') THEN $2 ELSE mergeable_state END,
			check_generation = check_generation + 1 WHERE id = $3`, draft, cleanState(draft), p.ID); err != nil {
			return store.Normalize(err)
		}
		s.wake(tx) // a check in flight records nothing now, and is due again
		if err := touch(ctx, tx, p); err != nil {
			return err
		}
		if out, err = byNumber(ctx, tx, repo, number); err != nil {
			return err
		}
		action := "ready_for_review"
		if draft {
			action = "converted_to_draft"
		}
		return s.emit(ctx, tx, actor, action, out, nil)
	})
	return out, err
}

// cleanState is the mergeable_state of a pull request that merges without
// conflict: "draft" for a draft.
func cleanState(draft bool) string {
	if draft {
		return StateDraft
	}
	return StateClean
}

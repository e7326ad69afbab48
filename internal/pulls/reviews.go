package pulls

import (
	"context"
	"errors"
	"maps"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/events"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/issues"
	"forgeapi/internal/protection"
	"forgeapi/internal/reactions"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// The states of a review.
const (
	ReviewPending          = "PENDING"
	ReviewCommented        = "COMMENTED"
	ReviewApproved         = "APPROVED"
	ReviewChangesRequested = "CHANGES_REQUESTED"
	ReviewDismissed        = "DISMISSED"
)

// reviewEvents maps a review's event to the state it submits.
var reviewEvents = map[string]string{"APPROVE": ReviewApproved, "REQUEST_CHANGES": ReviewChangesRequested, "COMMENT": ReviewCommented}

// Review is a review of a pull request.
type Review struct {
	ID, PullID           int64
	User                 *accounts.Account
	State, Body          string
	CommitID             string
	SubmittedAt          *time.Time
	Association          string
	CreatedAt, UpdatedAt time.Time
	userID               *int64
}

// ReviewComment is a comment on a line of a pull request's diff.
type ReviewComment struct {
	ID, RepoID, PullID, ReviewID int64
	InReplyTo                    *int64
	User                         *accounts.Account
	Path, Side                   string
	Line, Position               *int
	CommitID, OriginalCommitID   string
	DiffHunk, Body               string
	Association                  string
	CreatedAt, UpdatedAt         time.Time
	// Reactions are the comment's reactions by content.
	Reactions reactions.Counts
	userID    *int64
}

// NewComment is a line comment asked for: Path and Line (on Side, RIGHT
// by default) or the older Position, and Body; InReplyTo answers another
// comment (its path and line are taken).
type NewComment struct {
	Path, Side, Body string
	Line, Position   int
	CommitID         string
	InReplyTo        *int64
}

// NewReview is a review asked for: Event APPROVE, REQUEST_CHANGES or
// COMMENT submits it ("" leaves it PENDING); CommitID defaults to the
// head.
type NewReview struct {
	CommitID, Body, Event string
	Comments              []NewComment
}

const reviewColumns = `r.id, r.pull_request_id, r.user_id, r.state, r.body, r.commit_id, r.submitted_at, r.created_at, r.updated_at`

func scanReview(s scanner) (*Review, error) {
	r := &Review{}
	err := s.Scan(&r.ID, &r.PullID, &r.userID, &r.State, &r.Body, &r.CommitID, &r.SubmittedAt, &r.CreatedAt, &r.UpdatedAt)
	return r, err
}

const commentColumns = `c.id, c.repository_id, c.pull_request_id, c.review_id, c.in_reply_to_id, c.user_id, c.path, c.side, c.line,
	c.position, c.commit_id, c.original_commit_id, c.diff_hunk, c.body, c.created_at, c.updated_at`

func scanComment(s scanner) (*ReviewComment, error) {
	c := &ReviewComment{}
	err := s.Scan(&c.ID, &c.RepoID, &c.PullID, &c.ReviewID, &c.InReplyTo, &c.userID, &c.Path, &c.Side, &c.Line,
		&c.Position, &c.CommitID, &c.OriginalCommitID, &c.DiffHunk, &c.Body, &c.CreatedAt, &c.UpdatedAt)
	return c, err
}

// people completes reviews' and comments' authors and associations.
func people(ctx context.Context, q store.Q, repo *repos.Repository, id *int64) (*accounts.Account, string, error) {
	if id == nil {
		return nil, "NONE", nil
	}
	a, err := accounts.ByID(ctx, q, *id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, "NONE", nil
	} else if err != nil {
		return nil, "", err
	}
	assoc, err := issues.Association(ctx, q, repo, a)
	return a, assoc, err
}

func reviewByID(ctx context.Context, q store.Q, p *PullRequest, id int64) (*Review, error) {
	r, err := scanReview(q.QueryRowContext(ctx, `SELECT `+reviewColumns+` FROM pull_request_reviews r WHERE r.id = $1 AND r.pull_request_id = $2`, id, p.ID))
	if err != nil {
		return nil, store.Normalize(err)
	}
	r.User, r.Association, err = people(ctx, q, p.Repo, r.userID)
	return r, err
}

func commentByID(ctx context.Context, q store.Q, repo *repos.Repository, id int64) (*ReviewComment, error) {
	c, err := scanComment(q.QueryRowContext(ctx, `SELECT `+commentColumns+` FROM pull_request_review_comments c WHERE c.id = $1 AND c.repository_id = $2`, id, repo.ID))
	if err != nil {
		return nil, store.Normalize(err)
	}
	if c.User, c.Association, err = people(ctx, q, repo, c.userID); err != nil {
		return nil, err
	}
	c.Reactions, err = reactions.CountsOf(ctx, q, reactions.ReviewComment, c.ID)
	return c, err
}

// Reviews lists the pull request's reviews, oldest first; pending ones
// only to their authors (viewer, 0 for none).
func (s *Service) Reviews(ctx context.Context, p *PullRequest, viewer int64) ([]*Review, error) {
	rows, err := s.DB.QueryContext(ctx, `SELECT `+reviewColumns+` FROM pull_request_reviews r
		WHERE r.pull_request_id = $1 AND (r.state <> 'PENDING' OR r.user_id = $2) ORDER BY r.id`, p.ID, viewer)
	if err != nil {
		return nil, store.Normalize(err)
	}
	out, err := store.ScanAll(rows, nil, scanReview)
	for _, r := range out {
		if r.User, r.Association, err = people(ctx, s.DB, p.Repo, r.userID); err != nil {
			return nil, err
		}
	}
	return out, err
}

// Review returns one review of the pull request; store.ErrNotFound when
// none (another's pending review included).
func (s *Service) Review(ctx context.Context, p *PullRequest, id, viewer int64) (*Review, error) {
	r, err := reviewByID(ctx, s.DB, p, id)
	if err == nil && r.State == ReviewPending && (r.User == nil || r.User.ID != viewer) {
		return nil, store.ErrNotFound
	}
	return r, err
}

// CreateReview adds a review by actor with its line comments; with an
// event it is submitted at once (pull_request_review submitted, and
// pull_request_review_comment created for each comment). 422 when the
// event is unknown, REQUEST_CHANGES or COMMENT has no body and no
// comment, the author approves or requests changes on their own pull
// request, or a comment's line is not in the diff.
func (s *Service) CreateReview(ctx context.Context, repo *repos.Repository, actor *accounts.Account, number int64, n NewReview) (*Review, error) {
	p, err := byNumber(ctx, s.DB, repo, number)
	if err != nil {
		return nil, err
	}
	state := ReviewPending
	if n.Event != "" {
		var ok bool
		if state, ok = reviewEvents[n.Event]; !ok {
			return nil, apierr.Invalid("PullRequestReview", "event", apierr.CodeInvalid)
		}
	}
	if err := checkReview(p, actor, state, n.Body, len(n.Comments)); err != nil {
		return nil, err
	}
	if n.CommitID == "" {
		n.CommitID = p.HeadSHA
	} else if err := s.checkCommitID(p, "PullRequestReview", n.CommitID); err != nil {
		return nil, err
	}
	comments, err := s.placeComments(ctx, p, n.CommitID, n.Comments)
	if err != nil {
		return nil, err
	}
	var out *Review
	err = s.DB.Tx(ctx, func(tx *store.Tx) error {
		if err := accounts.CheckNotBlocked(ctx, tx, repo.Owner, actor.ID); err != nil {
			return err
		}
		var err error
		if out, err = s.insertReview(ctx, tx, p, actor, state, n.Body, n.CommitID); err != nil {
			return err
		}
		var made []*ReviewComment
		for _, c := range comments {
			rc, err := s.insertComment(ctx, tx, p, actor, out.ID, c)
			if err != nil {
				return err
			}
			made = append(made, rc)
		}
		if state == ReviewPending {
			return nil
		}
		return s.submitted(ctx, tx, p, actor, out, made)
	})
	return out, err
}

// checkReview refuses a review the platform refuses.
func checkReview(p *PullRequest, actor *accounts.Account, state, body string, comments int) error {
	if (state == ReviewChangesRequested || state == ReviewCommented) && body == "" && comments == 0 {
		return apierr.Custom("PullRequestReview", "body", "Review Comment is missing")
	}
	own := p.Issue.User != nil && p.Issue.User.ID == actor.ID
	if own && state == ReviewApproved {
		return apierr.Unprocessable("Can not approve your own pull request")
	}
	if own && state == ReviewChangesRequested {
		return apierr.Unprocessable("Can not request changes on your own pull request")
	}
	return nil
}

// checkCommitID refuses a commit_id that names no commit of the
// repository, as the platform does: 422 "commit_id is not part of the
// pull request" on the resource.
func (s *Service) checkCommitID(p *PullRequest, resource, commit string) error {
	g, err := gitread.Open(s.Repos.GitDir(p.Repo.ID))
	if err != nil {
		return err
	}
	defer g.Close()
	if _, err := g.CommitObject(commit); errors.Is(err, gitread.ErrRevisionNotFound) {
		return apierr.Custom(resource, "commit_id", "commit_id is not part of the pull request")
	} else if err != nil {
		return err
	}
	return nil
}

// placed is a new comment with its spot in the diff.
type placed struct {
	NewComment
	spot
}

// placeComments finds each comment's spot in the diff at commit.
func (s *Service) placeComments(ctx context.Context, p *PullRequest, commit string, list []NewComment) ([]placed, error) {
	var out []placed
	for _, c := range list {
		if c.Body == "" {
			return nil, apierr.Invalid("PullRequestReviewComment", "body", apierr.CodeMissingField)
		}
		patch, err := s.filePatch(ctx, p.Repo.ID, p.BaseSHA, commit, c.Path)
		if err != nil {
			return nil, err
		}
		sp, err := locate(patch, c.Line, c.Side, c.Position)
		if err != nil {
			return nil, err
		}
		c.CommitID = commit
		out = append(out, placed{c, sp})
	}
	return out, nil
}

func (s *Service) insertReview(ctx context.Context, tx store.Q, p *PullRequest, actor *accounts.Account, state, body, commit string) (*Review, error) {
	now := store.Now()
	var submitted *time.Time
	if state != ReviewPending {
		submitted = &now
	}
	var id int64
	if err := tx.QueryRowContext(ctx, `INSERT INTO pull_request_reviews (pull_request_id, user_id, state, body, commit_id, submitted_at, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $7) RETURNING id`, p.ID, actor.ID, state, body, commit, submitted, now).Scan(&id); err != nil {
		return nil, store.Normalize(err)
	}
	return reviewByID(ctx, tx, p, id)
}

func (s *Service) insertComment(ctx context.Context, tx *store.Tx, p *PullRequest, actor *accounts.Account, reviewID int64, c placed) (*ReviewComment, error) {
	now := tx.Now()
	var id int64
	if err := tx.QueryRowContext(ctx, `INSERT INTO pull_request_review_comments (repository_id, pull_request_id, review_id, in_reply_to_id,
		user_id, path, line, side, position, commit_id, original_commit_id, diff_hunk, body, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10, $11, $12, $13, $13) RETURNING id`, p.Repo.ID, p.ID, reviewID, c.InReplyTo,
		actor.ID, c.Path, c.spot.Line, c.spot.Side, c.spot.Position, c.CommitID, c.Hunk, c.Body, now).Scan(&id); err != nil {
		return nil, store.Normalize(err)
	}
	return commentByID(ctx, tx, p.Repo, id)
}

// submitted emits a submitted review's events, drops the reviewer's
// review request and touches the pull request.
func (s *Service) submitted(ctx context.Context, tx *store.Tx, p *PullRequest, actor *accounts.Account, r *Review, comments []*ReviewComment) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM pull_request_review_requests WHERE pull_request_id = $1 AND user_id = $2`, p.ID, actor.ID); err != nil {
		return store.Normalize(err)
	}
	if err := touch(ctx, tx, p); err != nil {
		return err
	}
	p, err := byNumber(ctx, tx, p.Repo, p.Number())
	if err != nil {
		return err
	}
	for _, c := range comments {
		if err := s.emitComment(ctx, tx, p, actor, "created", c, nil); err != nil {
			return err
		}
	}
	return s.emitReview(ctx, tx, p, actor, "submitted", r, nil)
}

// SubmitReview submits the actor's pending review with the event.
func (s *Service) SubmitReview(ctx context.Context, repo *repos.Repository, actor *accounts.Account, number, id int64, event, body string) (*Review, error) {
	state, ok := reviewEvents[event]
	if !ok {
		return nil, apierr.Invalid("PullRequestReview", "event", apierr.CodeInvalid)
	}
	var out *Review
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		p, r, err := s.ownReview(ctx, tx, repo, actor, number, id)
		if err != nil {
			return err
		}
		if r.State != ReviewPending {
			return apierr.Unprocessable("Can not submit a review that is not pending")
		}
		if body == "" {
			body = r.Body
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM pull_request_review_comments WHERE review_id = $1`, r.ID).Scan(&n); err != nil {
			return store.Normalize(err)
		}
		if err := checkReview(p, actor, state, body, n); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE pull_request_reviews SET state = $1, body = $2, submitted_at = $3, updated_at = $3 WHERE id = $4`,
			state, body, tx.Now(), r.ID); err != nil {
			return store.Normalize(err)
		}
		if out, err = reviewByID(ctx, tx, p, r.ID); err != nil {
			return err
		}
		comments, err := s.reviewComments(ctx, tx, p, r.ID)
		if err != nil {
			return err
		}
		return s.submitted(ctx, tx, p, actor, out, comments)
	})
	return out, err
}

// ownReview loads the pull request and the actor's review of it (404
// for another's pending review; 403 for another's submitted one).
func (s *Service) ownReview(ctx context.Context, tx store.Q, repo *repos.Repository, actor *accounts.Account, number, id int64) (*PullRequest, *Review, error) {
	p, err := byNumber(ctx, tx, repo, number)
	if err != nil {
		return nil, nil, err
	}
	r, err := reviewByID(ctx, tx, p, id)
	if err != nil {
		return nil, nil, err
	}
	if r.User == nil || r.User.ID != actor.ID {
		if r.State == ReviewPending {
			return nil, nil, store.ErrNotFound
		}
		return nil, nil, apierr.Forbidden("Must be the author of the review.")
	}
	return p, r, nil
}

// DeletePendingReview deletes the actor's pending review with its
// comments and returns it as it was; a submitted review is a 422 (no
// event: a pending review was never shown to anyone else).
func (s *Service) DeletePendingReview(ctx context.Context, repo *repos.Repository, actor *accounts.Account, number, id int64) (*Review, error) {
	var out *Review
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		_, r, err := s.ownReview(ctx, tx, repo, actor, number, id)
		if err != nil {
			return err
		}
		if r.State != ReviewPending {
			return apierr.Unprocessable("Can not delete a non-pending pull request review")
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM pull_request_reviews WHERE id = $1`, r.ID); err != nil {
			return store.Normalize(err)
		}
		out = r
		return nil
	})
	return out, err
}

// UpdateReview changes the body of the actor's review and emits
// pull_request_review edited (changes.body.from) for a submitted one.
func (s *Service) UpdateReview(ctx context.Context, repo *repos.Repository, actor *accounts.Account, number, id int64, body string) (*Review, error) {
	var out *Review
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		p, r, err := s.ownReview(ctx, tx, repo, actor, number, id)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE pull_request_reviews SET body = $1, updated_at = $2 WHERE id = $3`, body, tx.Now(), r.ID); err != nil {
			return store.Normalize(err)
		}
		if out, err = reviewByID(ctx, tx, p, r.ID); err != nil || r.State == ReviewPending || r.Body == body {
			return err
		}
		return s.emitReview(ctx, tx, p, actor, "edited", out, map[string]any{"changes": map[string]any{"body": map[string]any{"from": r.Body}}})
	})
	return out, err
}

// DismissReview dismisses an approving or change-requesting review
// (push access, checked by the caller) with a message and emits
// pull_request_review dismissed; 422 for another state, 403 when the
// base's protection restricts dismissals to others.
func (s *Service) DismissReview(ctx context.Context, repo *repos.Repository, actor *accounts.Account, number, id int64, message string) (*Review, error) {
	var out *Review
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		p, err := byNumber(ctx, tx, repo, number)
		if err != nil {
			return err
		}
		r, err := reviewByID(ctx, tx, p, id)
		if err != nil {
			return err
		}
		if ok, err := protection.MayDismiss(ctx, tx, repo, p.BaseRef, actor); err != nil {
			return err
		} else if !ok {
			return apierr.Unprocessable("Dismissing reviews is restricted by the branch protection of %s.", p.BaseRef)
		}
		if r.State != ReviewApproved && r.State != ReviewChangesRequested {
			return apierr.Unprocessable("Can not dismiss a %s pull request review", map[string]string{ReviewPending: "pending",
				ReviewCommented: "commented", ReviewDismissed: "dismissed"}[r.State])
		}
		if _, err := tx.ExecContext(ctx, `UPDATE pull_request_reviews SET state = 'DISMISSED', updated_at = $1 WHERE id = $2`, tx.Now(), r.ID); err != nil {
			return store.Normalize(err)
		}
		if out, err = reviewByID(ctx, tx, p, r.ID); err != nil {
			return err
		}
		return s.emitReview(ctx, tx, p, actor, "dismissed", out, nil)
	})
	return out, err
}

// ReviewCommentsOf lists one review's comments.
func (s *Service) ReviewCommentsOf(ctx context.Context, p *PullRequest, reviewID int64) ([]*ReviewComment, error) {
	return s.reviewComments(ctx, s.DB, p, reviewID)
}

func (s *Service) reviewComments(ctx context.Context, q store.Q, p *PullRequest, reviewID int64) ([]*ReviewComment, error) {
	return s.comments(ctx, q, p.Repo, `c.review_id = $2`, reviewID)
}

// comments lists the repository's review comments matching where (with
// $2 the argument), oldest first, with their authors.
func (s *Service) comments(ctx context.Context, q store.Q, repo *repos.Repository, where string, arg any) ([]*ReviewComment, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+commentColumns+` FROM pull_request_review_comments c
		JOIN pull_request_reviews r ON r.id = c.review_id
		WHERE c.repository_id = $1 AND r.state <> 'PENDING' AND `+where+` ORDER BY c.id`, repo.ID, arg)
	if err != nil {
		return nil, store.Normalize(err)
	}
	out, err := store.ScanAll(rows, nil, scanComment)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(out))
	for i, c := range out {
		if c.User, c.Association, err = people(ctx, q, repo, c.userID); err != nil {
			return nil, err
		}
		ids[i] = c.ID
	}
	counts, err := reactions.CountsFor(ctx, q, reactions.ReviewComment, ids)
	for _, c := range out {
		c.Reactions = counts[c.ID]
	}
	return out, err
}

// emitReview emits pull_request_review (PullRequestReviewEvent).
func (s *Service) emitReview(ctx context.Context, tx *store.Tx, p *PullRequest, actor *accounts.Account, action string, r *Review, extra map[string]any) error {
	base := s.base(ctx)
	pj, err := newRenderer(ctx, tx, s.urls(ctx)).pull(ctx, p, true)
	if err != nil {
		return err
	}
	payload := map[string]any{"action": action, "review": toReviewJSON(base, p, r, true), "pull_request": pj}
	maps.Copy(payload, extra)
	return s.Events.Emit(ctx, tx, &events.Event{HookEvent: "pull_request_review", HookPayload: payload,
		FeedType: "PullRequestReviewEvent", FeedPayload: maps.Clone(payload), Actor: actor, Repo: p.Repo, Public: !p.Repo.Private})
}

// emitComment emits pull_request_review_comment
// (PullRequestReviewCommentEvent).
func (s *Service) emitComment(ctx context.Context, tx *store.Tx, p *PullRequest, actor *accounts.Account, action string, c *ReviewComment, extra map[string]any) error {
	base := s.base(ctx)
	pj, err := newRenderer(ctx, tx, s.urls(ctx)).pull(ctx, p, true)
	if err != nil {
		return err
	}
	payload := map[string]any{"action": action, "comment": toCommentJSON(base, p.Repo, p.Number(), c), "pull_request": pj}
	maps.Copy(payload, extra)
	return s.Events.Emit(ctx, tx, &events.Event{HookEvent: "pull_request_review_comment", HookPayload: payload,
		FeedType: "PullRequestReviewCommentEvent", FeedPayload: maps.Clone(payload), Actor: actor, Repo: p.Repo, Public: !p.Repo.Private})
}

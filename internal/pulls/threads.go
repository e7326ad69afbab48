package pulls

import (
	"context"
	"errors"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/events"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// msgUnresolved is the platform's 405 message of a merge that branch
// protection's conversation resolution refuses.
const msgUnresolved = "All comments must be resolved."

// Thread is a review thread: a submitted line comment (its Root) and
// the replies to it, oldest first, resolved or not.
type Thread struct {
	Root     *ReviewComment
	Comments []*ReviewComment // the root first
	// Resolved is set when someone resolved the thread: by whom (nil
	// when their account is gone) and when.
	Resolved   bool
	ResolvedBy *accounts.Account
	ResolvedAt time.Time
}

// ThreadNodeID is a thread's node id (GraphQL's PullRequestReviewThread.id
// and the thread's node_id in pull_request_review_thread payloads): its
// root comment's id.
func ThreadNodeID(rootID int64) string { return wire.NodeID("PRRT", rootID) }

// Threads lists the pull request's review threads in the order of their
// roots, pending reviews' comments left out.
func (s *Service) Threads(ctx context.Context, p *PullRequest) ([]*Thread, error) {
	return s.threads(ctx, s.DB, p)
}

func (s *Service) threads(ctx context.Context, q store.Q, p *PullRequest) ([]*Thread, error) {
	list, err := s.comments(ctx, q, p.Repo, `c.pull_request_id = $2`, p.ID)
	if err != nil {
		return nil, err
	}
	var out []*Thread
	byRoot := map[int64]*Thread{}
	for _, c := range list {
		root := c.ID
		if c.InReplyTo != nil {
			root = *c.InReplyTo
		}
		t := byRoot[root]
		if t == nil {
			if c.InReplyTo != nil {
				continue // the reply of a deleted root: no thread shows it
			}
			t = &Thread{Root: c}
			byRoot[root] = t
			out = append(out, t)
		}
		t.Comments = append(t.Comments, c)
	}
	if err := resolutions(ctx, q, p.ID, byRoot); err != nil {
		return nil, err
	}
	return out, nil
}

// resolutions marks the threads (by root id) that were resolved.
func resolutions(ctx context.Context, q store.Q, pullID int64, byRoot map[int64]*Thread) error {
	type row struct {
		root   int64
		user   *int64
		onDate time.Time
	}
	rows, err := q.QueryContext(ctx, `SELECT comment_id, user_id, resolved_at FROM review_thread_resolutions WHERE pull_request_id = $1`, pullID)
	list, err := store.ScanAll(rows, err, func(sc store.Scanner) (row, error) {
		var r row
		return r, sc.Scan(&r.root, &r.user, &r.onDate)
	})
	if err != nil {
		return err
	}
	for _, r := range list {
		t := byRoot[r.root]
		if t == nil {
			continue
		}
		t.Resolved, t.ResolvedAt = true, r.onDate
		if r.user != nil {
			a, err := accounts.ByID(ctx, q, *r.user)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
			t.ResolvedBy = a
		}
	}
	return nil
}

// ThreadByRoot returns the repository's review thread whose root comment
// has the id, with its pull request; store.ErrNotFound when none.
func (s *Service) ThreadByRoot(ctx context.Context, rootID int64) (*Thread, *PullRequest, error) {
	var pullID int64
	err := s.DB.QueryRowContext(ctx, `SELECT c.pull_request_id FROM pull_request_review_comments c
		JOIN pull_request_reviews r ON r.id = c.review_id
		WHERE c.id = $1 AND c.in_reply_to_id IS NULL AND r.state <> 'PENDING'`, rootID).Scan(&pullID)
	if err != nil {
		return nil, nil, store.Normalize(err)
	}
	p, err := s.ByNodeID(ctx, wire.NodeID("PR", pullID))
	if err != nil {
		return nil, nil, err
	}
	t, err := s.threadOf(ctx, s.DB, p, rootID)
	return t, p, err
}

// threadOf is the pull request's thread of the root comment.
func (s *Service) threadOf(ctx context.Context, q store.Q, p *PullRequest, rootID int64) (*Thread, error) {
	list, err := s.threads(ctx, q, p)
	if err != nil {
		return nil, err
	}
	for _, t := range list {
		if t.Root.ID == rootID {
			return t, nil
		}
	}
	return nil, store.ErrNotFound
}

// MayResolve reports whether the actor may resolve and unresolve the
// pull request's threads: with push access (mayPush) or as its author,
// as on the platform.
func MayResolve(p *PullRequest, actor *accounts.Account, mayPush bool) bool {
	return mayPush || actor != nil && p.Issue.User != nil && p.Issue.User.ID == actor.ID
}

// ResolveThread resolves (resolve true) or unresolves the pull request's
// thread of the root comment as the actor, and emits
// pull_request_review_thread resolved or unresolved in the same
// transaction; a thread already so is answered as it is, without an
// event. 403 when the actor may not (MayResolve); store.ErrNotFound when
// the thread is not the pull request's.
func (s *Service) ResolveThread(ctx context.Context, p *PullRequest, actor *accounts.Account, rootID int64, resolve, mayPush bool) (*Thread, error) {
	if !MayResolve(p, actor, mayPush) {
		return nil, apierr.Forbidden("Must have push access to repository.")
	}
	var out *Thread
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		t, err := s.threadOf(ctx, tx, p, rootID)
		if err != nil {
			return err
		}
		if t.Resolved == resolve {
			out = t
			return nil
		}
		action := "resolved"
		if resolve {
			_, err = tx.ExecContext(ctx, `INSERT INTO review_thread_resolutions (comment_id, pull_request_id, user_id, resolved_at)
				VALUES ($1, $2, $3, $4)`, rootID, p.ID, actor.ID, tx.Now())
		} else {
			action = "unresolved"
			_, err = tx.ExecContext(ctx, `DELETE FROM review_thread_resolutions WHERE comment_id = $1`, rootID)
		}
		if err != nil {
			return store.Normalize(err)
		}
		if out, err = s.threadOf(ctx, tx, p, rootID); err != nil {
			return err
		}
		return s.emitThread(ctx, tx, p, actor, action, out)
	})
	return out, err
}

// emitThread emits pull_request_review_thread (no feed event: the
// platform's feeds have none).
func (s *Service) emitThread(ctx context.Context, tx *store.Tx, p *PullRequest, actor *accounts.Account, action string, t *Thread) error {
	base := s.base(ctx)
	pj, err := newRenderer(ctx, tx, s.urls(ctx)).pull(ctx, p, true)
	if err != nil {
		return err
	}
	comments := make([]commentJSON, len(t.Comments))
	for i, c := range t.Comments {
		comments[i] = toCommentJSON(base, p.Repo, p.Number(), c)
	}
	payload := map[string]any{"action": action, "pull_request": pj,
		"thread": map[string]any{"node_id": ThreadNodeID(t.Root.ID), "comments": comments}}
	return s.Events.Emit(ctx, tx, &events.Event{HookEvent: "pull_request_review_thread", HookPayload: payload,
		Actor: actor, Repo: p.Repo})
}

// unresolvedThreads counts the pull request's submitted threads that no
// one resolved.
func unresolvedThreads(ctx context.Context, q store.Q, repo *repos.Repository, pullID int64) (int, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM pull_request_review_comments c
		JOIN pull_request_reviews r ON r.id = c.review_id
		WHERE c.repository_id = $1 AND c.pull_request_id = $2 AND c.in_reply_to_id IS NULL AND r.state <> 'PENDING'
		AND NOT EXISTS (SELECT 1 FROM review_thread_resolutions t WHERE t.comment_id = c.id)`, repo.ID, pullID).Scan(&n)
	return n, store.Normalize(err)
}

// CommentByID returns the submitted review comment of the id with its
// pull request; store.ErrNotFound when none.
func (s *Service) CommentByID(ctx context.Context, id int64) (*ReviewComment, *PullRequest, error) {
	var pullID int64
	err := s.DB.QueryRowContext(ctx, `SELECT c.pull_request_id FROM pull_request_review_comments c
		JOIN pull_request_reviews r ON r.id = c.review_id WHERE c.id = $1 AND r.state <> 'PENDING'`, id).Scan(&pullID)
	if err != nil {
		return nil, nil, store.Normalize(err)
	}
	p, err := s.ByNodeID(ctx, wire.NodeID("PR", pullID))
	if err != nil {
		return nil, nil, err
	}
	c, err := commentByID(ctx, s.DB, p.Repo, id)
	return c, p, err
}

// Package notifications keeps the notification threads of the
// notifications API: one per user and issue or pull request, made and
// bumped by real activity in the change's own transaction (Sink: opening,
// commenting, reviewing, assigning, requesting a review, closing and
// reopening, mentioning), for the users taking part in the conversation
// and those watching the repository, never the one who acted. Threads
// are read, marked read and done, and subscribed to or ignored through
// the routes of routes.go; a user who can no longer read a repository
// sees none of its threads.
package notifications

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"time"

	"forgeapi/internal/access"
	"forgeapi/internal/accounts"
	"forgeapi/internal/auth"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// Subject types.
const (
	SubjectIssue       = "Issue"
	SubjectPullRequest = "PullRequest"
)

// Thread is one user's notification thread about an issue or pull
// request.
type Thread struct {
	ID               int64
	UserID           int64
	Repo             *repos.Repository
	SubjectType      string
	Number           int64
	Title            string
	LatestCommentURL string // "" when none
	Reason           string
	Unread           bool
	Subscribed       bool
	Ignored          bool
	LastReadAt       *time.Time
	UpdatedAt        time.Time
	CreatedAt        time.Time
}

// Service reads and changes threads.
type Service struct {
	DB *store.DB
}

// Filter selects the threads of a list.
type Filter struct {
	All           bool  // read threads too
	Participating bool  // only those the user takes part in
	RepoID        int64 // one repository's, 0 for all
	Since, Before time.Time
}

// participating are the reasons of a user who takes part in a
// conversation (not only watching the repository).
var participating = `('author', 'comment', 'mention', 'assign', 'review_requested', 'state_change', 'manual')`

const threadColumns = `id, user_id, repository_id, subject_type, number, title, latest_comment_url, reason, unread,
	subscribed, ignored, last_read_at, updated_at, created_at`

// List returns a page of user's threads that are not done, most recently
// updated first, of the repositories user may still read, and whether
// more follow; latest is when the newest of those threads was updated
// (zero when none).
func (s *Service) List(ctx context.Context, user *accounts.Account, f Filter, limit, offset int) (list []*Thread, more bool, latest time.Time, err error) {
	readable, err := s.readableRepos(ctx, user, f.RepoID)
	if err != nil || len(readable) == 0 {
		return []*Thread{}, false, time.Time{}, err
	}
	ids := make([]any, 0, len(readable))
	for id := range readable {
		ids = append(ids, id)
	}
	args := append([]any{user.ID}, ids...)
	where := `user_id = $1 AND NOT done AND repository_id IN ` + store.In(2, len(ids))
	if !f.All {
		where += ` AND unread`
	}
	if f.Participating {
		where += ` AND reason IN ` + participating
	}
	if !f.Since.IsZero() {
		args = append(args, f.Since)
		where += ` AND updated_at >= $` + strconv.Itoa(len(args))
	}
	if !f.Before.IsZero() {
		args = append(args, f.Before)
		where += ` AND updated_at < $` + strconv.Itoa(len(args))
	}
	err = s.DB.QueryRowContext(ctx, store.Dynamic+`SELECT updated_at FROM notification_threads WHERE `+where+
		` ORDER BY updated_at DESC LIMIT 1`, args...).Scan(&latest)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, false, time.Time{}, store.Normalize(err)
	}
	n := len(args)
	rows, err := s.DB.QueryContext(ctx, store.Dynamic+`SELECT `+threadColumns+` FROM notification_threads WHERE `+where+
		` ORDER BY updated_at DESC, id DESC LIMIT $`+strconv.Itoa(n+1)+` OFFSET $`+strconv.Itoa(n+2), append(args, limit+1, offset)...)
	list, err = store.ScanAll(rows, err, func(sc store.Scanner) (*Thread, error) { return scanThread(sc, readable) })
	if err != nil {
		return nil, false, time.Time{}, err
	}
	if more = len(list) > limit; more {
		list = list[:limit]
	}
	return list, more, latest, nil
}

// readableRepos are the repositories of user's threads (only repoID's
// when not 0) that user may read now, by id.
func (s *Service) readableRepos(ctx context.Context, user *accounts.Account, repoID int64) (map[int64]*repos.Repository, error) {
	rows, err := s.DB.QueryContext(ctx, `SELECT DISTINCT repository_id FROM notification_threads WHERE user_id = $1`, user.ID)
	ids, err := store.ScanAll(rows, err, func(sc store.Scanner) (id int64, err error) { return id, sc.Scan(&id) })
	if err != nil {
		return nil, err
	}
	out := map[int64]*repos.Repository{}
	for _, id := range ids {
		if repoID != 0 && id != repoID {
			continue
		}
		repo, err := repos.ByID(ctx, s.DB, id)
		if err != nil {
			return nil, err
		}
		if ok, err := mayRead(ctx, s.DB, user, repo); err != nil {
			return nil, err
		} else if ok {
			out[id] = repo
		}
	}
	return out, nil
}

// mayRead reports whether user may read repo by their own standing.
func mayRead(ctx context.Context, q store.Q, user *accounts.Account, repo *repos.Repository) (bool, error) {
	role, err := access.UserRepoRole(ctx, q, user, repo)
	return role >= auth.RoleRead, err
}

func scanThread(sc store.Scanner, readable map[int64]*repos.Repository) (*Thread, error) {
	t := &Thread{}
	var repoID int64
	var latest *string
	err := sc.Scan(&t.ID, &t.UserID, &repoID, &t.SubjectType, &t.Number, &t.Title, &latest, &t.Reason, &t.Unread,
		&t.Subscribed, &t.Ignored, &t.LastReadAt, &t.UpdatedAt, &t.CreatedAt)
	if latest != nil {
		t.LatestCommentURL = *latest
	}
	t.Repo = readable[repoID]
	return t, err
}

// Get returns user's thread id; store.ErrNotFound when user has none of
// that id or may no longer read its repository.
func (s *Service) Get(ctx context.Context, user *accounts.Account, id int64) (*Thread, error) {
	var repoID int64
	err := s.DB.QueryRowContext(ctx, `SELECT repository_id FROM notification_threads WHERE id = $1 AND user_id = $2`, id, user.ID).Scan(&repoID)
	if err != nil {
		return nil, store.Normalize(err)
	}
	readable, err := s.readableRepos(ctx, user, repoID)
	if err != nil {
		return nil, err
	}
	if readable[repoID] == nil {
		return nil, store.ErrNotFound
	}
	return scanThread(s.DB.QueryRowContext(ctx, `SELECT `+threadColumns+` FROM notification_threads WHERE id = $1`, id), readable)
}

// MarkRead marks user's threads updated at or before lastReadAt read (of
// one repository when repoID is not 0), or unread when read is false.
func (s *Service) MarkRead(ctx context.Context, user *accounts.Account, repoID int64, lastReadAt time.Time, read bool) error {
	args := []any{!read, lastReadAt, user.ID}
	where := `user_id = $3 AND updated_at <= $2`
	if repoID != 0 {
		args = append(args, repoID)
		where += ` AND repository_id = $4`
	}
	_, err := s.DB.ExecContext(ctx, store.Dynamic+`UPDATE notification_threads SET unread = $1, last_read_at = $2 WHERE `+where, args...)
	return store.Normalize(err)
}

// MarkThreadRead marks user's thread id read.
func (s *Service) MarkThreadRead(ctx context.Context, user *accounts.Account, id int64) error {
	return s.update(ctx, user, id, `unread = FALSE, last_read_at = $3`, store.Now())
}

// MarkThreadDone marks user's thread id done: it leaves the lists until
// new activity brings it back.
func (s *Service) MarkThreadDone(ctx context.Context, user *accounts.Account, id int64) error {
	return s.update(ctx, user, id, `done = TRUE, unread = FALSE, last_read_at = $3`, store.Now())
}

// Subscribe sets user's subscription to thread id: ignored threads get no
// more updates; a subscription deleted (subscribed false) gets updates
// only for what names the user (a mention, an assignment, a review
// request).
func (s *Service) Subscribe(ctx context.Context, user *accounts.Account, id int64, subscribed, ignored bool) error {
	return s.update(ctx, user, id, `subscribed = $3, ignored = $4`, subscribed, ignored)
}

// update changes user's thread id with set ($1 and $2 are the thread and
// the user; args follow).
func (s *Service) update(ctx context.Context, user *accounts.Account, id int64, set string, args ...any) error {
	if _, err := s.Get(ctx, user, id); err != nil {
		return err
	}
	_, err := s.DB.ExecContext(ctx, `UPDATE notification_threads SET `+set+` WHERE id = $1 AND user_id = $2`,
		append([]any{id, user.ID}, args...)...)
	return store.Normalize(err)
}

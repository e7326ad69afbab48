package notifications

import (
	"context"
	"encoding/json"
	"errors"

	"forgeapi/internal/accounts"
	"forgeapi/internal/events"
	"forgeapi/internal/markdown"
	"forgeapi/internal/store"
)

// Sink makes and bumps threads from the events of issues, pull requests,
// their comments and reviews, in the event's transaction.
type Sink struct{}

// activity is what an event says about a conversation.
type activity struct {
	subjectType string
	number      int64
	title       string
	latestURL   string
	// joins are the users who join the conversation with their reason
	// (the author, a commenter, the one who changed its state).
	joins map[int64]string
	// named are the users the event names, with the reason their thread
	// carries now (mention, assign, review_requested).
	named map[int64]string
}

// payload is the part of an issues, issue_comment, pull_request,
// pull_request_review or pull_request_review_comment payload a thread
// needs.
type payload struct {
	Action            string   `json:"action"`
	Issue             *subject `json:"issue"`
	PullRequest       *subject `json:"pull_request"`
	Comment           *text    `json:"comment"`
	Review            *text    `json:"review"`
	Assignee          *person  `json:"assignee"`
	RequestedReviewer *person  `json:"requested_reviewer"`
}

type subject struct {
	Number      int64     `json:"number"`
	Title       string    `json:"title"`
	Body        *string   `json:"body"`
	URL         string    `json:"url"`
	User        *person   `json:"user"`
	PullRequest *struct{} `json:"pull_request"`
}

type text struct {
	Body *string `json:"body"`
	URL  string  `json:"url"`
}

type person struct {
	ID int64 `json:"id"`
}

// HandleEvent records the activity of the events that make threads and
// ignores the others.
func (Sink) HandleEvent(ctx context.Context, tx *store.Tx, e *events.Event) error {
	if e.Repo == nil || e.Actor == nil {
		return nil
	}
	switch e.HookEvent {
	case "issues", "issue_comment", "pull_request", "pull_request_review", "pull_request_review_comment":
	default:
		return nil
	}
	raw, err := json.Marshal(e.HookPayload)
	if err != nil {
		return err
	}
	var p payload
	if err := json.Unmarshal(raw, &p); err != nil {
		return err
	}
	a, ok, err := activityOf(ctx, tx, e, &p)
	if err != nil || !ok {
		return err
	}
	return record(ctx, tx, e, a)
}

// activityOf reads the event's activity; ok is false for an action that
// notifies no one (an edit, a label, a push to a pull request).
func activityOf(ctx context.Context, tx *store.Tx, e *events.Event, p *payload) (activity, bool, error) {
	s := p.Issue
	a := activity{subjectType: SubjectIssue, joins: map[int64]string{}, named: map[int64]string{}}
	if p.PullRequest != nil {
		s, a.subjectType = p.PullRequest, SubjectPullRequest
	} else if s != nil && s.PullRequest != nil {
		a.subjectType = SubjectPullRequest
	}
	if s == nil {
		return a, false, nil
	}
	a.number, a.title, a.latestURL = s.Number, s.Title, s.URL
	var body *string
	switch e.HookEvent + "." + p.Action {
	case "issues.opened", "pull_request.opened":
		a.joins[e.Actor.ID], body = "author", s.Body
	case "issues.closed", "issues.reopened", "pull_request.closed", "pull_request.reopened":
		a.joins[e.Actor.ID] = "state_change"
	case "issues.assigned", "pull_request.assigned":
		if p.Assignee == nil {
			return a, false, nil
		}
		a.named[p.Assignee.ID] = "assign"
	case "pull_request.review_requested":
		if p.RequestedReviewer == nil {
			return a, false, nil
		}
		a.named[p.RequestedReviewer.ID] = "review_requested"
	case "issue_comment.created", "pull_request_review_comment.created":
		if p.Comment == nil {
			return a, false, nil
		}
		a.joins[e.Actor.ID], body, a.latestURL = "comment", p.Comment.Body, p.Comment.URL
	case "pull_request_review.submitted":
		a.joins[e.Actor.ID] = "comment"
		if p.Review != nil {
			body = p.Review.Body
		}
	default:
		return a, false, nil
	}
	if s.User != nil && a.joins[s.User.ID] == "" && s.User.ID != e.Actor.ID {
		a.joins[s.User.ID] = "author"
	}
	return a, true, mentioned(ctx, tx, body, a.named)
}

// mentioned adds the accounts body mentions to named.
func mentioned(ctx context.Context, q store.Q, body *string, named map[int64]string) error {
	if body == nil || *body == "" {
		return nil
	}
	logins, err := markdown.Mentions([]byte(*body))
	if err != nil {
		return err
	}
	for _, login := range logins {
		a, err := accounts.ByLogin(ctx, q, login)
		if errors.Is(err, store.ErrNotFound) {
			continue
		} else if err != nil {
			return err
		}
		if _, ok := named[a.ID]; !ok && !a.IsOrg() {
			named[a.ID] = "mention"
		}
	}
	return nil
}

// record adds the activity's participants and bumps the threads of
// everyone who takes part or watches the repository, except the actor
// and whoever may not read the repository.
func record(ctx context.Context, tx *store.Tx, e *events.Event, a activity) error {
	for id, reason := range a.joins {
		if err := join(ctx, tx, e.Repo.ID, a.number, id, reason); err != nil {
			return err
		}
	}
	for id, reason := range a.named {
		if err := join(ctx, tx, e.Repo.ID, a.number, id, reason); err != nil {
			return err
		}
	}
	recipients, err := recipientsOf(ctx, tx, e.Repo.ID, a.number)
	if err != nil {
		return err
	}
	for id, reason := range a.named {
		recipients[id] = reason
	}
	delete(recipients, e.Actor.ID)
	ids := make([]int64, 0, len(recipients))
	for id := range recipients {
		ids = append(ids, id)
	}
	users, err := accounts.ByIDs(ctx, tx, ids)
	if err != nil {
		return err
	}
	for id, reason := range recipients {
		user := users[id]
		if user == nil {
			continue // the account is gone
		}
		if ok, err := mayRead(ctx, tx, user, e.Repo); err != nil {
			return err
		} else if !ok {
			continue
		}
		_, named := a.named[id]
		if err := bump(ctx, tx, e, a, id, reason, named); err != nil {
			return err
		}
	}
	return nil
}

// join adds a participant of the conversation; one already there keeps
// the reason they joined with.
func join(ctx context.Context, tx *store.Tx, repoID, number, userID int64, reason string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO notification_participants (repository_id, number, user_id, reason)
		VALUES ($1, $2, $3, $4) ON CONFLICT (repository_id, number, user_id) DO NOTHING`, repoID, number, userID, reason)
	return store.Normalize(err)
}

// recipientsOf are the conversation's participants with their reasons
// and the repository's watchers ("subscribed").
func recipientsOf(ctx context.Context, tx *store.Tx, repoID, number int64) (map[int64]string, error) {
	out := map[int64]string{}
	type row struct {
		id     int64
		reason string
	}
	rows, err := tx.QueryContext(ctx, `SELECT user_id, 'subscribed' FROM subscriptions WHERE repository_id = $1 AND NOT ignored
		UNION ALL SELECT user_id, reason FROM notification_participants WHERE repository_id = $1 AND number = $2`, repoID, number)
	list, err := store.ScanAll(rows, err, func(sc store.Scanner) (r row, err error) { return r, sc.Scan(&r.id, &r.reason) })
	for _, r := range list {
		if out[r.id] == "" || out[r.id] == "subscribed" {
			out[r.id] = r.reason
		}
	}
	return out, err
}

// bump makes or bumps user's thread: unread, not done, with the reason.
// An ignored thread stays as it is; so does one the user unsubscribed
// from, unless the event names them.
func bump(ctx context.Context, tx *store.Tx, e *events.Event, a activity, userID int64, reason string, named bool) error {
	var latest *string
	if a.latestURL != "" {
		latest = &a.latestURL
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO notification_threads (user_id, repository_id, subject_type, number, title,
			latest_comment_url, reason, unread, updated_at, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, TRUE, $8, $8)
		ON CONFLICT (user_id, repository_id, number) DO UPDATE SET title = excluded.title,
			latest_comment_url = excluded.latest_comment_url, reason = excluded.reason, unread = TRUE, done = FALSE,
			subject_type = excluded.subject_type, updated_at = excluded.updated_at
		WHERE NOT notification_threads.ignored AND (notification_threads.subscribed OR $9)`,
		userID, e.Repo.ID, a.subjectType, a.number, a.title, latest, reason, e.CreatedAt, named)
	return store.Normalize(err)
}

package issues

import (
	"context"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// Event is one entry of an issue's event history (the platform's
// issue-event): a label, assignee, milestone, title, state or lock
// change, kept as it was when it happened.
type Event struct {
	ID, RepoID, IssueID int64
	IssueNumber         int64
	Actor               *accounts.Account
	// Event is the platform's name: labeled, unlabeled, assigned,
	// unassigned, milestoned, demilestoned, renamed, closed, reopened,
	// locked, unlocked.
	Event                 string
	LabelName, LabelColor string
	Assignee              *accounts.Account
	MilestoneTitle        string
	RenameFrom, RenameTo  string
	LockReason            string
	StateReason           string
	CommitID              string
	CreatedAt             time.Time
	actorID, assigneeID   *int64
	issue                 *Issue // set when listed for the repository
}

// EventRecord is what one change writes into an issue's history.
type EventRecord struct {
	Event                 string
	LabelName, LabelColor string
	AssigneeID            *int64
	MilestoneTitle        string
	RenameFrom, RenameTo  string
	LockReason            string
	StateReason           string
	CommitID              string
}

// RecordEvent writes one event of the issue (or pull request) by actor
// in tx, the transaction of the change it records.
func RecordEvent(ctx context.Context, tx store.Q, is *Issue, actor *accounts.Account, r EventRecord) error {
	var actorID *int64
	if actor != nil {
		actorID = &actor.ID
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO issue_events (repository_id, issue_id, actor_id, event, label_name, label_color,
		assignee_id, milestone_title, rename_from, rename_to, lock_reason, state_reason, commit_id, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
		is.RepoID, is.ID, actorID, r.Event, r.LabelName, r.LabelColor, r.AssigneeID, r.MilestoneTitle,
		r.RenameFrom, r.RenameTo, r.LockReason, r.StateReason, r.CommitID, store.Now())
	return store.Normalize(err)
}

// recordFor is the history entry of an issues webhook action, if the
// platform keeps one for it: opened, edited without a new title and
// deleted leave none.
func recordFor(action string, is *Issue, extra map[string]any) (EventRecord, bool) {
	r := EventRecord{Event: action}
	switch action {
	case "labeled", "unlabeled":
		lb, ok := extra["label"].(labelJSON)
		r.LabelName, r.LabelColor = lb.Name, lb.Color
		return r, ok
	case "assigned", "unassigned":
		a, ok := extra["assignee"].(accounts.SimpleUser)
		r.AssigneeID = &a.ID
		return r, ok
	case "milestoned", "demilestoned":
		m, ok := extra["milestone"].(milestoneJSON)
		r.MilestoneTitle = m.Title
		return r, ok
	case "closed", "reopened":
		r.StateReason = is.StateReason
		return r, true
	case "locked":
		r.LockReason = is.LockReason
		return r, true
	case "unlocked":
		return r, true
	case "edited":
		changes, _ := extra["changes"].(map[string]any)
		title, ok := changes["title"].(map[string]any)
		if !ok {
			return r, false
		}
		from, _ := title["from"].(string)
		return EventRecord{Event: "renamed", RenameFrom: from, RenameTo: is.Title}, true
	}
	return r, false
}

const eventColumns = `e.id, e.repository_id, e.issue_id, i.number, e.actor_id, e.event, e.label_name, e.label_color,
	e.assignee_id, e.milestone_title, e.rename_from, e.rename_to, e.lock_reason, e.state_reason, e.commit_id, e.created_at`

func scanEvent(s scanner) (*Event, error) {
	e := &Event{}
	err := s.Scan(&e.ID, &e.RepoID, &e.IssueID, &e.IssueNumber, &e.actorID, &e.Event, &e.LabelName, &e.LabelColor,
		&e.assigneeID, &e.MilestoneTitle, &e.RenameFrom, &e.RenameTo, &e.LockReason, &e.StateReason, &e.CommitID, &e.CreatedAt)
	return e, err
}

// IssueEvents lists an issue's events oldest first, with one more than
// limit when more follow; store.ErrNotFound when there is no issue.
func (s *Service) IssueEvents(ctx context.Context, repo *repos.Repository, number int64, limit, offset int) ([]*Event, error) {
	is, err := issueByNumber(ctx, s.DB, repo, number)
	if err != nil {
		return nil, err
	}
	list, err := collect(scanEvent)(s.DB.QueryContext(ctx, `SELECT `+eventColumns+` FROM issue_events e
		JOIN issues i ON i.id = e.issue_id WHERE e.issue_id = $1 ORDER BY e.id LIMIT $2 OFFSET $3`, is.ID, limit+1, offset))
	if err != nil {
		return nil, err
	}
	return list, newLoader(s.DB, repo).events(ctx, list, false)
}

// RepoEvents lists the events of all the repository's issues, newest
// first as the platform does, each with its issue, with one more than
// limit when more follow.
func (s *Service) RepoEvents(ctx context.Context, repo *repos.Repository, limit, offset int) ([]*Event, error) {
	list, err := collect(scanEvent)(s.DB.QueryContext(ctx, `SELECT `+eventColumns+` FROM issue_events e
		JOIN issues i ON i.id = e.issue_id WHERE e.repository_id = $1 ORDER BY e.id DESC LIMIT $2 OFFSET $3`, repo.ID, limit+1, offset))
	if err != nil {
		return nil, err
	}
	return list, newLoader(s.DB, repo).events(ctx, list, true)
}

// RepoEvent returns one event of the repository's issues, with its
// issue; store.ErrNotFound when none.
func (s *Service) RepoEvent(ctx context.Context, repo *repos.Repository, id int64) (*Event, error) {
	e, err := scanEvent(s.DB.QueryRowContext(ctx, `SELECT `+eventColumns+` FROM issue_events e
		JOIN issues i ON i.id = e.issue_id WHERE e.repository_id = $1 AND e.id = $2`, repo.ID, id))
	if err != nil {
		return nil, store.Normalize(err)
	}
	return e, newLoader(s.DB, repo).events(ctx, []*Event{e}, true)
}

// TimelineItem is one entry of an issue's timeline: an event or a
// comment.
type TimelineItem struct {
	Event   *Event
	Comment *Comment
}

// Timeline lists an issue's events and comments in the order they
// happened, with one more than limit when more follow; store.ErrNotFound
// when there is no issue.
func (s *Service) Timeline(ctx context.Context, repo *repos.Repository, number int64, limit, offset int) ([]TimelineItem, error) {
	is, err := issueByNumber(ctx, s.DB, repo, number)
	if err != nil {
		return nil, err
	}
	rows, err := s.DB.QueryContext(ctx, `SELECT kind, id FROM (
			SELECT 'e' AS kind, id, created_at FROM issue_events WHERE issue_id = $1
			UNION ALL SELECT 'c' AS kind, id, created_at FROM issue_comments WHERE issue_id = $1) t
		ORDER BY created_at, kind DESC, id LIMIT $2 OFFSET $3`, is.ID, limit+1, offset)
	refs, err := store.ScanAll(rows, err, func(s scanner) (timelineRef, error) {
		var r timelineRef
		return r, s.Scan(&r.kind, &r.id)
	})
	if err != nil {
		return nil, err
	}
	return s.timelineItems(ctx, repo, is.ID, refs)
}

// timelineRef is one timeline entry in order: kind "e" (an event) or "c"
// (a comment), and its id.
type timelineRef struct {
	kind string
	id   int64
}

// timelineItems loads the timeline's events and comments by id, in the
// order of refs.
func (s *Service) timelineItems(ctx context.Context, repo *repos.Repository, issueID int64, refs []timelineRef) ([]TimelineItem, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	first, last := timelineSpan(refs)
	evs, err := collect(scanEvent)(s.DB.QueryContext(ctx, `SELECT `+eventColumns+` FROM issue_events e
		JOIN issues i ON i.id = e.issue_id WHERE e.issue_id = $1 AND e.id BETWEEN $2 AND $3`, issueID, first['e'], last['e']))
	if err != nil {
		return nil, err
	}
	cs, err := collect(scanComment)(s.DB.QueryContext(ctx, `SELECT `+commentColumns+` FROM issue_comments c
		JOIN issues i ON i.id = c.issue_id WHERE c.issue_id = $1 AND c.id BETWEEN $2 AND $3`, issueID, first['c'], last['c']))
	if err != nil {
		return nil, err
	}
	l := newLoader(s.DB, repo)
	if err := l.events(ctx, evs, false); err != nil {
		return nil, err
	}
	if err := l.comments(ctx, cs); err != nil {
		return nil, err
	}
	events, comments := byID(evs, func(e *Event) int64 { return e.ID }), byID(cs, func(c *Comment) int64 { return c.ID })
	out := make([]TimelineItem, 0, len(refs))
	for _, r := range refs {
		if e, ok := events[r.id]; ok && r.kind == "e" {
			out = append(out, TimelineItem{Event: e})
		} else if c, ok := comments[r.id]; ok && r.kind == "c" {
			out = append(out, TimelineItem{Comment: c})
		}
	}
	return out, nil
}

// timelineSpan is the smallest and largest id of each kind in refs (0
// and -1 for a kind that has none, so that BETWEEN matches nothing).
func timelineSpan(refs []timelineRef) (first, last map[byte]int64) {
	first, last = map[byte]int64{'e': 0, 'c': 0}, map[byte]int64{'e': -1, 'c': -1}
	for _, r := range refs {
		k := r.kind[0]
		if last[k] < 0 || r.id < first[k] {
			first[k] = r.id
		}
		if r.id > last[k] {
			last[k] = r.id
		}
	}
	return first, last
}

func byID[T any](list []T, id func(T) int64) map[int64]T {
	m := make(map[int64]T, len(list))
	for _, v := range list {
		m[id(v)] = v
	}
	return m
}

// events loads the events' people and, when withIssue, their issues.
func (l *loader) events(ctx context.Context, list []*Event, withIssue bool) error {
	issues := map[int64]*Issue{}
	for _, e := range list {
		var err error
		if e.Actor, err = l.account(ctx, e.actorID); err != nil {
			return err
		}
		if e.Assignee, err = l.account(ctx, e.assigneeID); err != nil {
			return err
		}
		if !withIssue {
			continue
		}
		if e.issue = issues[e.IssueID]; e.issue == nil {
			if e.issue, err = issueByNumber(ctx, l.q, l.repo, e.IssueNumber); err != nil {
				return err
			}
			issues[e.IssueID] = e.issue
		}
	}
	return nil
}

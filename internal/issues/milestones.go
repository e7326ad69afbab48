package issues

import (
	"context"
	"errors"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/events"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// MilestoneChanges is what creating or updating a milestone sets; nil
// fields are left (ClearDueOn removes the due date).
type MilestoneChanges struct {
	Title, Description, State *string
	DueOn                     *time.Time
	ClearDueOn                bool
}

// Milestones lists the repository's milestones in a state (open,
// closed, all), by due_on or completeness, asc or desc.
func (s *Service) Milestones(ctx context.Context, repo *repos.Repository, state, sort, direction string, limit, offset int) ([]*Milestone, error) {
	order := `m.due_on IS NULL, m.due_on, m.number`
	if sort == "completeness" {
		order = `(SELECT count(*) FROM issues x WHERE x.milestone_id = m.id AND x.state = 'closed') * 1.0 /
			(1 + (SELECT count(*) FROM issues x WHERE x.milestone_id = m.id)), m.number`
	}
	if direction == "desc" {
		order = `m.due_on IS NOT NULL, m.due_on DESC, m.number DESC`
		if sort == "completeness" {
			order = `(SELECT count(*) FROM issues x WHERE x.milestone_id = m.id AND x.state = 'closed') * 1.0 /
			(1 + (SELECT count(*) FROM issues x WHERE x.milestone_id = m.id)) DESC, m.number DESC`
		}
	}
	list, err := collect(scanMilestone)(s.DB.QueryContext(ctx, `SELECT `+milestoneColumns+` FROM milestones m WHERE m.repository_id = $1
		AND ($2 = 'all' OR m.state = $2) ORDER BY `+order+` LIMIT $3 OFFSET $4`, repo.ID, state, limit, offset))
	if err != nil {
		return nil, err
	}
	l := newLoader(s.DB, repo)
	for _, m := range list {
		if err := l.completeMilestone(ctx, m); err != nil {
			return nil, err
		}
	}
	return list, nil
}

// Milestone returns the repository's milestone.
func (s *Service) Milestone(ctx context.Context, repo *repos.Repository, number int64) (*Milestone, error) {
	return milestoneByNumber(ctx, s.DB, repo, number)
}

// CreateMilestone adds a milestone with the repository's next milestone
// number (a taken title is a 422 already_exists) and emits milestone
// created.
func (s *Service) CreateMilestone(ctx context.Context, repo *repos.Repository, actor *accounts.Account, c MilestoneChanges) (*Milestone, error) {
	var out *Milestone
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		number, err := nextNumber(ctx, tx, repo.ID, true)
		if err != nil {
			return err
		}
		m := Milestone{State: StateOpen}
		applyMilestone(&m, c)
		now := tx.Now()
		_, err = tx.ExecContext(ctx, `INSERT INTO milestones (repository_id, number, title, description, state, due_on, creator_id, created_at, updated_at, closed_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $9)`, repo.ID, number, m.Title, m.Description, m.State, m.DueOn, actor.ID, now, closedAt(m.State, now))
		if err = store.Normalize(err); errors.Is(err, store.ErrConflict) {
			return apierr.Invalid("Milestone", "title", apierr.CodeAlreadyExists)
		} else if err != nil {
			return err
		}
		if out, err = milestoneByNumber(ctx, tx, repo, number); err != nil {
			return err
		}
		return s.emitMilestone(ctx, tx, repo, actor, "created", out, nil)
	})
	return out, err
}

func applyMilestone(m *Milestone, c MilestoneChanges) {
	if c.Title != nil {
		m.Title = *c.Title
	}
	if c.Description != nil {
		m.Description = *c.Description
	}
	if c.State != nil {
		m.State = *c.State
	}
	if c.DueOn != nil {
		m.DueOn = c.DueOn
	}
	if c.ClearDueOn {
		m.DueOn = nil
	}
}

func closedAt(state string, now time.Time) *time.Time {
	if state == StateClosed {
		return &now
	}
	return nil
}

// UpdateMilestone changes a milestone and emits milestone edited (title,
// description, due_on, with what they were) and closed or opened.
func (s *Service) UpdateMilestone(ctx context.Context, repo *repos.Repository, actor *accounts.Account, number int64, c MilestoneChanges) (*Milestone, error) {
	var out *Milestone
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		before, err := milestoneByNumber(ctx, tx, repo, number)
		if err != nil {
			return err
		}
		after := *before
		applyMilestone(&after, c)
		now := tx.Now()
		closed := after.ClosedAt
		if after.State != before.State {
			closed = closedAt(after.State, now)
		}
		_, err = tx.ExecContext(ctx, `UPDATE milestones SET title = $1, description = $2, state = $3, due_on = $4, closed_at = $5, updated_at = $6
			WHERE id = $7`, after.Title, after.Description, after.State, after.DueOn, closed, now, before.ID)
		if err = store.Normalize(err); errors.Is(err, store.ErrConflict) {
			return apierr.Invalid("Milestone", "title", apierr.CodeAlreadyExists)
		} else if err != nil {
			return err
		}
		if out, err = milestoneByNumber(ctx, tx, repo, number); err != nil {
			return err
		}
		return s.emitMilestoneChanges(ctx, tx, repo, actor, before, out)
	})
	return out, err
}

func (s *Service) emitMilestoneChanges(ctx context.Context, tx *store.Tx, repo *repos.Repository, actor *accounts.Account, before, after *Milestone) error {
	changes := map[string]any{}
	if before.Title != after.Title {
		changes["title"] = map[string]any{"from": before.Title}
	}
	if before.Description != after.Description {
		changes["description"] = map[string]any{"from": before.Description}
	}
	if !sameTime(before.DueOn, after.DueOn) {
		changes["due_on"] = map[string]any{"from": dueString(before.DueOn)}
	}
	if len(changes) > 0 {
		if err := s.emitMilestone(ctx, tx, repo, actor, "edited", after, map[string]any{"changes": changes}); err != nil {
			return err
		}
	}
	if before.State != after.State {
		action := "closed"
		if after.State == StateOpen {
			action = "opened"
		}
		return s.emitMilestone(ctx, tx, repo, actor, action, after, nil)
	}
	return nil
}

func sameTime(a, b *time.Time) bool {
	return (a == nil) == (b == nil) && (a == nil || a.Equal(*b))
}

func dueString(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// DeleteMilestone removes a milestone (its issues keep no milestone) and
// emits milestone deleted.
func (s *Service) DeleteMilestone(ctx context.Context, repo *repos.Repository, actor *accounts.Account, number int64) error {
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		m, err := milestoneByNumber(ctx, tx, repo, number)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE issues SET milestone_id = NULL WHERE milestone_id = $1`, m.ID); err != nil {
			return store.Normalize(err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM milestones WHERE id = $1`, m.ID); err != nil {
			return store.Normalize(err)
		}
		return s.emitMilestone(ctx, tx, repo, actor, "deleted", m, nil)
	})
}

func (s *Service) emitMilestone(ctx context.Context, tx *store.Tx, repo *repos.Repository, actor *accounts.Account, action string, m *Milestone, extra map[string]any) error {
	payload := map[string]any{"action": action, "milestone": toMilestoneJSON(urlsOf(httpapi.BaseURL(ctx), repo), m)}
	for k, v := range extra {
		payload[k] = v
	}
	return s.Events.Emit(ctx, tx, &events.Event{HookEvent: "milestone", HookPayload: payload, Actor: actor, Repo: repo, Public: !repo.Private})
}

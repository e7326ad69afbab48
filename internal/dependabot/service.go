package dependabot

import (
	"context"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// Enabled reports whether the repository has Dependabot alerts on.
func (s *Service) Enabled(ctx context.Context, repo *repos.Repository) (bool, error) {
	return enabled(ctx, s.DB, repo.ID)
}

// SetEnabled turns the repository's alerts on (and asks for a check of
// its default branch, in the same transaction) or off (its alerts are
// kept, hidden, and checked again when turned on).
func (s *Service) SetEnabled(ctx context.Context, repo *repos.Repository, on bool, actor *accounts.Account) error {
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		if !on {
			_, err := tx.ExecContext(ctx, `UPDATE dependabot_repositories SET enabled = $1 WHERE repository_id = $2`, false, repo.ID)
			return store.Normalize(err)
		}
		if err := request(ctx, tx, repo.ID, &actor.ID, true); err != nil {
			return err
		}
		if s.wake != nil {
			tx.AfterCommit(s.wake)
		}
		return nil
	})
}

// Change is an update of an alert: dismissed with a reason (and a
// comment), or open again.
type Change struct {
	State            *string `json:"state"`
	DismissedReason  *string `json:"dismissed_reason"`
	DismissedComment *string `json:"dismissed_comment"`
	Assignees        []any   `json:"assignees"`
}

func (c Change) validate() error {
	if c.Assignees != nil {
		return apierr.Unprocessable("Assignees are not supported on Dependabot alerts here.")
	}
	if c.State == nil {
		return apierr.Invalid("DependabotAlert", "state", apierr.CodeMissingField)
	}
	switch *c.State {
	case StateDismissed:
		if c.DismissedReason == nil || !dismissReasons[*c.DismissedReason] {
			return apierr.Invalid("DependabotAlert", "dismissed_reason", apierr.CodeInvalid)
		}
	case StateOpen:
	default:
		return apierr.Invalid("DependabotAlert", "state", apierr.CodeInvalid)
	}
	if c.DismissedComment != nil && apierr.TooLongFor(*c.DismissedComment, 280) {
		return apierr.Validation(apierr.TooLong("DependabotAlert", "dismissed_comment", 280))
	}
	return nil
}

// Update dismisses an open alert or reopens a dismissed one
// (dependabot_alert dismissed or reopened, in the change's transaction).
// A fixed alert can be neither (400); asking for the state an alert has
// changes nothing.
func (s *Service) Update(ctx context.Context, repo *repos.Repository, number int64, c Change, actor *accounts.Account) (*Alert, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	var out *Alert
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		a, err := alertByNumber(ctx, tx, repo.ID, number)
		if err != nil {
			return err
		}
		out = a
		if a.State == *c.State {
			return nil
		}
		if a.State == StateFixed {
			return apierr.BadRequest("A fixed alert can be neither dismissed nor reopened.")
		}
		now := tx.Now()
		action := "reopened"
		if *c.State == StateDismissed {
			a.State, a.DismissedByID, a.DismissedAt, a.DismissedReason, a.DismissedComment = StateDismissed, &actor.ID, &now,
				c.DismissedReason, c.DismissedComment
			action = "dismissed"
		} else {
			a.State, a.DismissedByID, a.DismissedAt, a.DismissedReason, a.DismissedComment = StateOpen, nil, nil, nil, nil
		}
		a.UpdatedAt = now
		if err := writeState(ctx, tx, a); err != nil {
			return err
		}
		return s.emit(ctx, tx, view{base: s.BaseURL, users: map[int64]*accounts.Account{actor.ID: actor}}, repo, a, action, actor)
	})
	return out, err
}

package secretscanning

import (
	"context"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/events"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// record writes what a scan found in tx: an alert for each secret the
// repository had none of (secret_scanning_alert created), and each place
// not known yet (secret_scanning_alert_location created). The pusher is
// the events' sender.
func (s *Service) record(ctx context.Context, tx *store.Tx, repo *repos.Repository, pusher *accounts.Account, found []finding) error {
	if len(found) == 0 {
		return nil
	}
	v := view{base: s.BaseURL, users: map[int64]*accounts.Account{}}
	now := tx.Now()
	for _, f := range found {
		a, created, err := ensureAlert(ctx, tx, repo.ID, f.Type, f.Secret, now)
		if err != nil {
			return err
		}
		l := &Location{AlertID: a.ID, Path: f.path, StartLine: f.StartLine, EndLine: f.EndLine, StartColumn: f.StartColumn,
			EndColumn: f.EndColumn, BlobSHA: f.blob, CommitSHA: f.commit, CreatedAt: now}
		added, err := addLocation(ctx, tx, l)
		if err != nil {
			return err
		}
		if !created && !added {
			continue
		}
		a.Locations++
		if a.First == nil {
			a.First = l
		}
		if created {
			if err := s.emitAlert(ctx, tx, v, repo, a, "created", pusher); err != nil {
				return err
			}
		}
		if added {
			err := s.Events.Emit(ctx, tx, &events.Event{HookEvent: "secret_scanning_alert_location", Repo: repo, Actor: pusher,
				HookPayload: map[string]any{"action": "created", "alert": v.webhookAlert(repo, a),
					"location": locationJSON{Type: "commit", Details: v.location(repo, l)}}})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// emitAlert emits secret_scanning_alert with the action.
func (s *Service) emitAlert(ctx context.Context, tx *store.Tx, v view, repo *repos.Repository, a *Alert, action string,
	sender *accounts.Account) error {
	return s.Events.Emit(ctx, tx, &events.Event{HookEvent: "secret_scanning_alert", Repo: repo, Actor: sender,
		HookPayload: map[string]any{"action": action, "alert": v.webhookAlert(repo, a)}})
}

// Change is an update of an alert: its state, and for resolved the
// resolution and an optional comment.
type Change struct {
	State             *string
	Resolution        *string
	ResolutionComment *string
}

// validate checks the change as the platform does: a known state, and a
// known resolution exactly when the state is resolved.
func (c Change) validate() error {
	if c.State == nil {
		return apierr.Invalid("SecretScanningAlert", "state", apierr.CodeMissingField)
	}
	switch *c.State {
	case StateResolved:
		if c.Resolution == nil || !resolutions[*c.Resolution] {
			return apierr.Unprocessable("A valid resolution (false_positive, wont_fix, revoked or used_in_tests) is required to resolve an alert.")
		}
	case StateOpen:
		if c.Resolution != nil {
			return apierr.Unprocessable("A resolution may only be set when the state is resolved.")
		}
	default:
		return apierr.Invalid("SecretScanningAlert", "state", apierr.CodeInvalid)
	}
	if c.ResolutionComment != nil && apierr.TooLongFor(*c.ResolutionComment, 280) {
		return apierr.BadRequest("The resolution comment may have at most 280 characters.")
	}
	return nil
}

// Update changes the alert's state (secret_scanning_alert resolved or
// reopened, in the change's transaction). Setting the state it has
// already changes nothing and emits nothing, as the platform does.
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
		if a.State == *c.State && (a.State == StateOpen || equal(a.Resolution, c.Resolution)) {
			return nil
		}
		now := tx.Now()
		a.State, a.UpdatedAt, a.ResolutionComment = *c.State, now, c.ResolutionComment
		action := "reopened"
		if a.State == StateResolved {
			action = "resolved"
			a.Resolution, a.ResolvedByID, a.ResolvedAt = c.Resolution, &actor.ID, &now
		} else {
			a.Resolution, a.ResolvedByID, a.ResolvedAt = nil, nil, nil
		}
		if err := setState(ctx, tx, a); err != nil {
			return err
		}
		v := view{base: s.BaseURL, users: map[int64]*accounts.Account{actor.ID: actor}}
		return s.emitAlert(ctx, tx, v, repo, a, action, actor)
	})
	return out, err
}

func equal(a, b *string) bool { return a != nil && b != nil && *a == *b }

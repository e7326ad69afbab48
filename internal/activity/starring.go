package activity

import (
	"context"
	"errors"

	"forgeapi/internal/accounts"
	"forgeapi/internal/events"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// Star makes the user star the repository. A new star emits WatchEvent
// (action started) with the watch webhook event, and the star webhook
// event (action created, starred_at). Starring again changes nothing. A
// user the repository's owner blocks gets a 403.
func (s *Service) Star(ctx context.Context, user *accounts.Account, r *repos.Repository) error {
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		if err := accounts.CheckNotBlocked(ctx, tx, r.Owner, user.ID); err != nil {
			return err
		}
		now := s.now()
		res, err := tx.ExecContext(ctx, `INSERT INTO stars (user_id, repository_id, created_at) VALUES ($1, $2, $3)
			ON CONFLICT (user_id, repository_id) DO NOTHING`, user.ID, r.ID, now)
		if err != nil {
			return store.Normalize(err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err
		}
		if err := s.Events.Emit(ctx, tx, &events.Event{
			FeedType: "WatchEvent", FeedPayload: actionPayload{Action: "started"},
			HookEvent: "watch", HookPayload: map[string]any{"action": "started"},
			Actor: user, Repo: r, Public: !r.Private, CreatedAt: now,
		}); err != nil {
			return err
		}
		return s.Events.Emit(ctx, tx, &events.Event{
			HookEvent:   "star",
			HookPayload: map[string]any{"action": "created", "starred_at": wire.T(now)},
			Actor:       user, Repo: r, Public: !r.Private, CreatedAt: now,
		})
	})
}

// Unstar removes the user's star. A removed star emits the star webhook
// event with action deleted (starred_at null); the feeds show nothing.
func (s *Service) Unstar(ctx context.Context, user *accounts.Account, r *repos.Repository) error {
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM stars WHERE user_id = $1 AND repository_id = $2`, user.ID, r.ID)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err
		}
		return s.Events.Emit(ctx, tx, &events.Event{
			HookEvent:   "star",
			HookPayload: map[string]any{"action": "deleted", "starred_at": nil},
			Actor:       user, Repo: r, Public: !r.Private, CreatedAt: s.now(),
		})
	})
}

// Starred reports whether the user stars the repository.
func Starred(ctx context.Context, q store.Q, userID, repoID int64) (bool, error) {
	return exists(ctx, q, `SELECT 1 FROM stars WHERE user_id = $1 AND repository_id = $2`, userID, repoID)
}

func exists(ctx context.Context, q store.Q, query string, args ...any) (bool, error) {
	var one int
	err := store.Normalize(q.QueryRowContext(ctx, query, args...).Scan(&one))
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

package activity

import (
	"context"
	"time"

	"forgeapi/internal/store"
)

// Subscription is a user's watch on a repository. Ignored mutes the
// repository; a subscription that is not ignored is "subscribed".
type Subscription struct {
	Ignored   bool
	CreatedAt time.Time
}

// Subscribe sets the user's subscription to the repository, creating it
// when there is none. It emits no event (watching has no feed event on
// the platform: WatchEvent is starring).
func (s *Service) Subscribe(ctx context.Context, userID, repoID int64, ignored bool) (*Subscription, error) {
	var sub Subscription
	err := s.DB.QueryRowContext(ctx, `
		INSERT INTO subscriptions (user_id, repository_id, ignored, created_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (user_id, repository_id) DO UPDATE SET ignored = excluded.ignored
		RETURNING ignored, created_at`, userID, repoID, ignored, s.now()).Scan(&sub.Ignored, &sub.CreatedAt)
	s.changed()
	if err != nil {
		return nil, store.Normalize(err)
	}
	return &sub, nil
}

// Unsubscribe deletes the subscription; it is not an error when there
// was none.
func (s *Service) Unsubscribe(ctx context.Context, userID, repoID int64) error {
	_, err := s.DB.ExecContext(ctx, `DELETE FROM subscriptions WHERE user_id = $1 AND repository_id = $2`, userID, repoID)
	s.changed()
	return err
}

// SubscriptionOf returns the user's subscription to the repository, or
// store.ErrNotFound.
func SubscriptionOf(ctx context.Context, q store.Q, userID, repoID int64) (*Subscription, error) {
	var sub Subscription
	err := q.QueryRowContext(ctx, `SELECT ignored, created_at FROM subscriptions WHERE user_id = $1 AND repository_id = $2`,
		userID, repoID).Scan(&sub.Ignored, &sub.CreatedAt)
	if err != nil {
		return nil, store.Normalize(err)
	}
	return &sub, nil
}

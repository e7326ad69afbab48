package activity

import (
	"context"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/store"
)

// Follow makes follower follow the account (a user or an organization).
// Following oneself is a 422, following an account that blocks the
// follower a 403. It emits no event: the platform's feeds
// and webhooks have none for follows; a follow brings the followed
// account's events into the follower's received events.
func (s *Service) Follow(ctx context.Context, followerID, followeeID int64) error {
	if followerID == followeeID {
		return apierr.Custom("User", "username", "You can't follow yourself.")
	}
	if blocked, err := accounts.Blocks(ctx, s.DB, followeeID, followerID); err != nil || blocked {
		if err != nil {
			return err
		}
		return apierr.Forbidden("This user has blocked you: you can't follow them.")
	}
	_, err := s.DB.ExecContext(ctx, `INSERT INTO follows (follower_id, followee_id, created_at) VALUES ($1, $2, $3)
		ON CONFLICT (follower_id, followee_id) DO NOTHING`, followerID, followeeID, s.now())
	s.changed()
	return store.Normalize(err)
}

// Unfollow stops the follow; it is not an error when there was none.
func (s *Service) Unfollow(ctx context.Context, followerID, followeeID int64) error {
	_, err := s.DB.ExecContext(ctx, `DELETE FROM follows WHERE follower_id = $1 AND followee_id = $2`, followerID, followeeID)
	s.changed()
	return err
}

// Follows reports whether follower follows followee.
func Follows(ctx context.Context, q store.Q, followerID, followeeID int64) (bool, error) {
	return exists(ctx, q, `SELECT 1 FROM follows WHERE follower_id = $1 AND followee_id = $2`, followerID, followeeID)
}

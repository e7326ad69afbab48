package accounts

import (
	"context"
	"errors"

	"forgeapi/internal/apierr"
	"forgeapi/internal/store"
)

// Block makes the blocker (a user or an organization) block the user and
// reports whether the block is new. A user blocked by an account stops
// following it.
func Block(ctx context.Context, q store.Q, blockerID, userID int64) (bool, error) {
	res, err := q.ExecContext(ctx, `INSERT INTO blocks (blocker_id, blocked_id, created_at) VALUES ($1, $2, $3)
		ON CONFLICT (blocker_id, blocked_id) DO NOTHING`, blockerID, userID, store.Now())
	if err != nil {
		return false, store.Normalize(err)
	}
	n, err := res.RowsAffected()
	if err != nil || n == 0 {
		return false, err
	}
	_, err = q.ExecContext(ctx, `DELETE FROM follows WHERE follower_id = $1 AND followee_id = $2`, userID, blockerID)
	return true, store.Normalize(err)
}

// Unblock lifts the block and reports whether there was one.
func Unblock(ctx context.Context, q store.Q, blockerID, userID int64) (bool, error) {
	res, err := q.ExecContext(ctx, `DELETE FROM blocks WHERE blocker_id = $1 AND blocked_id = $2`, blockerID, userID)
	if err != nil {
		return false, store.Normalize(err)
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// Blocks reports whether the account blocks the user.
func Blocks(ctx context.Context, q store.Q, blockerID, userID int64) (bool, error) {
	var one int
	err := store.Normalize(q.QueryRowContext(ctx, `SELECT 1 FROM blocks WHERE blocker_id = $1 AND blocked_id = $2`, blockerID, userID).Scan(&one))
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// CheckNotBlocked is a 403 when the account blocks the user, for the
// actions a blocked user may not take on the account or its repositories.
func CheckNotBlocked(ctx context.Context, q store.Q, account *Account, userID int64) error {
	blocked, err := Blocks(ctx, q, account.ID, userID)
	if err != nil {
		return err
	}
	if blocked {
		return apierr.Forbidden("%s has blocked you from this.", account.Login)
	}
	return nil
}

// BlockedBy returns a page of the users the account blocks, in the order
// it blocked them.
func BlockedBy(ctx context.Context, q store.Q, blockerID int64, limit, offset int) ([]*Account, error) {
	return queryAccounts(ctx, q, `SELECT `+prefixedAccountColumns+` FROM blocks b JOIN accounts a ON a.id = b.blocked_id
		WHERE b.blocker_id = $1 ORDER BY b.created_at, a.id LIMIT $2 OFFSET $3`, blockerID, limit, offset)
}

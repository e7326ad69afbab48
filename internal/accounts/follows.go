package accounts

import (
	"context"

	"forgeapi/internal/store"
)

// Followers returns a page of the accounts that follow the account, in
// the order they followed it.
func Followers(ctx context.Context, q store.Q, id int64, limit, offset int) ([]*Account, error) {
	return queryAccounts(ctx, q, `SELECT `+prefixedAccountColumns+` FROM follows f JOIN accounts a ON a.id = f.follower_id
		WHERE f.followee_id = $1 ORDER BY f.created_at, a.id LIMIT $2 OFFSET $3`, id, limit, offset)
}

// Following returns a page of the accounts the account follows, in the
// order it followed them.
func Following(ctx context.Context, q store.Q, id int64, limit, offset int) ([]*Account, error) {
	return queryAccounts(ctx, q, `SELECT `+prefixedAccountColumns+` FROM follows f JOIN accounts a ON a.id = f.followee_id
		WHERE f.follower_id = $1 ORDER BY f.created_at, a.id LIMIT $2 OFFSET $3`, id, limit, offset)
}

package accounts

import (
	"context"
	"time"

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

// Stargazer is a user who starred a repository, and when.
type Stargazer struct {
	User      *Account
	StarredAt time.Time
}

// Stargazers returns a page of the users who starred the repository, in
// the order they did.
func Stargazers(ctx context.Context, q store.Q, repoID int64, limit, offset int) ([]Stargazer, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+prefixedAccountColumns+`, s.created_at FROM stars s JOIN accounts a ON a.id = s.user_id
		WHERE s.repository_id = $1 ORDER BY s.created_at, a.id LIMIT $2 OFFSET $3`, repoID, limit, offset)
	if err != nil {
		return nil, store.Normalize(err)
	}
	defer rows.Close()
	var out []Stargazer
	for rows.Next() {
		var a Account
		var at time.Time
		if err := rows.Scan(append(a.ScanDest(), &at)...); err != nil {
			return nil, store.Normalize(err)
		}
		out = append(out, Stargazer{User: &a, StarredAt: at})
	}
	return out, store.Normalize(rows.Err())
}

// Watchers returns a page of the users who watch the repository (not
// ignoring it), in the order they started.
func Watchers(ctx context.Context, q store.Q, repoID int64, limit, offset int) ([]*Account, error) {
	return queryAccounts(ctx, q, `SELECT `+prefixedAccountColumns+` FROM subscriptions s JOIN accounts a ON a.id = s.user_id
		WHERE s.repository_id = $1 AND NOT s.ignored ORDER BY s.created_at, a.id LIMIT $2 OFFSET $3`, repoID, limit, offset)
}

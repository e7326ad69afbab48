package accounts

import (
	"context"
	"strings"

	"forgeapi/internal/store"
)

// PublicUsers returns the full user objects (public-user, as GET
// /users/{username} answers them) of the accounts of ids that exist, by
// id, with their counters and profiles in one query: for the lists that
// embed whole users (a gist's forks).
func PublicUsers(ctx context.Context, q store.Q, ids []int64) (map[int64]User, error) {
	out := map[int64]User{}
	if len(ids) == 0 {
		return out, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	from := strings.TrimSuffix(detailsFrom, "WHERE a.id = $1")
	rows, err := q.QueryContext(ctx, store.Dynamic+`SELECT `+prefixedAccountColumns+`, `+detailsColumns+from+
		`WHERE a.id IN `+store.In(1, len(ids)), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var a Account
		var d details
		if err := rows.Scan(append(a.ScanDest(), d.scanDest()...)...); err != nil {
			return nil, err
		}
		out[a.ID] = toUser(ctx, &a, d)
	}
	return out, rows.Err()
}

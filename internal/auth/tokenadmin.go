package auth

import (
	"context"
	"database/sql"
	"encoding/json"
	"slices"
	"time"

	"forgeapi/internal/store"
)

// TokenInfo is a stored token as the admin command line lists it: never
// its value, only its last eight characters.
type TokenInfo struct {
	ID              int64      `json:"id"`
	Kind            Kind       `json:"kind"`
	User            string     `json:"user"`
	LastEight       string     `json:"last_eight"`
	Scopes          string     `json:"scopes,omitempty"`
	Permissions     Grant      `json:"permissions,omitempty"`
	ResourceOwner   string     `json:"resource_owner,omitempty"`
	AllRepositories bool       `json:"all_repositories,omitempty"`
	RepositoryIDs   []int64    `json:"repository_ids,omitempty"`
	Note            string     `json:"note,omitempty"`
	ExpiresAt       *time.Time `json:"expires_at"`
	CreatedAt       time.Time  `json:"created_at"`
}

// ListTokens returns the tokens of the user (userID 0: every token), in
// creation order.
func ListTokens(ctx context.Context, q store.Q, userID int64) ([]TokenInfo, error) {
	rows, err := q.QueryContext(ctx, `
		SELECT t.id, t.kind, u.login, t.last_eight, t.scopes, t.permissions, COALESCE(o.login, ''),
		       t.all_repositories, t.repository_ids, t.note, t.expires_at, t.created_at
		FROM tokens t JOIN accounts u ON u.id = t.user_id LEFT JOIN accounts o ON o.id = t.resource_owner_id
		WHERE $1 = 0 OR t.user_id = $1 ORDER BY t.id`, userID)
	if err != nil {
		return nil, store.Normalize(err)
	}
	defer rows.Close()
	out := []TokenInfo{}
	for rows.Next() {
		var t TokenInfo
		var kind, permissions, repoIDs string
		var expires sql.NullTime
		if err := rows.Scan(&t.ID, &kind, &t.User, &t.LastEight, &t.Scopes, &permissions, &t.ResourceOwner,
			&t.AllRepositories, &repoIDs, &t.Note, &expires, &t.CreatedAt); err != nil {
			return nil, store.Normalize(err)
		}
		t.Kind = Kind(kind)
		if err := json.Unmarshal([]byte(permissions), &t.Permissions); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(repoIDs), &t.RepositoryIDs); err != nil {
			return nil, err
		}
		if expires.Valid {
			e := expires.Time.UTC()
			t.ExpiresAt = &e
		}
		t.CreatedAt = t.CreatedAt.UTC()
		out = append(out, t)
	}
	return out, store.Normalize(rows.Err())
}

// RevokeToken deletes the token; store.ErrNotFound when there is none.
// Servers stop accepting it at once on PostgreSQL and within their lookup
// cache's bound on SQLite.
func RevokeToken(ctx context.Context, q store.Q, id int64) error {
	res, err := q.ExecContext(ctx, `DELETE FROM tokens WHERE id = $1`, id)
	if err != nil {
		return store.Normalize(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return store.ErrNotFound
	}
	return nil
}

// ForgetRepository takes a deleted repository out of every token's
// repository selection, so that an id the database hands out again never
// selects a repository the token's owner did not choose.
func ForgetRepository(ctx context.Context, q store.Q, ownerID, repoID int64) error {
	rows, err := q.QueryContext(ctx, `SELECT id, repository_ids FROM tokens WHERE resource_owner_id = $1`, ownerID)
	if err != nil {
		return store.Normalize(err)
	}
	changed := map[int64][]int64{}
	for rows.Next() {
		var id int64
		var raw string
		if err := rows.Scan(&id, &raw); err != nil {
			rows.Close()
			return store.Normalize(err)
		}
		var ids []int64
		if err := json.Unmarshal([]byte(raw), &ids); err != nil {
			rows.Close()
			return err
		}
		if slices.Contains(ids, repoID) {
			changed[id] = slices.DeleteFunc(ids, func(v int64) bool { return v == repoID })
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return store.Normalize(err)
	}
	for id, ids := range changed {
		b, _ := json.Marshal(append([]int64{}, ids...))
		if _, err := q.ExecContext(ctx, `UPDATE tokens SET repository_ids = $1, updated_at = $2 WHERE id = $3`,
			string(b), store.Now(), id); err != nil {
			return store.Normalize(err)
		}
	}
	return nil
}

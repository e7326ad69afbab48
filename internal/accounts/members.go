package accounts

import (
	"context"
	"errors"

	"forgeapi/internal/store"
)

// MemberFilter narrows a list of an organization's members.
type MemberFilter struct {
	PublicOnly  bool   // only members who show their membership
	Role        string // RoleOwner, RoleMember, or "" for both
	NoTwoFactor bool   // only members without two-factor authentication
	Limit       int
	Offset      int
}

// memberFrom selects the accounts of an organization's memberships ($1)
// that pass the filter: $2 public only, $3 the role ("" for any), $4
// without two-factor authentication only.
const memberFrom = ` FROM accounts WHERE (NOT $4 OR totp_secret = '') AND id IN (
	SELECT user_id FROM org_members WHERE org_id = $1 AND (public OR NOT $2) AND ($3 = '' OR role = $3))`

// Members returns a page of the organization's members in the order of
// their ids, and how many match the filter in all.
func Members(ctx context.Context, q store.Q, orgID int64, f MemberFilter) ([]*Account, int, error) {
	var total int
	err := q.QueryRowContext(ctx, `SELECT count(*)`+memberFrom, orgID, f.PublicOnly, f.Role, f.NoTwoFactor).Scan(&total)
	if err != nil {
		return nil, 0, store.Normalize(err)
	}
	list, err := queryAccounts(ctx, q, `SELECT `+accountColumns+memberFrom+` ORDER BY id LIMIT $5 OFFSET $6`,
		orgID, f.PublicOnly, f.Role, f.NoTwoFactor, f.Limit, f.Offset)
	return list, total, err
}

// IsPublicMember reports whether the user shows a membership of the
// organization.
func IsPublicMember(ctx context.Context, q store.Q, orgID, userID int64) (bool, error) {
	var public bool
	err := q.QueryRowContext(ctx, `SELECT public FROM org_members WHERE org_id = $1 AND user_id = $2`, orgID, userID).Scan(&public)
	if err = store.Normalize(err); errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	return public, err
}

// SetMemberPublic shows (true) or conceals the user's membership of the
// organization; store.ErrNotFound when the user is not a member.
func SetMemberPublic(ctx context.Context, q store.Q, orgID, userID int64, public bool) error {
	res, err := q.ExecContext(ctx, `UPDATE org_members SET public = $1 WHERE org_id = $2 AND user_id = $3`, public, orgID, userID)
	if err != nil {
		return store.Normalize(err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return store.ErrNotFound
	}
	return nil
}

// OrgsOfMember returns the organizations the user belongs to (publicOnly:
// those whose membership the user shows), in the order of their ids.
func OrgsOfMember(ctx context.Context, q store.Q, userID int64, publicOnly bool, limit, offset int) ([]*Account, error) {
	return queryAccounts(ctx, q, `SELECT `+accountColumns+` FROM accounts WHERE id IN (
		SELECT org_id FROM org_members WHERE user_id = $1 AND (public OR NOT $2)) ORDER BY id LIMIT $3 OFFSET $4`,
		userID, publicOnly, limit, offset)
}

// OrgsSince returns at most limit organizations whose id is greater than
// since, in the order of their ids.
func OrgsSince(ctx context.Context, q store.Q, since int64, limit int) ([]*Account, error) {
	return queryAccounts(ctx, q, `SELECT `+accountColumns+` FROM accounts WHERE type = $1 AND id > $2 ORDER BY id LIMIT $3`,
		TypeOrg, since, limit)
}

// queryAccounts runs a query selecting accountColumns and scans its rows.
func queryAccounts(ctx context.Context, q store.Q, query string, args ...any) ([]*Account, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, store.Normalize(err)
	}
	defer rows.Close()
	out := []*Account{}
	for rows.Next() {
		a, err := scanAccount(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, store.Normalize(rows.Err())
}

package accounts

import (
	"context"
	"errors"

	"forgeapi/internal/store"
)

// Profile holds the fields of a user or an organization that only its
// full object shows (company, blog, ...). Empty strings are unset.
type Profile struct {
	Company         string
	Blog            string
	Location        string
	Bio             string
	TwitterUsername string
	Hireable        *bool
	BillingEmail    string // organizations
}

// ProfileOf returns the account's profile; an account that never set one
// has the zero Profile.
func ProfileOf(ctx context.Context, q store.Q, accountID int64) (Profile, error) {
	var p Profile
	err := q.QueryRowContext(ctx, `SELECT company, blog, location, bio, twitter_username, hireable, billing_email
		FROM account_profiles WHERE account_id = $1`, accountID).
		Scan(&p.Company, &p.Blog, &p.Location, &p.Bio, &p.TwitterUsername, &p.Hireable, &p.BillingEmail)
	if err = store.Normalize(err); errors.Is(err, store.ErrNotFound) {
		return Profile{}, nil
	}
	return p, err
}

// SaveProfile stores the account's profile.
func SaveProfile(ctx context.Context, q store.Q, accountID int64, p Profile) error {
	_, err := q.ExecContext(ctx, `
		INSERT INTO account_profiles (account_id, company, blog, location, bio, twitter_username, hireable, billing_email)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (account_id) DO UPDATE SET company = excluded.company, blog = excluded.blog,
			location = excluded.location, bio = excluded.bio, twitter_username = excluded.twitter_username,
			hireable = excluded.hireable, billing_email = excluded.billing_email`,
		accountID, p.Company, p.Blog, p.Location, p.Bio, p.TwitterUsername, p.Hireable, p.BillingEmail)
	return store.Normalize(err)
}

// AccountUpdate is a change of an account's own columns; nil fields stay.
type AccountUpdate struct {
	Name                  *string
	Email                 *string
	Description           *string
	BaseRepoPermission    *string
	MembersCanCreateRepos *bool
}

// Update applies u to the account and returns it as it is now.
func Update(ctx context.Context, q store.Q, id int64, u AccountUpdate) (*Account, error) {
	return scanAccount(q.QueryRowContext(ctx, `
		UPDATE accounts SET name = COALESCE($2, name), email = COALESCE($3, email), description = COALESCE($4, description),
			base_repo_permission = COALESCE($5, base_repo_permission),
			members_can_create_repos = COALESCE($6, members_can_create_repos), updated_at = $7
		WHERE id = $1 RETURNING `+accountColumns,
		id, u.Name, u.Email, u.Description, u.BaseRepoPermission, u.MembersCanCreateRepos, store.Now()))
}

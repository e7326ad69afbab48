package accounts

import (
	"context"
	"errors"
	"regexp"
	"time"

	"forgeapi/internal/apierr"
	"forgeapi/internal/store"
)

// Enterprise groups organizations under owners.
type Enterprise struct {
	ID        int64
	Slug      string
	Name      string
	CreatedAt time.Time
	UpdatedAt time.Time
}

var slugPattern = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9-]{0,58}[a-z0-9])?$`)

// CreateEnterprise inserts an enterprise. The slug is lower case letters,
// digits and inner hyphens.
func CreateEnterprise(ctx context.Context, q store.Q, slug, name string) (*Enterprise, error) {
	if !slugPattern.MatchString(slug) {
		return nil, apierr.Invalid("Enterprise", "slug", apierr.CodeInvalid)
	}
	if name == "" {
		name = slug
	}
	e := &Enterprise{Slug: slug, Name: name, CreatedAt: store.Now()}
	e.UpdatedAt = e.CreatedAt
	err := q.QueryRowContext(ctx, `INSERT INTO enterprises (slug, name, created_at, updated_at) VALUES ($1, $2, $3, $3) RETURNING id`,
		slug, name, e.CreatedAt).Scan(&e.ID)
	if err = store.Normalize(err); errors.Is(err, store.ErrConflict) {
		return nil, apierr.Invalid("Enterprise", "slug", apierr.CodeAlreadyExists)
	}
	return e, err
}

// EnterpriseBySlug returns the enterprise (slug case-insensitive).
func EnterpriseBySlug(ctx context.Context, q store.Q, slug string) (*Enterprise, error) {
	var e Enterprise
	err := q.QueryRowContext(ctx, `SELECT id, slug, name, created_at, updated_at FROM enterprises WHERE lower(slug) = lower($1)`, slug).
		Scan(&e.ID, &e.Slug, &e.Name, &e.CreatedAt, &e.UpdatedAt)
	if err != nil {
		return nil, store.Normalize(err)
	}
	return &e, nil
}

// AddEnterpriseOwner makes the user an owner of the enterprise.
func AddEnterpriseOwner(ctx context.Context, q store.Q, enterpriseID, userID int64) error {
	_, err := q.ExecContext(ctx, `INSERT INTO enterprise_owners (enterprise_id, user_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, enterpriseID, userID)
	return store.Normalize(err)
}

// IsEnterpriseOwner reports whether the user owns the enterprise.
func IsEnterpriseOwner(ctx context.Context, q store.Q, enterpriseID, userID int64) (bool, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT count(*) FROM enterprise_owners WHERE enterprise_id = $1 AND user_id = $2`, enterpriseID, userID).Scan(&n)
	return n > 0, err
}

// AddEnterpriseOrg makes the organization a member of the enterprise. An
// organization belongs to at most one enterprise: 422 otherwise.
func AddEnterpriseOrg(ctx context.Context, q store.Q, enterpriseID, orgID int64) error {
	_, err := q.ExecContext(ctx, `INSERT INTO enterprise_orgs (enterprise_id, org_id) VALUES ($1, $2)`, enterpriseID, orgID)
	if err = store.Normalize(err); errors.Is(err, store.ErrConflict) {
		var current int64
		if q.QueryRowContext(ctx, `SELECT enterprise_id FROM enterprise_orgs WHERE org_id = $1`, orgID).Scan(&current) == nil && current == enterpriseID {
			return nil
		}
		return apierr.Custom("Enterprise", "organization", "the organization already belongs to an enterprise")
	}
	return err
}

// EnterpriseHasOrg reports whether the organization belongs to the enterprise.
func EnterpriseHasOrg(ctx context.Context, q store.Q, enterpriseID, orgID int64) (bool, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT count(*) FROM enterprise_orgs WHERE enterprise_id = $1 AND org_id = $2`, enterpriseID, orgID).Scan(&n)
	return n > 0, err
}

// RemoveEnterpriseOrg takes the organization out of the enterprise;
// store.ErrNotFound when it is not in it.
func RemoveEnterpriseOrg(ctx context.Context, q store.Q, enterpriseID, orgID int64) error {
	res, err := q.ExecContext(ctx, `DELETE FROM enterprise_orgs WHERE enterprise_id = $1 AND org_id = $2`, enterpriseID, orgID)
	if err != nil {
		return store.Normalize(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return store.ErrNotFound
	}
	return nil
}

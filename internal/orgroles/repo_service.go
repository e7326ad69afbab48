package orgroles

import (
	"context"
	"errors"
	"strings"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/store"
)

// CreateRepoRole makes a custom repository role; a name the organization
// already uses (or a built-in role's: read, triage, write, maintain,
// admin) is a 422, as is a sixth role.
func (s *Service) CreateRepoRole(ctx context.Context, org *accounts.Account, in RoleInput) (*RepoRole, error) {
	if err := validate(in, true, true); err != nil {
		return nil, err
	}
	var out *RepoRole
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		name := strings.TrimSpace(*in.Name)
		if err := repoNameFree(ctx, tx, org.ID, name, 0); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM custom_repo_roles WHERE org_id = $1`, org.ID).Scan(&n); err != nil {
			return err
		}
		if n >= MaxRepoRoles {
			return apierr.Unprocessable("An organization can have at most %d custom repository roles.", MaxRepoRoles)
		}
		var id int64
		if err := tx.QueryRowContext(ctx, `INSERT INTO custom_repo_roles (org_id, name, description, base_role, permissions, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $6) RETURNING id`, org.ID, name, in.Description, *in.BaseRole,
			encode(*in.Permissions), tx.Now()).Scan(&id); err != nil {
			return store.Normalize(err)
		}
		var err error
		out, err = RepoRoleByID(ctx, tx, org.ID, id)
		return err
	})
	return out, err
}

// repoNameFree is a 422 when name is a built-in repository role or the
// name of another custom repository role (not except) of the
// organization.
func repoNameFree(ctx context.Context, q store.Q, orgID int64, name string, except int64) error {
	switch strings.ToLower(name) {
	case "read", "triage", "write", "maintain", "admin", "pull", "push":
		return apierr.Validation(apierr.FieldError{Resource: "CustomRepositoryRole", Field: "name", Code: "custom",
			Message: "Name is reserved for a built-in role"})
	}
	r, err := RepoRoleByName(ctx, q, orgID, name)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil
	case err != nil:
		return err
	case r.ID != except:
		return apierr.Validation(apierr.FieldError{Resource: "CustomRepositoryRole", Field: "name", Code: "already_exists"})
	}
	return nil
}

// UpdateRepoRole changes a custom repository role's given fields.
func (s *Service) UpdateRepoRole(ctx context.Context, org *accounts.Account, id int64, in RoleInput) (*RepoRole, error) {
	if err := validate(in, false, true); err != nil {
		return nil, err
	}
	var out *RepoRole
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		r, err := RepoRoleByID(ctx, tx, org.ID, id)
		if err != nil {
			return err
		}
		if in.Name != nil {
			if err := repoNameFree(ctx, tx, org.ID, strings.TrimSpace(*in.Name), r.ID); err != nil {
				return err
			}
			r.Name = strings.TrimSpace(*in.Name)
		}
		if in.Description != nil {
			r.Description = in.Description
		}
		if in.BaseRole != nil {
			r.BaseRole = *in.BaseRole
		}
		if in.Permissions != nil {
			r.Permissions = *in.Permissions
		}
		if _, err := tx.ExecContext(ctx, `UPDATE custom_repo_roles SET name = $1, description = $2, base_role = $3, permissions = $4,
			updated_at = $5 WHERE id = $6`, r.Name, r.Description, r.BaseRole, encode(r.Permissions), tx.Now(), r.ID); err != nil {
			return err
		}
		out, err = RepoRoleByID(ctx, tx, org.ID, id)
		return err
	})
	return out, err
}

// DeleteRepoRole deletes a custom repository role; one that is not there
// is already deleted.
func (s *Service) DeleteRepoRole(ctx context.Context, org *accounts.Account, id int64) error {
	_, err := s.DB.ExecContext(ctx, `DELETE FROM custom_repo_roles WHERE org_id = $1 AND id = $2`, org.ID, id)
	return err
}

package orgroles

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/store"
	"forgeapi/internal/teams"
)

// Service keeps organization roles, their holders and custom repository
// roles.
type Service struct {
	DB *store.DB
}

// RoleInput is a custom organization role's fields as a request gives
// them: nil leaves a field as it is on update.
type RoleInput struct {
	Name        *string   `json:"name"`
	Description *string   `json:"description"`
	Permissions *[]string `json:"permissions"`
	BaseRole    *string   `json:"base_role"`
}

// validate checks the fields of a role; create requires the name and
// permissions. An organization role's base role "none" removes it. repo says whether it is a repository role (base role
// required on create, admin refused, repository permissions).
func validate(in RoleInput, create, repo bool) error {
	resource, list, bases := "OrganizationRole", orgPermissions, baseRoles
	if repo {
		resource, list, bases = "CustomRepositoryRole", repoPermissions, baseRoles[:4]
	}
	var f apierr.Fields
	if create && (in.Name == nil || strings.TrimSpace(*in.Name) == "") || in.Name != nil && strings.TrimSpace(*in.Name) == "" {
		f.Add(resource, "name", "missing_field")
	}
	f.MaxLength(resource, "name", deref(in.Name), 100)
	if create && in.Permissions == nil {
		f.Add(resource, "permissions", "missing_field")
	}
	if in.Permissions != nil {
		if name, ok := known(list, *in.Permissions); !ok {
			f.Addf(resource, "permissions", "%q is not a valid permission", name)
		}
	}
	if repo && create && in.BaseRole == nil {
		f.Add(resource, "base_role", "missing_field")
	}
	if in.BaseRole != nil && !slices.Contains(bases, *in.BaseRole) && (repo || *in.BaseRole != "none") {
		f.Add(resource, "base_role", "invalid")
	}
	return f.Err()
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// CreateRole makes a custom organization role; a name taken by another
// role of the organization (or a predefined one) is a 409.
func (s *Service) CreateRole(ctx context.Context, org *accounts.Account, in RoleInput) (*Role, error) {
	if err := validate(in, true, false); err != nil {
		return nil, err
	}
	if in.BaseRole != nil && *in.BaseRole == "none" {
		in.BaseRole = nil
	}
	var out *Role
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		if err := nameFree(ctx, tx, org.ID, *in.Name, 0); err != nil {
			return err
		}
		var id int64
		if err := tx.QueryRowContext(ctx, `INSERT INTO org_roles (org_id, name, description, base_role, permissions, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $6) RETURNING id`, org.ID, strings.TrimSpace(*in.Name), in.Description, in.BaseRole,
			encode(*in.Permissions), tx.Now()).Scan(&id); err != nil {
			return store.Normalize(err)
		}
		var err error
		out, err = RoleByID(ctx, tx, org.ID, id)
		return err
	})
	return out, err
}

// nameFree is a 409 when the organization sees a role named name other
// than the role except.
func nameFree(ctx context.Context, q store.Q, orgID int64, name string, except int64) error {
	r, err := RoleByName(ctx, q, orgID, strings.TrimSpace(name))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil
	case err != nil:
		return err
	case r.ID != except:
		return apierr.New(http.StatusConflict, "A role with the name %q already exists.", r.Name)
	}
	return nil
}

// UpdateRole changes a custom organization role's given fields; a
// predefined role is a 422, another organization's a 404.
func (s *Service) UpdateRole(ctx context.Context, org *accounts.Account, id int64, in RoleInput) (*Role, error) {
	if err := validate(in, false, false); err != nil {
		return nil, err
	}
	var out *Role
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		r, err := RoleByID(ctx, tx, org.ID, id)
		if err != nil {
			return err
		}
		if r.OrgID == 0 {
			return apierr.Unprocessable("Predefined roles cannot be changed.")
		}
		if in.Name != nil {
			if err := nameFree(ctx, tx, org.ID, *in.Name, r.ID); err != nil {
				return err
			}
			r.Name = strings.TrimSpace(*in.Name)
		}
		if in.Description != nil {
			r.Description = in.Description
		}
		if in.BaseRole != nil && *in.BaseRole == "none" {
			r.BaseRole = nil
		} else if in.BaseRole != nil {
			r.BaseRole = in.BaseRole
		}
		if in.Permissions != nil {
			r.Permissions = *in.Permissions
		}
		if _, err := tx.ExecContext(ctx, `UPDATE org_roles SET name = $1, description = $2, base_role = $3, permissions = $4, updated_at = $5
			WHERE id = $6`, r.Name, r.Description, r.BaseRole, encode(r.Permissions), tx.Now(), r.ID); err != nil {
			return err
		}
		out, err = RoleByID(ctx, tx, org.ID, id)
		return err
	})
	return out, err
}

// DeleteRole deletes a custom organization role and its assignments; a
// role that is not there is already deleted, a predefined one is a 422.
func (s *Service) DeleteRole(ctx context.Context, org *accounts.Account, id int64) error {
	r, err := RoleByID(ctx, s.DB, org.ID, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil
	case err != nil:
		return err
	case r.OrgID == 0:
		return apierr.Unprocessable("Predefined roles cannot be deleted.")
	}
	_, err = s.DB.ExecContext(ctx, `DELETE FROM org_roles WHERE id = $1 AND org_id = $2`, id, org.ID)
	return err
}

// AssignUser gives the organization member the role; a user who is not
// a member is a 422.
func (s *Service) AssignUser(ctx context.Context, org, user *accounts.Account, roleID int64) error {
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		if _, err := RoleByID(ctx, tx, org.ID, roleID); err != nil {
			return err
		}
		role, err := accounts.MemberRole(ctx, tx, org.ID, user.ID)
		if err != nil {
			return err
		}
		if role == "" {
			return apierr.Unprocessable("%s is not a member of the organization.", user.Login)
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO org_role_users (org_id, user_id, role_id, created_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (org_id, user_id, role_id) DO NOTHING`, org.ID, user.ID, roleID, tx.Now())
		return err
	})
}

// AssignTeam gives the team (and the teams nested under it) the role.
func (s *Service) AssignTeam(ctx context.Context, org *accounts.Account, team *teams.Team, roleID int64) error {
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		if _, err := RoleByID(ctx, tx, org.ID, roleID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO org_role_teams (team_id, role_id, created_at) VALUES ($1, $2, $3)
			ON CONFLICT (team_id, role_id) DO NOTHING`, team.ID, roleID, tx.Now())
		return err
	})
}

// RevokeUser takes the role (every role when roleID is 0) from the user
// in the organization; what the user does not hold is already revoked.
func (s *Service) RevokeUser(ctx context.Context, org, user *accounts.Account, roleID int64) error {
	_, err := s.DB.ExecContext(ctx, `DELETE FROM org_role_users WHERE org_id = $1 AND user_id = $2 AND (role_id = $3 OR $3 = 0)`,
		org.ID, user.ID, roleID)
	return err
}

// RevokeTeam takes the role (every role when roleID is 0) from the team.
func (s *Service) RevokeTeam(ctx context.Context, team *teams.Team, roleID int64) error {
	_, err := s.DB.ExecContext(ctx, `DELETE FROM org_role_teams WHERE team_id = $1 AND (role_id = $2 OR $2 = 0)`, team.ID, roleID)
	return err
}

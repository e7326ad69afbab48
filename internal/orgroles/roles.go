package orgroles

import (
	"context"
	"encoding/json"
	"time"

	"forgeapi/internal/store"
)

// Role is an organization role: predefined (OrgID 0, the same for every
// organization) or an organization's custom role.
type Role struct {
	ID          int64
	OrgID       int64 // 0: predefined
	Name        string
	Description *string
	BaseRole    *string // read, triage, write, maintain, admin; nil: none
	Permissions []string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// SecurityManager is the name of the predefined role that the security
// manager endpoints give to teams.
const SecurityManager = "security_manager"

// baseRoles are the base roles an organization role may have, lowest
// first; a custom repository role may have all but admin.
var baseRoles = []string{"read", "triage", "write", "maintain", "admin"}

const roleColumns = `id, COALESCE(org_id, 0), name, description, base_role, permissions, created_at, updated_at`

func scanRole(s store.Scanner) (*Role, error) {
	var r Role
	var perms string
	if err := s.Scan(&r.ID, &r.OrgID, &r.Name, &r.Description, &r.BaseRole, &perms, &r.CreatedAt, &r.UpdatedAt); err != nil {
		return nil, store.Normalize(err)
	}
	if err := json.Unmarshal([]byte(perms), &r.Permissions); err != nil || r.Permissions == nil {
		r.Permissions = []string{}
	}
	return &r, nil
}

// Roles are the roles an organization sees: the predefined ones, then
// its custom roles, by id.
func Roles(ctx context.Context, q store.Q, orgID int64) ([]*Role, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+roleColumns+` FROM org_roles WHERE org_id IS NULL OR org_id = $1 ORDER BY id`, orgID)
	return store.ScanAll(rows, err, scanRole)
}

// RoleByID is the organization's role with the id (predefined or its
// own), or store.ErrNotFound.
func RoleByID(ctx context.Context, q store.Q, orgID, id int64) (*Role, error) {
	return scanRole(q.QueryRowContext(ctx, `SELECT `+roleColumns+` FROM org_roles
		WHERE id = $1 AND (org_id IS NULL OR org_id = $2)`, id, orgID))
}

// RoleByName is the organization's role with the name, or
// store.ErrNotFound.
func RoleByName(ctx context.Context, q store.Q, orgID int64, name string) (*Role, error) {
	return scanRole(q.QueryRowContext(ctx, `SELECT `+roleColumns+` FROM org_roles
		WHERE lower(name) = lower($1) AND (org_id IS NULL OR org_id = $2) ORDER BY id LIMIT 1`, name, orgID))
}

// encode is the JSON text of a permission list, "[]" for none.
func encode(perms []string) string {
	if len(perms) == 0 {
		return "[]"
	}
	b, _ := json.Marshal(perms)
	return string(b)
}

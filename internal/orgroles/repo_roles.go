package orgroles

import (
	"context"
	"encoding/json"
	"time"

	"forgeapi/internal/store"
)

// RepoRole is an organization's custom repository role: a name, a base
// role (read, triage, write, maintain) whose access its holders get, and
// additional fine-grained permissions.
type RepoRole struct {
	ID          int64
	OrgID       int64
	Name        string
	Description *string
	BaseRole    string
	Permissions []string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// MaxRepoRoles is how many custom repository roles an organization may
// have (the platform's limit).
const MaxRepoRoles = 5

const repoRoleColumns = `id, org_id, name, description, base_role, permissions, created_at, updated_at`

func scanRepoRole(s store.Scanner) (*RepoRole, error) {
	var r RepoRole
	var perms string
	if err := s.Scan(&r.ID, &r.OrgID, &r.Name, &r.Description, &r.BaseRole, &perms, &r.CreatedAt, &r.UpdatedAt); err != nil {
		return nil, store.Normalize(err)
	}
	if err := json.Unmarshal([]byte(perms), &r.Permissions); err != nil || r.Permissions == nil {
		r.Permissions = []string{}
	}
	return &r, nil
}

// RepoRoles are the organization's custom repository roles, by id.
func RepoRoles(ctx context.Context, q store.Q, orgID int64) ([]*RepoRole, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+repoRoleColumns+` FROM custom_repo_roles WHERE org_id = $1 ORDER BY id`, orgID)
	return store.ScanAll(rows, err, scanRepoRole)
}

// RepoRoleByID is the organization's custom repository role with the
// id, or store.ErrNotFound.
func RepoRoleByID(ctx context.Context, q store.Q, orgID, id int64) (*RepoRole, error) {
	return scanRepoRole(q.QueryRowContext(ctx, `SELECT `+repoRoleColumns+` FROM custom_repo_roles WHERE org_id = $1 AND id = $2`, orgID, id))
}

// RepoRoleByName is the organization's custom repository role with the
// name (any case), or store.ErrNotFound.
func RepoRoleByName(ctx context.Context, q store.Q, orgID int64, name string) (*RepoRole, error) {
	return scanRepoRole(q.QueryRowContext(ctx, `SELECT `+repoRoleColumns+` FROM custom_repo_roles
		WHERE org_id = $1 AND lower(name) = lower($2)`, orgID, name))
}

// BasePermission is the collaborator permission (pull, triage, push,
// maintain) of a base role name.
func BasePermission(base string) string {
	switch base {
	case "read":
		return "pull"
	case "write":
		return "push"
	}
	return base
}

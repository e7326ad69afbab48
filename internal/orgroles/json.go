package orgroles

import (
	"context"
	"encoding/json"
	"strings"

	"forgeapi/internal/accounts"
	"forgeapi/internal/store"
	"forgeapi/internal/teams"
	"forgeapi/internal/wire"
)

// roleJSON is the platform's organization-role object.
type roleJSON struct {
	ID           int64                `json:"id"`
	Name         string               `json:"name"`
	Description  *string              `json:"description"`
	BaseRole     *string              `json:"base_role"`
	Source       string               `json:"source"`
	Permissions  []string             `json:"permissions"`
	Organization *accounts.SimpleUser `json:"organization"`
	CreatedAt    wire.Time            `json:"created_at"`
	UpdatedAt    wire.Time            `json:"updated_at"`
}

// toRoleJSON renders the role; a predefined role has no organization and
// its source is Predefined.
func toRoleJSON(base string, org *accounts.Account, r *Role) roleJSON {
	j := roleJSON{ID: r.ID, Name: r.Name, Description: r.Description, BaseRole: r.BaseRole, Source: "Predefined",
		Permissions: r.Permissions, CreatedAt: wire.T(r.CreatedAt), UpdatedAt: wire.T(r.UpdatedAt)}
	if r.OrgID != 0 {
		u := accounts.ToSimpleUser(base, org)
		j.Organization, j.Source = &u, "Organization"
	}
	return j
}

// repoRoleJSON is the platform's organization-custom-repository-role
// object.
type repoRoleJSON struct {
	ID           int64               `json:"id"`
	Name         string              `json:"name"`
	Description  *string             `json:"description"`
	BaseRole     string              `json:"base_role"`
	Permissions  []string            `json:"permissions"`
	Organization accounts.SimpleUser `json:"organization"`
	CreatedAt    wire.Time           `json:"created_at"`
	UpdatedAt    wire.Time           `json:"updated_at"`
}

func toRepoRoleJSON(base string, org *accounts.Account, r *RepoRole) repoRoleJSON {
	return repoRoleJSON{ID: r.ID, Name: r.Name, Description: r.Description, BaseRole: r.BaseRole, Permissions: r.Permissions,
		Organization: accounts.ToSimpleUser(base, org), CreatedAt: wire.T(r.CreatedAt), UpdatedAt: wire.T(r.UpdatedAt)}
}

// userHolderJSON is the platform's user-role-assignment object.
type userHolderJSON struct {
	Assignment string `json:"assignment"`
	accounts.SimpleUser
	InheritedFrom []json.RawMessage `json:"inherited_from"`
}

// teamJSON renders a team as the teams area does.
func teamJSON(ctx context.Context, q store.Q, base string, t *teams.Team) (json.RawMessage, error) {
	v, err := teams.JSON(ctx, q, base, t)
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// withAssignment is the team's JSON with the assignment key added: the
// platform's team-role-assignment object.
func withAssignment(team json.RawMessage, assignment string) json.RawMessage {
	a, _ := json.Marshal(assignment)
	return json.RawMessage(`{"assignment":` + string(a) + `,` + strings.TrimPrefix(string(team), "{"))
}

// compareFold orders logins case-insensitively.
func compareFold(a, b string) int {
	return strings.Compare(strings.ToLower(a), strings.ToLower(b))
}

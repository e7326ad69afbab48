package access

import (
	"context"

	"forgeapi/internal/store"
)

// InTeam reports whether the user is a member of the team or of one of
// its child teams at any depth: the platform counts both as the team's
// members (a ruleset's Team bypass actor reads it). team_ancestors is the
// closure of the teams' parents that the teams service keeps.
func InTeam(ctx context.Context, q store.Q, teamID, userID int64) (bool, error) {
	var n int
	err := store.Normalize(q.QueryRowContext(ctx, `SELECT COUNT(*) FROM team_members m
		JOIN team_ancestors ta ON ta.team_id = m.team_id AND ta.ancestor_id = $1
		WHERE m.user_id = $2`, teamID, userID).Scan(&n))
	return n > 0, err
}

// TeamInOrg reports whether the team exists in the organization.
func TeamInOrg(ctx context.Context, q store.Q, orgID, teamID int64) (bool, error) {
	var n int
	err := store.Normalize(q.QueryRowContext(ctx, `SELECT COUNT(*) FROM teams WHERE id = $1 AND org_id = $2`,
		teamID, orgID).Scan(&n))
	return n > 0, err
}

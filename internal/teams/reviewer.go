package teams

import (
	"context"
	"errors"

	"forgeapi/internal/accounts"
	"forgeapi/internal/store"
)

// TeamJSON returns the team id of the organization orgID as the
// platform's team object (with its parent), and false when the
// organization has no such team. Other areas show teams with it (an
// environment's required reviewers). It reads through q: the caller's
// transaction when it has one, else the service's DB.
func (s *Service) TeamJSON(ctx context.Context, q store.Q, base string, orgID, id int64) (any, bool, error) {
	org, err := accounts.ByID(ctx, q, orgID)
	if err != nil {
		return nil, false, err
	}
	t, err := ByID(ctx, q, org, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	j, err := JSON(ctx, q, base, t)
	return j, err == nil, err
}

// TeamMember reports whether the user is a member of the team or of one
// of its child teams, at any depth (an environment's reviewing team
// lets them review). It reads through q: the caller's transaction when
// it has one, else the service's DB.
func (s *Service) TeamMember(ctx context.Context, q store.Q, teamID, userID int64) (bool, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT count(*) FROM team_ancestors ta JOIN team_members m ON m.team_id = ta.team_id
		WHERE ta.ancestor_id = $1 AND m.user_id = $2`, teamID, userID).Scan(&n)
	return n > 0, store.Normalize(err)
}

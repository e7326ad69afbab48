package orgroles

import (
	"context"
	"slices"

	"forgeapi/internal/accounts"
	"forgeapi/internal/store"
	"forgeapi/internal/teams"
)

// UserHolder is a user who holds a role: directly, through teams
// (InheritedFrom), or both.
type UserHolder struct {
	User          *accounts.Account
	Direct        bool
	InheritedFrom []*teams.Team
}

// Assignment is the platform's name of how the holder holds the role:
// direct, indirect (through teams) or mixed.
func (h *UserHolder) Assignment() string {
	switch {
	case h.Direct && len(h.InheritedFrom) > 0:
		return "mixed"
	case h.Direct:
		return "direct"
	}
	return "indirect"
}

// Teams are the organization's teams that hold the role, by name.
func Teams(ctx context.Context, q store.Q, org *accounts.Account, roleID int64) ([]*teams.Team, error) {
	rows, err := q.QueryContext(ctx, `SELECT t.id FROM org_role_teams rt JOIN teams t ON t.id = rt.team_id
		WHERE rt.role_id = $1 AND t.org_id = $2 ORDER BY lower(t.name), t.id`, roleID, org.ID)
	ids, err := store.ScanAll(rows, err, func(s store.Scanner) (int64, error) {
		var id int64
		return id, s.Scan(&id)
	})
	if err != nil {
		return nil, err
	}
	out := make([]*teams.Team, 0, len(ids))
	for _, id := range ids {
		t, err := teams.ByID(ctx, q, org, id)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// holding is one way a user holds a role: directly (teamID 0) or as a
// member of the team or of a team nested under it.
type holding struct {
	userID int64
	teamID int64
}

// Users are the organization's members who hold the role, directly or
// as members of a team that holds it (or of a team nested under one),
// by login.
func Users(ctx context.Context, q store.Q, org *accounts.Account, roleID int64) ([]*UserHolder, error) {
	rows, err := q.QueryContext(ctx, `SELECT user_id, 0 FROM org_role_users WHERE org_id = $1 AND role_id = $2
		UNION ALL
		SELECT tm.user_id, rt.team_id FROM org_role_teams rt JOIN team_ancestors ta ON ta.ancestor_id = rt.team_id
			JOIN team_members tm ON tm.team_id = ta.team_id
		WHERE rt.role_id = $2 AND tm.org_id = $1`, org.ID, roleID)
	list, err := store.ScanAll(rows, err, func(s store.Scanner) (holding, error) {
		var h holding
		return h, s.Scan(&h.userID, &h.teamID)
	})
	if err != nil {
		return nil, err
	}
	byUser := map[int64]*UserHolder{}
	var out []*UserHolder
	for _, r := range list {
		h := byUser[r.userID]
		if h == nil {
			u, err := accounts.ByID(ctx, q, r.userID)
			if err != nil {
				return nil, err
			}
			h = &UserHolder{User: u}
			byUser[r.userID] = h
			out = append(out, h)
		}
		if err := h.add(ctx, q, org, r.teamID); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(out, func(a, b *UserHolder) int { return compareFold(a.User.Login, b.User.Login) })
	return out, nil
}

// add records one holding of the role: directly (teamID 0) or through
// the team, once.
func (h *UserHolder) add(ctx context.Context, q store.Q, org *accounts.Account, teamID int64) error {
	if teamID == 0 {
		h.Direct = true
		return nil
	}
	if slices.ContainsFunc(h.InheritedFrom, func(t *teams.Team) bool { return t.ID == teamID }) {
		return nil
	}
	t, err := teams.ByID(ctx, q, org, teamID)
	if err != nil {
		return err
	}
	h.InheritedFrom = append(h.InheritedFrom, t)
	return nil
}

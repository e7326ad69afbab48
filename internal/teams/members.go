package teams

import (
	"context"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auditlog"
	"forgeapi/internal/events"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/store"
)

// The states of a team membership.
const (
	StateActive  = "active"
	StatePending = "pending" // invited to the organization, not yet accepted
)

// SetMembership gives the user the role in the team and returns the
// membership's state: a member of the organization joins at once (the
// membership event added, team.add_member in the audit log) or has their
// role changed; a user outside it is invited to the organization as a
// member (organization member_invited) and joins the team on accepting,
// pending until then. A user the organization blocks is a 422 (the
// invitation refuses them).
func (s *Service) SetMembership(ctx context.Context, t *Team, user, actor *accounts.Account, role string) (string, error) {
	if role != RoleMember && role != RoleMaintainer {
		return "", apierr.Invalid("TeamMember", "role", apierr.CodeInvalid)
	}
	if user.IsOrg() {
		return "", apierr.Custom("TeamMember", "username", "%s is an organization: only users can be team members.", user.Login)
	}
	var state string
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		orgRole, err := accounts.MemberRole(ctx, tx, t.Org.ID, user.ID)
		if err != nil {
			return err
		}
		if orgRole != "" {
			state = StateActive
			_, err := s.setMember(ctx, tx, t, user, actor, role)
			return err
		}
		if s.Orgs == nil {
			return apierr.Custom("TeamMember", "username", "%s is not a member of %s.", user.Login, t.Org.Login)
		}
		state = StatePending
		if _, err := s.Orgs.SetMembershipTx(ctx, tx, t.Org, user, actor, accounts.RoleMember); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO team_invitations (team_id, org_id, user_id, role, inviter_id, created_at)
			VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (team_id, user_id) DO UPDATE SET role = excluded.role`,
			t.ID, t.Org.ID, user.ID, role, actor.ID, tx.Now())
		return store.Normalize(err)
	})
	return state, err
}

// setMember makes an organization member a member of the team with the
// role; a new member emits membership added and records
// team.add_member. It reports whether the user is new to the team.
func (s *Service) setMember(ctx context.Context, tx *store.Tx, t *Team, user, actor *accounts.Account, role string) (bool, error) {
	cur, err := MemberRole(ctx, tx, t.ID, user.ID)
	if err != nil || cur == role {
		return false, err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO team_members (team_id, org_id, user_id, role, created_at) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (team_id, user_id) DO UPDATE SET role = excluded.role`, t.ID, t.Org.ID, user.ID, role, tx.Now())
	if err != nil || cur != "" {
		return false, store.Normalize(err)
	}
	if err := s.emitMembership(ctx, tx, t, user, actor, "added"); err != nil {
		return false, err
	}
	return true, auditlog.Record(ctx, tx, auditlog.Entry{OrgID: t.Org.ID, Action: "team.add_member", Actor: actor,
		User: user.Login, Data: map[string]any{"team": t.Org.Login + "/" + t.Slug}})
}

// RemoveMembership removes the user from the team (membership removed,
// team.remove_member) or drops their pending membership;
// store.ErrNotFound when there is neither.
func (s *Service) RemoveMembership(ctx context.Context, t *Team, user, actor *accounts.Account) error {
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM team_members WHERE team_id = $1 AND user_id = $2`, t.ID, user.ID)
		if err != nil {
			return store.Normalize(err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			res, err := tx.ExecContext(ctx, `DELETE FROM team_invitations WHERE team_id = $1 AND user_id = $2`, t.ID, user.ID)
			if err != nil {
				return store.Normalize(err)
			}
			if n, _ := res.RowsAffected(); n == 0 {
				return store.ErrNotFound
			}
			return nil
		}
		if err := s.emitMembership(ctx, tx, t, user, actor, "removed"); err != nil {
			return err
		}
		return auditlog.Record(ctx, tx, auditlog.Entry{OrgID: t.Org.ID, Action: "team.remove_member", Actor: actor,
			User: user.Login, Data: map[string]any{"team": t.Org.Login + "/" + t.Slug}})
	})
}

// Accepting is the orgs.Service.Accepting hook: the user who accepted
// the organization's invitation joins the teams it was sent for, with the
// roles it named (membership added for each, the user as actor).
func (s *Service) Accepting(ctx context.Context, tx *store.Tx, org, user *accounts.Account) error {
	rows, err := tx.QueryContext(ctx, `SELECT team_id, role FROM team_invitations WHERE org_id = $1 AND user_id = $2 ORDER BY team_id`,
		org.ID, user.ID)
	if err != nil {
		return store.Normalize(err)
	}
	type pending struct {
		teamID int64
		role   string
	}
	var list []pending
	for rows.Next() {
		var p pending
		if err := rows.Scan(&p.teamID, &p.role); err != nil {
			rows.Close()
			return store.Normalize(err)
		}
		list = append(list, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return store.Normalize(err)
	}
	for _, p := range list {
		t, err := ByID(ctx, tx, org, p.teamID)
		if err != nil {
			return err
		}
		if _, err := s.setMember(ctx, tx, t, user, user, p.role); err != nil {
			return err
		}
	}
	_, err = tx.ExecContext(ctx, `DELETE FROM team_invitations WHERE org_id = $1 AND user_id = $2`, org.ID, user.ID)
	return store.Normalize(err)
}

// emitMembership sends the membership webhook event (scope team).
func (s *Service) emitMembership(ctx context.Context, tx *store.Tx, t *Team, user, actor *accounts.Account, action string) error {
	team, err := webhookTeam(ctx, tx, t)
	if err != nil {
		return err
	}
	return s.Events.Emit(ctx, tx, &events.Event{HookEvent: "membership", Actor: actor, Org: t.Org,
		HookPayload: map[string]any{"action": action, "scope": "team", "member": accounts.ToSimpleUser(httpapi.BaseURL(ctx), user), "team": team}})
}

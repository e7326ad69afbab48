package orgs

import (
	"context"
	"errors"
	"net/http"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auditlog"
	"forgeapi/internal/events"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/store"
)

// Service changes organization memberships and requests organization
// deletions, and emits their organization webhook events in the change's
// transaction.
type Service struct {
	DB     *store.DB
	Events *events.Bus
	// Deleter, when set, is woken when an organization's deletion is
	// requested.
	Deleter *Deleter
	// Accepting, when set, runs in the transaction that turns a user's
	// invitation into a membership, after the membership row is written
	// and before the invitation is deleted (teams turn the invitation's
	// pending team memberships active there).
	Accepting func(ctx context.Context, tx *store.Tx, org, user *accounts.Account) error
}

// The states of a membership.
const (
	StateActive  = "active"  // a member
	StatePending = "pending" // invited, not yet accepted
)

// Membership is a user's standing in an organization: an active
// membership or a pending invitation.
type Membership struct {
	Org          *accounts.Account
	User         *accounts.Account
	State        string
	Role         string // accounts.RoleOwner or accounts.RoleMember
	InvitationID int64  // pending memberships
	Inviter      *accounts.Account
	CreatedAt    time.Time
}

// GetMembership returns the user's membership of the organization, active
// or pending, or store.ErrNotFound.
func (s *Service) GetMembership(ctx context.Context, org, user *accounts.Account) (*Membership, error) {
	return getMembership(ctx, s.DB, org, user)
}

func getMembership(ctx context.Context, q store.Q, org, user *accounts.Account) (*Membership, error) {
	role, err := accounts.MemberRole(ctx, q, org.ID, user.ID)
	if err != nil {
		return nil, err
	}
	if role != "" {
		return &Membership{Org: org, User: user, State: StateActive, Role: role}, nil
	}
	m := &Membership{Org: org, User: user, State: StatePending}
	var inviterID *int64
	err = q.QueryRowContext(ctx, `SELECT id, role, inviter_id, created_at FROM org_invitations WHERE org_id = $1 AND user_id = $2`,
		org.ID, user.ID).Scan(&m.InvitationID, &m.Role, &inviterID, &m.CreatedAt)
	if err != nil {
		return nil, store.Normalize(err)
	}
	if inviterID != nil {
		if m.Inviter, err = accounts.ByID(ctx, q, *inviterID); err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
	}
	return m, nil
}

// SetMembership gives a member the role, or invites a user who is not a
// member with it (a pending membership, and the organization event
// member_invited). Demoting the last owner, or inviting a user the
// organization blocks, is a 422.
func (s *Service) SetMembership(ctx context.Context, org, user, actor *accounts.Account, role string) (*Membership, error) {
	var m *Membership
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		var err error
		m, err = s.SetMembershipTx(ctx, tx, org, user, actor, role)
		return err
	})
	return m, err
}

// SetMembershipTx is SetMembership within the caller's transaction.
func (s *Service) SetMembershipTx(ctx context.Context, tx *store.Tx, org, user, actor *accounts.Account, role string) (*Membership, error) {
	var m *Membership
	err := func() error {
		cur, err := getMembership(ctx, tx, org, user)
		switch {
		case err == nil && cur.State == StateActive:
			if cur.Role == accounts.RoleOwner && role != accounts.RoleOwner {
				if err := refuseLastOwner(ctx, tx, org, http.StatusUnprocessableEntity); err != nil {
					return err
				}
			}
			if err := accounts.SetMember(ctx, tx, org.ID, user.ID, role); err != nil {
				return err
			}
			m = &Membership{Org: org, User: user, State: StateActive, Role: role}
			if cur.Role == role {
				return nil
			}
			return auditlog.Record(ctx, tx, auditlog.Entry{OrgID: org.ID, Action: "org.update_member", Actor: actor,
				User: user.Login, Data: map[string]any{"permission": apiRole(role), "old_permission": apiRole(cur.Role)}})
		case err != nil && !errors.Is(err, store.ErrNotFound):
			return err
		}
		if blocked, err := accounts.Blocks(ctx, tx, org.ID, user.ID); err != nil || blocked {
			if err != nil {
				return err
			}
			return apierr.Custom("Membership", "username", "%s blocks %s: unblock them before inviting them.", org.Login, user.Login)
		}
		_, err = tx.ExecContext(ctx, `
			INSERT INTO org_invitations (org_id, user_id, role, inviter_id, created_at) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (org_id, user_id) DO UPDATE SET role = excluded.role`, org.ID, user.ID, role, actor.ID, tx.Now())
		if err != nil {
			return store.Normalize(err)
		}
		if m, err = getMembership(ctx, tx, org, user); err != nil {
			return err
		}
		if cur != nil { // an invitation changed: no second member_invited
			return nil
		}
		return s.emit(ctx, tx, actor, org, map[string]any{"action": "member_invited",
			"invitation": toInvitationJSON(httpapi.BaseURL(ctx), m), "user": accounts.ToSimpleUser(httpapi.BaseURL(ctx), user)})
	}()
	return m, err
}

// Accept turns the user's pending membership active (the organization
// event member_added); an active membership stays as it is;
// store.ErrNotFound when there is neither.
func (s *Service) Accept(ctx context.Context, org, user *accounts.Account) (*Membership, error) {
	var m *Membership
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		cur, err := getMembership(ctx, tx, org, user)
		if err != nil || cur.State == StateActive {
			m = cur
			return err
		}
		if err := accounts.SetMember(ctx, tx, org.ID, user.ID, cur.Role); err != nil {
			return err
		}
		if s.Accepting != nil {
			if err := s.Accepting(ctx, tx, org, user); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM org_invitations WHERE id = $1`, cur.InvitationID); err != nil {
			return err
		}
		m = &Membership{Org: org, User: user, State: StateActive, Role: cur.Role}
		return s.emit(ctx, tx, user, org, map[string]any{"action": "member_added", "membership": toMembershipJSON(httpapi.BaseURL(ctx), m)})
	})
	return m, err
}

// RemoveMembership removes the user from the organization (the
// organization event member_removed) or cancels the user's invitation;
// store.ErrNotFound when there is neither. Removing the last owner is a
// 403.
func (s *Service) RemoveMembership(ctx context.Context, org, user, actor *accounts.Account) error {
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		cur, err := getMembership(ctx, tx, org, user)
		if err != nil {
			return err
		}
		if cur.State == StatePending {
			_, err := tx.ExecContext(ctx, `DELETE FROM org_invitations WHERE id = $1`, cur.InvitationID)
			return err
		}
		if cur.Role == accounts.RoleOwner {
			if err := refuseLastOwner(ctx, tx, org, http.StatusForbidden); err != nil {
				return err
			}
		}
		if err := accounts.RemoveMember(ctx, tx, org.ID, user.ID); err != nil {
			return err
		}
		return s.emit(ctx, tx, actor, org, map[string]any{"action": "member_removed", "membership": toMembershipJSON(httpapi.BaseURL(ctx), cur)})
	})
}

// refuseLastOwner answers with the status when the organization has one
// owner left, whom the change would take away.
func refuseLastOwner(ctx context.Context, tx *store.Tx, org *accounts.Account, status int) error {
	n, err := accounts.LockedOwnerCount(ctx, tx, org.ID)
	if err != nil {
		return err
	}
	if n <= 1 {
		return apierr.New(status, "An organization needs at least one owner: %s would have none.", org.Login)
	}
	return nil
}

// emit sends the organization webhook event with the fields; the sinks
// add organization and sender.
func (s *Service) emit(ctx context.Context, tx *store.Tx, actor, org *accounts.Account, fields map[string]any) error {
	return s.Events.Emit(ctx, tx, &events.Event{HookEvent: "organization", HookPayload: fields, Actor: actor, Org: org})
}

// UserMemberships returns a page of the user's memberships, active and
// pending ("" state for both), active ones first, each in the order of
// the organizations' ids.
func (s *Service) UserMemberships(ctx context.Context, user *accounts.Account, state string, limit, offset int) ([]*Membership, error) {
	rows, err := s.DB.QueryContext(ctx, `
		SELECT org_id, state, role FROM (
			SELECT org_id, 'active' AS state, role, 0 AS pending FROM org_members WHERE user_id = $1
			UNION ALL
			SELECT org_id, 'pending' AS state, role, 1 AS pending FROM org_invitations WHERE user_id = $1) AS m
		WHERE $2 = '' OR state = $2 ORDER BY pending, org_id LIMIT $3 OFFSET $4`, user.ID, state, limit, offset)
	if err != nil {
		return nil, store.Normalize(err)
	}
	type row struct {
		orgID       int64
		state, role string
	}
	var found []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.orgID, &r.state, &r.role); err != nil {
			rows.Close()
			return nil, store.Normalize(err)
		}
		found = append(found, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, store.Normalize(err)
	}
	out := make([]*Membership, 0, len(found))
	for _, r := range found {
		org, err := accounts.ByID(ctx, s.DB, r.orgID)
		if err != nil {
			return nil, err
		}
		out = append(out, &Membership{Org: org, User: user, State: r.state, Role: r.role})
	}
	return out, nil
}

// Invitations returns a page of the organization's pending invitations,
// oldest first, with their invitees and inviters, and how many there are.
func (s *Service) Invitations(ctx context.Context, org *accounts.Account, limit, offset int) ([]*Membership, int, error) {
	var total int
	if err := s.DB.QueryRowContext(ctx, `SELECT count(*) FROM org_invitations WHERE org_id = $1`, org.ID).Scan(&total); err != nil {
		return nil, 0, store.Normalize(err)
	}
	rows, err := s.DB.QueryContext(ctx, `SELECT user_id FROM org_invitations WHERE org_id = $1 ORDER BY id LIMIT $2 OFFSET $3`,
		org.ID, limit, offset)
	if err != nil {
		return nil, 0, store.Normalize(err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, 0, store.Normalize(err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, 0, store.Normalize(err)
	}
	out := make([]*Membership, 0, len(ids))
	for _, id := range ids {
		user, err := accounts.ByID(ctx, s.DB, id)
		if err != nil {
			return nil, 0, err
		}
		m, err := getMembership(ctx, s.DB, org, user)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, m)
	}
	return out, total, nil
}

// Package collaborators serves a repository's collaborators: users given
// a permission on one repository (pull, triage, push, maintain, admin),
// invited by its admins and added once they accept (members of the
// owning organization are added at once), with the member webhook event
// and MemberEvent. The permission decides access at once everywhere
// (access.CollaboratorRole).
package collaborators

import (
	"context"
	"errors"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/events"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// Service changes collaborators and invitations, with their events.
type Service struct {
	DB     *store.DB
	Events *events.Bus
}

// Invitation is a pending invitation to collaborate on a repository.
type Invitation struct {
	ID         int64
	Repo       *repos.Repository
	Invitee    *accounts.Account
	Inviter    *accounts.Account // nil once gone
	Permission string            // repos.CollaboratorPull ... repos.CollaboratorAdmin
	CreatedAt  time.Time
}

// Set gives the user the permission on the repository: a collaborator's
// permission changes (the member event edited), a member of the owning
// organization is added at once (added), anyone else is invited, or their
// pending invitation gets the new permission; the invitation is returned
// then, nil otherwise. The owner cannot be a collaborator, and a user the
// owner blocks cannot be invited (422 both).
func (s *Service) Set(ctx context.Context, repo *repos.Repository, user, actor *accounts.Account, perm string) (*Invitation, error) {
	if user.ID == repo.Owner.ID {
		return nil, apierr.Custom("Collaborator", "username", "Repository owner cannot be a collaborator")
	}
	var inv *Invitation
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		blocked, err := accounts.Blocks(ctx, tx, repo.Owner.ID, user.ID)
		if err != nil {
			return err
		}
		if blocked {
			return apierr.Custom("Collaborator", "username", "%s is blocked by %s and cannot collaborate on its repositories", user.Login, repo.Owner.Login)
		}
		cur, err := repos.CollaboratorPermission(ctx, tx, repo.ID, user.ID)
		if err != nil {
			return err
		}
		member := ""
		if repo.Owner.IsOrg() {
			if member, err = accounts.MemberRole(ctx, tx, repo.Owner.ID, user.ID); err != nil {
				return err
			}
		}
		switch {
		case cur == perm:
			return nil
		case cur != "":
			if err := setCollaborator(ctx, tx, repo.ID, user.ID, perm); err != nil {
				return err
			}
			return s.emitMember(ctx, tx, repo, user, actor, "edited", cur, perm)
		case member != "":
			if err := setCollaborator(ctx, tx, repo.ID, user.ID, perm); err != nil {
				return err
			}
			return s.emitMember(ctx, tx, repo, user, actor, "added", "", perm)
		}
		var id int64
		err = tx.QueryRowContext(ctx, `INSERT INTO repo_invitations (repository_id, invitee_id, inviter_id, permission, created_at)
			VALUES ($1, $2, $3, $4, $5) ON CONFLICT (repository_id, invitee_id) DO UPDATE SET permission = excluded.permission
			RETURNING id`, repo.ID, user.ID, actor.ID, perm, tx.Now()).Scan(&id)
		if err != nil {
			return store.Normalize(err)
		}
		inv, err = invitationByID(ctx, tx, id)
		return err
	})
	return inv, err
}

// Remove removes the collaborator (the member event removed) or cancels
// their invitation; store.ErrNotFound when there is neither.
func (s *Service) Remove(ctx context.Context, repo *repos.Repository, user, actor *accounts.Account) error {
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		perm, err := repos.CollaboratorPermission(ctx, tx, repo.ID, user.ID)
		if err != nil {
			return err
		}
		if perm != "" {
			if _, err := tx.ExecContext(ctx, `DELETE FROM repo_collaborators WHERE repository_id = $1 AND user_id = $2`, repo.ID, user.ID); err != nil {
				return store.Normalize(err)
			}
			return s.emitMember(ctx, tx, repo, user, actor, "removed", perm, "")
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM repo_invitations WHERE repository_id = $1 AND invitee_id = $2`, repo.ID, user.ID)
		if err != nil {
			return store.Normalize(err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return store.ErrNotFound
		}
		return nil
	})
}

// Accept makes the invitee of the invitation a collaborator with its
// permission (the member event added, with the invitee as actor);
// store.ErrNotFound when the invitation is not theirs or not there.
func (s *Service) Accept(ctx context.Context, id int64, invitee *accounts.Account) error {
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		inv, err := invitationByID(ctx, tx, id)
		if err != nil {
			return err
		}
		if inv.Invitee.ID != invitee.ID {
			return store.ErrNotFound
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM repo_invitations WHERE id = $1`, id); err != nil {
			return store.Normalize(err)
		}
		if err := setCollaborator(ctx, tx, inv.Repo.ID, invitee.ID, inv.Permission); err != nil {
			return err
		}
		return s.emitMember(ctx, tx, inv.Repo, invitee, invitee, "added", "", inv.Permission)
	})
}

// Delete deletes the invitation when allow accepts it (the invitee
// declining, or an admin of its repository cancelling);
// store.ErrNotFound otherwise.
func (s *Service) Delete(ctx context.Context, id int64, allow func(*Invitation) bool) error {
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		inv, err := invitationByID(ctx, tx, id)
		if err != nil {
			return err
		}
		if !allow(inv) {
			return store.ErrNotFound
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM repo_invitations WHERE id = $1`, id)
		return store.Normalize(err)
	})
}

// UpdateInvitation changes the permission of a pending invitation of the
// repository; store.ErrNotFound when the repository has no such one.
func (s *Service) UpdateInvitation(ctx context.Context, repoID, id int64, perm string) (*Invitation, error) {
	var inv *Invitation
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE repo_invitations SET permission = $1 WHERE id = $2 AND repository_id = $3`, perm, id, repoID)
		if err != nil {
			return store.Normalize(err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return store.ErrNotFound
		}
		inv, err = invitationByID(ctx, tx, id)
		return err
	})
	return inv, err
}

// setCollaborator gives the user the permission on the repository.
func setCollaborator(ctx context.Context, tx store.Q, repoID, userID int64, perm string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO repo_collaborators (repository_id, user_id, permission, created_at)
		VALUES ($1, $2, $3, $4) ON CONFLICT (repository_id, user_id) DO UPDATE SET permission = excluded.permission`,
		repoID, userID, perm, store.Now())
	return store.Normalize(err)
}

// emitMember sends the member webhook event (added, edited or removed,
// with the permission from and to, "" where none) and, for added, the
// MemberEvent of the feeds.
func (s *Service) emitMember(ctx context.Context, tx *store.Tx, repo *repos.Repository, user, actor *accounts.Account, action, from, to string) error {
	member := accounts.ToSimpleUser(httpapi.BaseURL(ctx), user)
	payload := map[string]any{"action": action, "member": member}
	switch action {
	case "added":
		payload["changes"] = map[string]any{"permission": map[string]any{"to": LegacyPermission(to)},
			"role_name": map[string]any{"to": RoleName(to)}}
	case "edited":
		payload["changes"] = map[string]any{"old_permission": map[string]any{"from": LegacyPermission(from)},
			"permission": map[string]any{"from": LegacyPermission(from), "to": LegacyPermission(to)}}
	}
	e := &events.Event{HookEvent: "member", HookPayload: payload, Actor: actor, Repo: repo, Public: !repo.Private}
	if action == "added" {
		e.FeedType, e.FeedPayload = "MemberEvent", map[string]any{"action": action, "member": member}
	}
	return s.Events.Emit(ctx, tx, e)
}

// invitationByID loads an invitation with its repository and people.
func invitationByID(ctx context.Context, q store.Q, id int64) (*Invitation, error) {
	inv := &Invitation{ID: id}
	var repoID, inviteeID int64
	var inviterID *int64
	err := q.QueryRowContext(ctx, `SELECT repository_id, invitee_id, inviter_id, permission, created_at FROM repo_invitations WHERE id = $1`, id).
		Scan(&repoID, &inviteeID, &inviterID, &inv.Permission, &inv.CreatedAt)
	if err != nil {
		return nil, store.Normalize(err)
	}
	if inv.Repo, err = repos.ByID(ctx, q, repoID); err != nil {
		return nil, err
	}
	if inv.Invitee, err = accounts.ByID(ctx, q, inviteeID); err != nil {
		return nil, err
	}
	if inviterID != nil {
		if inv.Inviter, err = accounts.ByID(ctx, q, *inviterID); err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
	}
	return inv, nil
}

// invitations returns a page of the invitations of a repository (column
// repository_id) or of an invitee (invitee_id), oldest first, with one
// more than limit when more follow.
func invitations(ctx context.Context, q store.Q, byInvitee bool, id int64, limit, offset int) ([]*Invitation, error) {
	query := `SELECT id FROM repo_invitations WHERE repository_id = $1 ORDER BY id LIMIT $2 OFFSET $3`
	if byInvitee {
		query = `SELECT id FROM repo_invitations WHERE invitee_id = $1 ORDER BY id LIMIT $2 OFFSET $3`
	}
	rows, err := q.QueryContext(ctx, query, id, limit+1, offset)
	if err != nil {
		return nil, store.Normalize(err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, store.Normalize(err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, store.Normalize(err)
	}
	out := make([]*Invitation, 0, len(ids))
	for _, id := range ids {
		inv, err := invitationByID(ctx, q, id)
		if err != nil {
			return nil, err
		}
		out = append(out, inv)
	}
	return out, nil
}

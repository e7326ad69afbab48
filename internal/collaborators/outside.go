package collaborators

import (
	"context"

	"forgeapi/internal/accounts"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// OutsideCollaborators is a page of the organization's outside
// collaborators, by id: users who collaborate on one of its repositories
// and are not its members; with twoFactorDisabled,
// only those without two-factor authentication. total counts them all.
func OutsideCollaborators(ctx context.Context, q store.Q, org *accounts.Account, twoFactorDisabled bool,
	limit, offset int) (list []*accounts.Account, total int, err error) {
	where := `FROM accounts a WHERE a.id IN (
			SELECT c.user_id FROM repo_collaborators c JOIN repositories r ON r.id = c.repository_id WHERE r.owner_id = $1)
		AND NOT EXISTS (SELECT 1 FROM org_members m WHERE m.org_id = $1 AND m.user_id = a.id)
		AND (NOT $2 OR a.totp_secret = '')`
	if err := q.QueryRowContext(ctx, `SELECT count(*) `+where, org.ID, twoFactorDisabled).Scan(&total); err != nil {
		return nil, 0, store.Normalize(err)
	}
	rows, err := q.QueryContext(ctx, `SELECT a.id `+where+` ORDER BY a.id LIMIT $3 OFFSET $4`,
		org.ID, twoFactorDisabled, limit, offset)
	ids, err := store.ScanAll(rows, err, func(s store.Scanner) (int64, error) {
		var id int64
		return id, s.Scan(&id)
	})
	if err != nil || len(ids) == 0 {
		return nil, total, err
	}
	byID, err := accounts.ByIDs(ctx, q, ids)
	if err != nil {
		return nil, 0, err
	}
	for _, id := range ids {
		if a := byID[id]; a != nil {
			list = append(list, a)
		}
	}
	return list, total, nil
}

// KeepTeamAccessTx makes the user, a member of the organization who is
// about to leave it (converted to an outside collaborator), a
// collaborator on each of its repositories that their teams give them,
// with the highest permission the teams give (the member event added, or
// edited for a collaborator whose permission rises). Run it in the
// leaving's transaction, before the membership goes.
func (s *Service) KeepTeamAccessTx(ctx context.Context, tx *store.Tx, org, user, actor *accounts.Account) error {
	rows, err := tx.QueryContext(ctx, `SELECT g.repository_id, max(g.rank) FROM repo_grants g
		JOIN repositories r ON r.id = g.repository_id
		WHERE g.user_id = $1 AND r.owner_id = $2 GROUP BY g.repository_id ORDER BY g.repository_id`, user.ID, org.ID)
	type grant struct {
		repoID int64
		rank   int
	}
	grants, err := store.ScanAll(rows, err, func(sc store.Scanner) (grant, error) {
		var g grant
		return g, sc.Scan(&g.repoID, &g.rank)
	})
	if err != nil {
		return err
	}
	for _, g := range grants {
		if err := s.keepGrant(ctx, tx, g.repoID, permissionOfRank(g.rank), user, actor); err != nil {
			return err
		}
	}
	return nil
}

// keepGrant makes the user a collaborator on the repository with perm,
// unless they are one with it already.
func (s *Service) keepGrant(ctx context.Context, tx *store.Tx, repoID int64, perm string, user, actor *accounts.Account) error {
	cur, err := repos.CollaboratorPermission(ctx, tx, repoID, user.ID)
	if err != nil || cur == perm {
		return err
	}
	repo, err := repos.ByID(ctx, tx, repoID)
	if err != nil {
		return err
	}
	if err := setCollaborator(ctx, tx, repoID, user.ID, perm); err != nil {
		return err
	}
	if cur == "" {
		return s.emitMember(ctx, tx, repo, user, actor, "added", "", perm)
	}
	return s.emitMember(ctx, tx, repo, user, actor, "edited", cur, perm)
}

// permissionOfRank names repo_grants' rank of a permission.
func permissionOfRank(rank int) string {
	switch rank {
	case 5:
		return repos.CollaboratorAdmin
	case 4:
		return repos.CollaboratorMaintain
	case 3:
		return repos.CollaboratorPush
	case 2:
		return repos.CollaboratorTriage
	}
	return repos.CollaboratorPull
}

// RemoveFromOrg removes the user from every repository of the
// organization they collaborate on (the member event removed for each)
// and cancels their invitations to its repositories, in one transaction.
func (s *Service) RemoveFromOrg(ctx context.Context, org, user, actor *accounts.Account) error {
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT c.repository_id, c.permission FROM repo_collaborators c
			JOIN repositories r ON r.id = c.repository_id
			WHERE c.user_id = $1 AND r.owner_id = $2 ORDER BY c.repository_id`, user.ID, org.ID)
		type collab struct {
			repoID int64
			perm   string
		}
		list, err := store.ScanAll(rows, err, func(sc store.Scanner) (collab, error) {
			var c collab
			return c, sc.Scan(&c.repoID, &c.perm)
		})
		if err != nil {
			return err
		}
		for _, c := range list {
			repo, err := repos.ByID(ctx, tx, c.repoID)
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM repo_collaborators WHERE repository_id = $1 AND user_id = $2`,
				c.repoID, user.ID); err != nil {
				return store.Normalize(err)
			}
			if err := s.emitMember(ctx, tx, repo, user, actor, "removed", c.perm, ""); err != nil {
				return err
			}
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM repo_invitations WHERE invitee_id = $1
			AND repository_id IN (SELECT id FROM repositories WHERE owner_id = $2)`, user.ID, org.ID)
		return store.Normalize(err)
	})
}

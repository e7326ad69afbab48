package teams

import (
	"context"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auditlog"
	"forgeapi/internal/events"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// SetRepo gives the team the permission on the repository, which the
// organization must own (422 otherwise); "" is the team's own
// permission, and the name of one of the organization's custom
// repository roles gives the role's base permission. A new repository emits team added_to_repository and
// team_add and records team.add_repository; a changed permission emits
// team edited (changes.repository.permissions.from) and records
// team.update_repository_permission.
func (s *Service) SetRepo(ctx context.Context, t *Team, repo *repos.Repository, actor *accounts.Account, perm string) error {
	if perm == "" {
		perm = t.Permission
	}
	if rank(perm) == 0 {
		custom, err := repos.CustomRolePermission(ctx, s.DB, t.Org.ID, perm)
		if err != nil {
			return err
		}
		perm = custom
	}
	if rank(perm) == 0 {
		return apierr.Invalid("TeamRepository", "permission", apierr.CodeInvalid)
	}
	if repo.Owner.ID != t.Org.ID {
		return apierr.Unprocessable("The repository %s is not owned by %s.", repo.FullName(), t.Org.Login)
	}
	return s.DB.Tx(ctx, func(tx *store.Tx) error { return s.setRepo(ctx, tx, t, repo, actor, perm) })
}

func (s *Service) setRepo(ctx context.Context, tx *store.Tx, t *Team, repo *repos.Repository, actor *accounts.Account, perm string) error {
	cur, err := RepoPermission(ctx, tx, t.ID, repo.ID)
	if err != nil || cur == perm {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO team_repos (team_id, repository_id, permission, created_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (team_id, repository_id) DO UPDATE SET permission = excluded.permission`, t.ID, repo.ID, perm, tx.Now())
	if err != nil {
		return store.Normalize(err)
	}
	entry := auditlog.Entry{OrgID: t.Org.ID, Action: "team.add_repository", Actor: actor, Repo: repo.FullName(),
		Data: map[string]any{"team": t.Org.Login + "/" + t.Slug, "permission": perm}}
	if cur != "" {
		entry.Action = "team.update_repository_permission"
		entry.Data["old_permission"] = cur
		from := flags(cur)
		changes := map[string]any{"repository": map[string]any{"permissions": map[string]any{"from": map[string]any{
			"admin": from.Admin, "pull": from.Pull, "push": from.Push}}}}
		if err := s.emitTeam(ctx, tx, actor, t, "edited", map[string]any{"changes": changes}, repo); err != nil {
			return err
		}
		return auditlog.Record(ctx, tx, entry)
	}
	if err := s.emitTeam(ctx, tx, actor, t, "added_to_repository", nil, repo); err != nil {
		return err
	}
	team, err := webhookTeam(ctx, tx, t)
	if err != nil {
		return err
	}
	if err := s.Events.Emit(ctx, tx, &events.Event{HookEvent: "team_add", HookPayload: map[string]any{"team": team},
		Actor: actor, Org: t.Org, Repo: repo}); err != nil {
		return err
	}
	return auditlog.Record(ctx, tx, entry)
}

// RemoveRepo takes the team's permission on the repository away (team
// removed_from_repository, team.remove_repository); store.ErrNotFound
// when it has none.
func (s *Service) RemoveRepo(ctx context.Context, t *Team, repo *repos.Repository, actor *accounts.Account) error {
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM team_repos WHERE team_id = $1 AND repository_id = $2`, t.ID, repo.ID)
		if err != nil {
			return store.Normalize(err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return store.ErrNotFound
		}
		if err := s.emitTeam(ctx, tx, actor, t, "removed_from_repository", nil, repo); err != nil {
			return err
		}
		return auditlog.Record(ctx, tx, auditlog.Entry{OrgID: t.Org.ID, Action: "team.remove_repository", Actor: actor,
			Repo: repo.FullName(), Data: map[string]any{"team": t.Org.Login + "/" + t.Slug}})
	})
}

// Sink drops the team permissions of a repository transferred out of
// their organization, in the transfer's transaction.
type Sink struct{}

// HandleEvent implements events.Sink.
func (Sink) HandleEvent(ctx context.Context, tx *store.Tx, e *events.Event) error {
	if e.HookEvent != "repository" || e.Repo == nil || e.HookPayload["action"] != "transferred" {
		return nil
	}
	_, err := tx.ExecContext(ctx, `DELETE FROM team_repos WHERE repository_id = $1
		AND team_id IN (SELECT id FROM teams WHERE org_id <> $2)`, e.Repo.ID, e.Repo.Owner.ID)
	return store.Normalize(err)
}

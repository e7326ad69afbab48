package teams

import (
	"context"
	"errors"
	"strings"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auditlog"
	"forgeapi/internal/events"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/orgs"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// Service changes teams, their members and their repositories, with
// their webhook events and audit log entries in each change's
// transaction.
type Service struct {
	DB     *store.DB
	Events *events.Bus
	// Orgs invites a user outside the organization whom a team membership
	// names (nil: such a membership is a 422).
	Orgs *orgs.Service
}

const resource = "Team"

// Fields are a team's settable fields; nil leaves a field as it is (on
// create: its default).
type Fields struct {
	Name                *string
	Description         *string
	Privacy             *string
	NotificationSetting *string
	Permission          *string
	// ParentID names the parent team: nil keeps it, 0 makes the team
	// top-level.
	ParentID *int64
}

// The longest name and description, in characters.
const (
	MaxNameLength        = 255
	MaxDescriptionLength = 1024
)

// lockNesting locks the organization (accounts.Lock) when the fields
// change what validate checks of the other teams, a parent or a privacy:
// two teams made each other's parent at once would each find no cycle,
// and nest each other.
func lockNesting(ctx context.Context, tx *store.Tx, org *accounts.Account, f Fields) error {
	if f.ParentID == nil && f.Privacy == nil {
		return nil
	}
	return accounts.Lock(ctx, tx, org.ID)
}

// validate checks the fields against the team being changed (nil on
// create) and returns the parent team they name, if any.
func validate(ctx context.Context, q store.Q, org *accounts.Account, cur *Team, f Fields) (*Team, error) {
	var errs apierr.Fields
	if f.Name != nil {
		if strings.TrimSpace(*f.Name) == "" || Slugify(*f.Name) == "" {
			errs.Add(resource, "name", apierr.CodeInvalid)
		}
		errs.MaxLength(resource, "name", *f.Name, MaxNameLength)
	}
	if f.Description != nil {
		errs.MaxLength(resource, "description", *f.Description, MaxDescriptionLength)
	}
	if f.Privacy != nil && *f.Privacy != PrivacySecret && *f.Privacy != PrivacyClosed {
		errs.Add(resource, "privacy", apierr.CodeInvalid)
	}
	if f.NotificationSetting != nil && *f.NotificationSetting != NotificationsEnabled && *f.NotificationSetting != NotificationsDisabled {
		errs.Add(resource, "notification_setting", apierr.CodeInvalid)
	}
	if f.Permission != nil && *f.Permission != "pull" && *f.Permission != "push" {
		errs.Add(resource, "permission", apierr.CodeInvalid)
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	if f.ParentID == nil || *f.ParentID == 0 {
		return nil, nil
	}
	parent, err := ByID(ctx, q, org, *f.ParentID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, apierr.Custom(resource, "parent_team_id", "Parent team %d is not a team of %s.", *f.ParentID, org.Login)
	}
	if err != nil {
		return nil, err
	}
	if parent.Privacy == PrivacySecret {
		return nil, apierr.Custom(resource, "parent_team_id", "A secret team cannot be a parent team.")
	}
	if cur != nil {
		for p := parent; p != nil; {
			if p.ID == cur.ID {
				return nil, apierr.Custom(resource, "parent_team_id", "A team cannot be nested under itself or one of its child teams.")
			}
			if p.ParentID == 0 {
				break
			}
			if p, err = ByID(ctx, q, org, p.ParentID); err != nil {
				return nil, err
			}
		}
	}
	return parent, nil
}

// New is what Create needs besides the fields.
type New struct {
	Fields
	Maintainers []string // logins of organization members made maintainers
	RepoNames   []string // OWNER/NAME of the organization's repositories the team gets its permission on
}

// Create makes a team in the organization (the team event created,
// team.create in the audit log). The creator, when a member of the
// organization, becomes a maintainer. A nested team is closed; a
// top-level one secret unless it says otherwise.
func (s *Service) Create(ctx context.Context, org, actor *accounts.Account, n New) (*Team, error) {
	if n.Name == nil {
		return nil, apierr.Invalid(resource, "name", apierr.CodeMissingField)
	}
	var t *Team
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		if err := lockNesting(ctx, tx, org, n.Fields); err != nil {
			return err
		}
		parent, err := validate(ctx, tx, org, nil, n.Fields)
		if err != nil {
			return err
		}
		t = &Team{Org: org, Name: *n.Name, Slug: Slugify(*n.Name), Description: deref(n.Description, ""),
			NotificationSetting: deref(n.NotificationSetting, NotificationsEnabled), Permission: deref(n.Permission, "pull")}
		t.Privacy = deref(n.Privacy, PrivacySecret)
		if parent != nil {
			t.ParentID = parent.ID
			if n.Privacy == nil {
				t.Privacy = PrivacyClosed
			}
		}
		if t.ParentID != 0 && t.Privacy == PrivacySecret {
			return apierr.Custom(resource, "privacy", "A nested team cannot be secret.")
		}
		if err := insertTeam(ctx, tx, t); err != nil {
			return err
		}
		if err := nest(ctx, tx, t.ID, t.ParentID); err != nil {
			return err
		}
		if err := s.emitTeam(ctx, tx, actor, t, "created", nil, nil); err != nil {
			return err
		}
		if err := auditlog.Record(ctx, tx, auditlog.Entry{OrgID: org.ID, Action: "team.create", Actor: actor,
			Data: map[string]any{"team": t.Org.Login + "/" + t.Slug}}); err != nil {
			return err
		}
		return s.addInitial(ctx, tx, t, actor, n)
	})
	return t, err
}

// addInitial adds the creator and the maintainers as maintainers and
// gives the team its permission on the named repositories.
func (s *Service) addInitial(ctx context.Context, tx *store.Tx, t *Team, actor *accounts.Account, n New) error {
	if role, err := accounts.MemberRole(ctx, tx, t.Org.ID, actor.ID); err != nil {
		return err
	} else if role != "" {
		if _, err := s.setMember(ctx, tx, t, actor, actor, RoleMaintainer); err != nil {
			return err
		}
	}
	for _, login := range n.Maintainers {
		user, err := accounts.ByLogin(ctx, tx, login)
		if errors.Is(err, store.ErrNotFound) {
			return apierr.Custom(resource, "maintainers", "%s is not a user.", login)
		}
		if err != nil {
			return err
		}
		if role, err := accounts.MemberRole(ctx, tx, t.Org.ID, user.ID); err != nil {
			return err
		} else if role == "" {
			return apierr.Custom(resource, "maintainers", "%s is not a member of %s.", login, t.Org.Login)
		}
		if _, err := s.setMember(ctx, tx, t, user, actor, RoleMaintainer); err != nil {
			return err
		}
	}
	for _, full := range n.RepoNames {
		owner, name, _ := strings.Cut(full, "/")
		repo, err := repos.ByOwnerAndName(ctx, tx, owner, name)
		if errors.Is(err, store.ErrNotFound) || err == nil && repo.Owner.ID != t.Org.ID {
			return apierr.Custom(resource, "repo_names", "%s is not a repository of %s.", full, t.Org.Login)
		}
		if err != nil {
			return err
		}
		if err := s.setRepo(ctx, tx, t, repo, actor, t.Permission); err != nil {
			return err
		}
	}
	return nil
}

func deref(p *string, def string) string {
	if p == nil {
		return def
	}
	return *p
}

func insertTeam(ctx context.Context, tx store.Q, t *Team) error {
	now := store.Now()
	t.CreatedAt, t.UpdatedAt = now, now
	var parent *int64
	if t.ParentID != 0 {
		parent = &t.ParentID
	}
	err := store.Normalize(tx.QueryRowContext(ctx, `INSERT INTO teams (org_id, parent_id, name, slug, description, privacy,
		notification_setting, permission, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9) RETURNING id`,
		t.Org.ID, parent, t.Name, t.Slug, t.Description, t.Privacy, t.NotificationSetting, t.Permission, now).Scan(&t.ID))
	if errors.Is(err, store.ErrConflict) {
		return apierr.Custom(resource, "name", "Name must be unique for this org")
	}
	return err
}

// nest records a new team's place in team_ancestors (the closure of
// parent_id that repo_grants reads): the team itself and, under a
// parent (0: none), the parent's ancestors.
func nest(ctx context.Context, tx store.Q, teamID, parentID int64) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO team_ancestors (team_id, ancestor_id) VALUES ($1, $1)`, teamID); err != nil {
		return store.Normalize(err)
	}
	if parentID == 0 {
		return nil
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO team_ancestors (team_id, ancestor_id)
		SELECT $1, ancestor_id FROM team_ancestors WHERE team_id = $2`, teamID, parentID)
	return store.Normalize(err)
}

// renest moves the team, with its child teams, under a new parent (0:
// top level) in team_ancestors: the subtree loses the teams above the
// team and gains the new parent's ancestors. validate has refused a
// parent inside the subtree.
func renest(ctx context.Context, tx store.Q, teamID, parentID int64) error {
	const subtree = `SELECT team_id FROM team_ancestors WHERE ancestor_id = $1`
	if _, err := tx.ExecContext(ctx, `DELETE FROM team_ancestors WHERE team_id IN (`+subtree+`)
		AND ancestor_id NOT IN (`+subtree+`)`, teamID); err != nil {
		return store.Normalize(err)
	}
	if parentID == 0 {
		return nil
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO team_ancestors (team_id, ancestor_id)
		SELECT d.team_id, a.ancestor_id FROM team_ancestors d JOIN team_ancestors a ON a.team_id = $2
		WHERE d.ancestor_id = $1`, teamID, parentID)
	return store.Normalize(err)
}

// Update changes the team's fields (the team event edited with the
// previous values of those that changed).
func (s *Service) Update(ctx context.Context, t *Team, actor *accounts.Account, f Fields) (*Team, error) {
	var out *Team
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		if err := lockNesting(ctx, tx, t.Org, f); err != nil {
			return err
		}
		if _, err := validate(ctx, tx, t.Org, t, f); err != nil {
			return err
		}
		next := *t
		changes := map[string]any{}
		set := func(field string, cur *string, v *string) {
			if v != nil && *v != *cur {
				changes[field] = map[string]any{"from": *cur}
				*cur = *v
			}
		}
		set("name", &next.Name, f.Name)
		set("description", &next.Description, f.Description)
		set("privacy", &next.Privacy, f.Privacy)
		set("notification_setting", &next.NotificationSetting, f.NotificationSetting)
		if f.Permission != nil {
			next.Permission = *f.Permission
		}
		if f.ParentID != nil {
			next.ParentID = *f.ParentID
		}
		if next.ParentID != 0 && next.Privacy == PrivacySecret {
			return apierr.Custom(resource, "privacy", "A nested team cannot be secret.")
		}
		next.Slug = Slugify(next.Name)
		next.UpdatedAt = tx.Now()
		var parent *int64
		if next.ParentID != 0 {
			parent = &next.ParentID
		}
		_, err := tx.ExecContext(ctx, `UPDATE teams SET parent_id = $1, name = $2, slug = $3, description = $4, privacy = $5,
			notification_setting = $6, permission = $7, updated_at = $8 WHERE id = $9`, parent, next.Name, next.Slug,
			next.Description, next.Privacy, next.NotificationSetting, next.Permission, next.UpdatedAt, t.ID)
		if err = store.Normalize(err); errors.Is(err, store.ErrConflict) {
			return apierr.Custom(resource, "name", "Name must be unique for this org")
		} else if err != nil {
			return err
		}
		if next.ParentID != t.ParentID {
			if err := renest(ctx, tx, t.ID, next.ParentID); err != nil {
				return err
			}
		}
		out = &next
		if len(changes) == 0 {
			return nil
		}
		return s.emitTeam(ctx, tx, actor, &next, "edited", map[string]any{"changes": changes}, nil)
	})
	return out, err
}

// Delete deletes the team and its child teams (the team event deleted,
// team.destroy in the audit log).
func (s *Service) Delete(ctx context.Context, t *Team, actor *accounts.Account) error {
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM teams WHERE id = $1`, t.ID); err != nil {
			return store.Normalize(err)
		}
		if err := s.emitTeam(ctx, tx, actor, t, "deleted", nil, nil); err != nil {
			return err
		}
		return auditlog.Record(ctx, tx, auditlog.Entry{OrgID: t.Org.ID, Action: "team.destroy", Actor: actor,
			Data: map[string]any{"team": t.Org.Login + "/" + t.Slug}})
	})
}

// emitTeam sends the team webhook event with the fields besides action
// and team; repo, when set, is the repository it concerns.
func (s *Service) emitTeam(ctx context.Context, tx *store.Tx, actor *accounts.Account, t *Team, action string, fields map[string]any, repo *repos.Repository) error {
	payload, err := webhookTeam(ctx, tx, t)
	if err != nil {
		return err
	}
	out := map[string]any{"action": action, "team": payload}
	for k, v := range fields {
		out[k] = v
	}
	return s.Events.Emit(ctx, tx, &events.Event{HookEvent: "team", HookPayload: out, Actor: actor, Org: t.Org, Repo: repo})
}

// webhookTeam is the team object of webhook payloads, with its parent.
func webhookTeam(ctx context.Context, q store.Q, t *Team) (teamJSON, error) {
	parent, err := parentOf(ctx, q, t)
	if err != nil {
		return teamJSON{}, err
	}
	return toTeamJSON(httpapi.BaseURL(ctx), t, parent), nil
}

// parentOf returns the team's parent, nil for a top-level team.
func parentOf(ctx context.Context, q store.Q, t *Team) (*Team, error) {
	if t.ParentID == 0 {
		return nil, nil
	}
	return ByID(ctx, q, t.Org, t.ParentID)
}

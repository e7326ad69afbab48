// Package teams serves an organization's teams as the platform has them:
// teams with a name, slug, description, privacy (secret or closed) and an
// optional parent; their members (member or maintainer, each a member of
// the organization: a user outside it is invited to the organization and
// joins the team on accepting); and the permission they hold on the
// organization's repositories. A team's repository permission decides
// access wherever a collaborator's does: both are rows of the repo_grants
// view, which internal/access and the lists read. Every change emits the
// team, team_add and membership webhook events and writes its audit log
// entry in the change's transaction.
package teams

import (
	"context"
	"errors"
	"strings"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/store"
)

// The privacy of a team.
const (
	PrivacySecret = "secret" // visible to organization owners and the team's members
	PrivacyClosed = "closed" // visible to every member of the organization
)

// The roles of a team member.
const (
	RoleMember     = "member"
	RoleMaintainer = "maintainer"
)

// The notification settings of a team.
const (
	NotificationsEnabled  = "notifications_enabled"
	NotificationsDisabled = "notifications_disabled"
)

// Permissions are the repository permissions a team can hold, lowest
// first (the platform's names).
var Permissions = []string{"pull", "triage", "push", "maintain", "admin"}

// Team is a team row.
type Team struct {
	ID                  int64
	Org                 *accounts.Account
	ParentID            int64 // 0: not nested
	Name                string
	Slug                string
	Description         string
	Privacy             string
	NotificationSetting string
	Permission          string // pull or push: the default for repositories added without one
	CreatedAt           time.Time
	UpdatedAt           time.Time
}

const teamColumns = `id, COALESCE(parent_id, 0), name, slug, description, privacy, notification_setting, permission, created_at, updated_at`

func scanTeam(org *accounts.Account, row interface{ Scan(...any) error }) (*Team, error) {
	t := &Team{Org: org}
	err := row.Scan(&t.ID, &t.ParentID, &t.Name, &t.Slug, &t.Description, &t.Privacy, &t.NotificationSetting,
		&t.Permission, &t.CreatedAt, &t.UpdatedAt)
	if err != nil {
		return nil, store.Normalize(err)
	}
	return t, nil
}

// BySlug returns the organization's team with the slug (case-insensitive),
// or store.ErrNotFound.
func BySlug(ctx context.Context, q store.Q, org *accounts.Account, slug string) (*Team, error) {
	return scanTeam(org, q.QueryRowContext(ctx, `SELECT `+teamColumns+` FROM teams WHERE org_id = $1 AND slug = $2`,
		org.ID, strings.ToLower(slug)))
}

// ByID returns the organization's team with the id, or store.ErrNotFound.
func ByID(ctx context.Context, q store.Q, org *accounts.Account, id int64) (*Team, error) {
	return scanTeam(org, q.QueryRowContext(ctx, `SELECT `+teamColumns+` FROM teams WHERE org_id = $1 AND id = $2`, org.ID, id))
}

// listTeams runs a query of teamColumns for teams of one organization.
func listTeams(ctx context.Context, q store.Q, org *accounts.Account, query string, args ...any) ([]*Team, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, store.Normalize(err)
	}
	defer rows.Close()
	var out []*Team
	for rows.Next() {
		t, err := scanTeam(org, rows)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, store.Normalize(rows.Err())
}

// Slugify is the platform's slug of a team name: lower case, every run of
// characters other than letters and digits a single '-', none at either
// end.
func Slugify(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
			continue
		}
		dash = true
	}
	return b.String()
}

// MemberRole returns the user's role in the team ("" when not a member).
func MemberRole(ctx context.Context, q store.Q, teamID, userID int64) (string, error) {
	var role string
	err := store.Normalize(q.QueryRowContext(ctx, `SELECT role FROM team_members WHERE team_id = $1 AND user_id = $2`,
		teamID, userID).Scan(&role))
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	return role, err
}

// pendingRole returns the role of the user's pending membership of the
// team ("" when there is none).
func pendingRole(ctx context.Context, q store.Q, teamID, userID int64) (string, error) {
	var role string
	err := store.Normalize(q.QueryRowContext(ctx, `SELECT role FROM team_invitations WHERE team_id = $1 AND user_id = $2`,
		teamID, userID).Scan(&role))
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	return role, err
}

// counts returns the team's number of members and repositories.
func counts(ctx context.Context, q store.Q, teamID int64) (members, repos int, err error) {
	err = store.Normalize(q.QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM team_members WHERE team_id = $1), (SELECT count(*) FROM team_repos WHERE team_id = $1)`,
		teamID).Scan(&members, &repos))
	return members, repos, err
}

// RepoPermission returns the team's permission on the repository ("" when
// it holds none).
func RepoPermission(ctx context.Context, q store.Q, teamID, repoID int64) (string, error) {
	var perm string
	err := store.Normalize(q.QueryRowContext(ctx, `SELECT permission FROM team_repos WHERE team_id = $1 AND repository_id = $2`,
		teamID, repoID).Scan(&perm))
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	return perm, err
}

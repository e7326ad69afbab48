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
	"forgeapi/internal/repos"
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
	return store.ScanAll(rows, err, func(s store.Scanner) (*Team, error) { return scanTeam(org, s) })
}

// orgTeams returns the organization's teams, by name.
func orgTeams(ctx context.Context, q store.Q, org *accounts.Account) ([]*Team, error) {
	return listTeams(ctx, q, org, `SELECT `+teamColumns+` FROM teams WHERE org_id = $1 ORDER BY lower(name), id`, org.ID)
}

// repoTeams returns the teams of the repository's owner that have a
// permission on the repository, by name.
func repoTeams(ctx context.Context, q store.Q, repo *repos.Repository) ([]*Team, error) {
	return listTeams(ctx, q, repo.Owner, `SELECT `+teamColumns+` FROM teams
		WHERE org_id = $1 AND id IN (SELECT team_id FROM team_repos WHERE repository_id = $2) ORDER BY lower(name), id`,
		repo.Owner.ID, repo.ID)
}

// teamRef names a team and its organization.
type teamRef struct{ orgID, teamID int64 }

// memberTeams returns the teams the user is a direct member of, in the
// organization orgID (every organization when 0), by organization, then
// by name.
func memberTeams(ctx context.Context, q store.Q, userID, orgID int64) ([]teamRef, error) {
	rows, err := q.QueryContext(ctx, `SELECT t.org_id, t.id FROM team_members m JOIN teams t ON t.id = m.team_id
		WHERE m.user_id = $1 AND ($2 = 0 OR t.org_id = $2) ORDER BY t.org_id, lower(t.name), t.id`, userID, orgID)
	return store.ScanAll(rows, err, func(s store.Scanner) (x teamRef, err error) { return x, s.Scan(&x.orgID, &x.teamID) })
}

// repoGrant is a repository and the permission a team has on it.
type repoGrant struct {
	repoID int64
	perm   string
}

// repoGrants returns the repositories of the team and of its parent teams
// (at any depth), each once with the highest permission, by name.
func repoGrants(ctx context.Context, q store.Q, teamID int64) ([]repoGrant, error) {
	rows, err := q.QueryContext(ctx, `SELECT tr.repository_id, tr.permission FROM team_ancestors ta
		JOIN team_repos tr ON tr.team_id = ta.ancestor_id JOIN repositories r ON r.id = tr.repository_id
		WHERE ta.team_id = $1 ORDER BY lower(r.name), r.id, `+rankSQL+` DESC`, teamID)
	ranked, err := store.ScanAll(rows, err, func(s store.Scanner) (g repoGrant, err error) { return g, s.Scan(&g.repoID, &g.perm) })
	if err != nil {
		return nil, err
	}
	var grants []repoGrant // the first, highest, of each repository's rows
	for _, g := range ranked {
		if n := len(grants); n == 0 || grants[n-1].repoID != g.repoID {
			grants = append(grants, g)
		}
	}
	return grants, nil
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

// member is a user in a team's members list.
type member struct {
	userID    int64
	role      string // the role in the team itself; member when inherited
	inherited bool   // a member of a child team only
}

// members lists the users of the team and of its child teams at any depth
// (through team_ancestors) by login, each once, filtered by role ("" or
// all: every role).
func members(ctx context.Context, q store.Q, teamID int64, roleFilter string) ([]member, error) {
	rows, err := q.QueryContext(ctx, `SELECT g.user_id, g.direct FROM (
			SELECT m.user_id, MAX(CASE WHEN m.team_id = $1 THEN m.role END) AS direct
			FROM team_ancestors ta JOIN team_members m ON m.team_id = ta.team_id
			WHERE ta.ancestor_id = $1 GROUP BY m.user_id) g
		JOIN accounts a ON a.id = g.user_id
		WHERE $2 = '' OR $2 = 'all' OR COALESCE(g.direct, 'member') = $2
		ORDER BY lower(a.login)`, teamID, roleFilter)
	if err != nil {
		return nil, store.Normalize(err)
	}
	defer rows.Close()
	var list []member
	for rows.Next() {
		var m member
		var direct *string
		if err := rows.Scan(&m.userID, &direct); err != nil {
			return nil, store.Normalize(err)
		}
		m.role, m.inherited = RoleMember, direct == nil
		if direct != nil {
			m.role = *direct
		}
		list = append(list, m)
	}
	return list, store.Normalize(rows.Err())
}

// inheritedMember reports whether the user is a member of one of the
// team's child teams at any depth.
func inheritedMember(ctx context.Context, q store.Q, teamID, userID int64) (bool, error) {
	var n int
	err := store.Normalize(q.QueryRowContext(ctx, `SELECT COUNT(*) FROM team_ancestors ta
		JOIN team_members m ON m.team_id = ta.team_id AND m.user_id = $2
		WHERE ta.ancestor_id = $1 AND ta.team_id <> $1`, teamID, userID).Scan(&n))
	return n > 0, err
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

// rankSQL orders a permission column named tr.permission, admin highest.
const rankSQL = `CASE tr.permission WHEN 'admin' THEN 5 WHEN 'maintain' THEN 4 WHEN 'push' THEN 3 WHEN 'triage' THEN 2 ELSE 1 END`

// InheritedRepoPermission returns the highest permission the team holds
// on the repository itself or through a parent team at any depth (""
// when none): what its members get from it.
func InheritedRepoPermission(ctx context.Context, q store.Q, teamID, repoID int64) (string, error) {
	var perm string
	err := store.Normalize(q.QueryRowContext(ctx, `SELECT tr.permission FROM team_ancestors ta
		JOIN team_repos tr ON tr.team_id = ta.ancestor_id AND tr.repository_id = $2
		WHERE ta.team_id = $1 ORDER BY `+rankSQL+` DESC LIMIT 1`, teamID, repoID).Scan(&perm))
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	return perm, err
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

package orgmigration

import (
	"context"
	"fmt"
	"io"
	"os"

	"forgeapi/internal/accounts"
	"forgeapi/internal/orgmigration/archive"
	"forgeapi/internal/repos"
)

// content is what one migration's archive holds, read before writing.
type content struct {
	flags   Flags
	org     *accounts.Account
	members []member
	repos   []*repos.Repository
}

type member struct {
	user *accounts.Account
	role string // accounts.RoleOwner or accounts.RoleMember
}

// loadContent reads the organization, its members and the migration's
// repositories.
func (e *Exporter) loadContent(ctx context.Context, m *Migration) (*content, error) {
	q := e.svc.DB
	org, err := accounts.ByID(ctx, q, m.OrgID)
	if err != nil {
		return nil, fmt.Errorf("load organization %d: %w", m.OrgID, err)
	}
	c := &content{flags: m.Flags, org: org}
	if c.members, err = orgMembers(ctx, e.svc, org.ID); err != nil {
		return nil, fmt.Errorf("load members: %w", err)
	}
	if !m.Flags.OrgMetadataOnly {
		if c.repos, err = migrationRepos(ctx, q, m.ID); err != nil {
			return nil, fmt.Errorf("load repositories: %w", err)
		}
	}
	return c, nil
}

func orgMembers(ctx context.Context, s *Service, orgID int64) ([]member, error) {
	rows, err := s.DB.QueryContext(ctx, `SELECT user_id, role FROM org_members WHERE org_id = $1 ORDER BY user_id`, orgID)
	if err != nil {
		return nil, err
	}
	type row struct {
		id   int64
		role string
	}
	var list []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.role); err != nil {
			rows.Close()
			return nil, err
		}
		list = append(list, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]member, 0, len(list))
	for _, r := range list {
		u, err := accounts.ByID(ctx, s.DB, r.id)
		if err != nil {
			return nil, err
		}
		out = append(out, member{user: u, role: r.role})
	}
	return out, nil
}

// writeArchive writes the archive of c to w, honouring the flags:
// org_metadata_only writes the organization and its users only;
// exclude_metadata leaves out every JSON file but the schema (git data
// only); exclude_git_data leaves out repositories/. forgeapi keeps no
// releases, attachments or projects, so their flags change nothing.
func (e *Exporter) writeArchive(ctx context.Context, w io.Writer, c *content) error {
	if e.cfg.TempDir != "" {
		if err := os.MkdirAll(e.cfg.TempDir, 0o750); err != nil {
			return err
		}
	}
	aw := archive.NewWriter(w)
	aw.TempDir = e.cfg.TempDir
	if err := aw.WriteSchema(); err != nil {
		return err
	}
	if c.flags.OrgMetadataOnly || !c.flags.ExcludeMetadata {
		if err := e.writeMetadata(aw, c); err != nil {
			return err
		}
	}
	if !c.flags.OrgMetadataOnly && !c.flags.ExcludeGitData {
		for _, r := range c.repos {
			if err := aw.AddBareRepository(ctx, c.org.Login, r.Name, e.svc.Repos.GitDir(r.ID)); err != nil {
				return err
			}
		}
	}
	return aw.Close()
}

// writeMetadata writes the organization, users and (unless
// org_metadata_only) repositories files.
func (e *Exporter) writeMetadata(aw *archive.Writer, c *content) error {
	base := e.cfg.BaseURL
	if err := aw.AddJSON(archive.OrganizationsFile, []archive.Organization{organizationRecord(base, c)}); err != nil {
		return err
	}
	users := make([]archive.User, 0, len(c.members))
	for _, m := range c.members {
		users = append(users, userRecord(base, m.user))
	}
	if err := aw.AddJSON(archive.UsersFile, users); err != nil {
		return err
	}
	if c.flags.OrgMetadataOnly {
		return nil
	}
	records := make([]archive.Repository, 0, len(c.repos))
	for _, r := range c.repos {
		records = append(records, repositoryRecord(base, c.org, r, !c.flags.ExcludeGitData))
	}
	return aw.AddJSON(archive.RepositoriesFile, records)
}

func organizationRecord(base string, c *content) archive.Organization {
	members := make([]archive.OrganizationMember, 0, len(c.members))
	for _, m := range c.members {
		role := "direct_member"
		if m.role == accounts.RoleOwner {
			role = "admin"
		}
		members = append(members, archive.OrganizationMember{User: accounts.HTMLURL(base, m.user), Role: role, State: "active"})
	}
	return archive.Organization{
		Type: "organization", URL: accounts.HTMLURL(base, c.org), Login: c.org.Login, Name: c.org.Name,
		Description: c.org.Description, Email: optional(c.org.Email), Members: members, CreatedAt: c.org.CreatedAt.UTC(),
	}
}

func userRecord(base string, u *accounts.Account) archive.User {
	emails := []archive.UserEmail{}
	if u.Email != "" {
		emails = append(emails, archive.UserEmail{Address: u.Email, Primary: true})
	}
	return archive.User{Type: "user", URL: accounts.HTMLURL(base, u), Login: u.Login, Name: u.Name,
		Emails: emails, CreatedAt: u.CreatedAt.UTC()}
}

// repositoryRecord renders a repository; withGit says whether the archive
// holds its git data (git_url points into the archive, or is empty).
func repositoryRecord(base string, org *accounts.Account, r *repos.Repository, withGit bool) archive.Repository {
	rec := archive.Repository{
		Type: "repository", URL: accounts.WebBase(base) + "/" + r.FullName(), Owner: accounts.HTMLURL(base, org),
		Name: r.Name, Description: r.Description, Private: r.Private, HasIssues: true, HasWiki: true,
		HasDownloads: true, Labels: []archive.Label{}, Collaborators: []any{}, Webhooks: []any{},
		PublicKeys: []any{}, CreatedAt: r.CreatedAt.UTC(), DefaultBranch: r.DefaultBranch,
	}
	if withGit {
		rec.GitURL = archive.GitURL(org.Login, r.Name)
	}
	return rec
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

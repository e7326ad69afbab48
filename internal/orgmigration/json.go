package orgmigration

import (
	"context"
	"time"

	"forgeapi/internal/access"
	"forgeapi/internal/accounts"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// offsetTime renders a timestamp with a numeric UTC offset
// ("2026-03-10T12:00:00+00:00"), as the platform renders migration times.
type offsetTime struct{ time.Time }

// MarshalJSON renders the time in UTC with the offset +00:00.
func (t offsetTime) MarshalJSON() ([]byte, error) {
	return []byte(`"` + t.UTC().Format("2006-01-02T15:04:05-07:00") + `"`), nil
}

// migrationJSON is the platform's migration object.
type migrationJSON struct {
	ID                   int64               `json:"id"`
	NodeID               string              `json:"node_id"`
	Owner                accounts.SimpleUser `json:"owner"`
	GUID                 string              `json:"guid"`
	State                string              `json:"state"`
	LockRepositories     bool                `json:"lock_repositories"`
	ExcludeMetadata      bool                `json:"exclude_metadata"`
	ExcludeGitData       bool                `json:"exclude_git_data"`
	ExcludeAttachments   bool                `json:"exclude_attachments"`
	ExcludeReleases      bool                `json:"exclude_releases"`
	ExcludeOwnerProjects bool                `json:"exclude_owner_projects"`
	OrgMetadataOnly      bool                `json:"org_metadata_only"`
	Exclude              []string            `json:"exclude"`
	// Repositories is []repos.JSON or []repos.SimpleJSON; nil (left out)
	// when the request excluded it.
	Repositories any        `json:"repositories,omitempty"`
	URL          string     `json:"url"`
	ArchiveURL   string     `json:"archive_url,omitempty"`
	CreatedAt    offsetTime `json:"created_at"`
	UpdatedAt    offsetTime `json:"updated_at"`
}

// migrationURL is the API URL of the migration.
func migrationURL(base string, org *accounts.Account, id int64) string {
	return base + "/orgs/" + org.Login + "/migrations/" + wire.Itoa(id)
}

// renderer renders migrations and their repositories for one request.
type renderer struct {
	q       store.Q
	base    string
	sshPort int
	version string
	svc     *Service
}

func newRenderer(ctx context.Context, s *Service) renderer {
	return renderer{q: s.DB, base: httpapi.BaseURL(ctx), sshPort: httpapi.SSHPort(ctx), version: httpapi.APIVersion(ctx), svc: s}
}

// migration renders m of org; withRepos false leaves the repository list
// out.
func (rd renderer) migration(ctx context.Context, org *accounts.Account, m *Migration, withRepos bool) (migrationJSON, error) {
	url := migrationURL(rd.base, org, m.ID)
	j := migrationJSON{
		ID: m.ID, NodeID: wire.NodeID("MI", m.ID), Owner: accounts.ToSimpleUser(rd.base, org), GUID: m.GUID,
		State: m.State, LockRepositories: m.Flags.LockRepositories, ExcludeMetadata: m.Flags.ExcludeMetadata,
		ExcludeGitData: m.Flags.ExcludeGitData, ExcludeAttachments: m.Flags.ExcludeAttachments,
		ExcludeReleases: m.Flags.ExcludeReleases, ExcludeOwnerProjects: m.Flags.ExcludeOwnerProjects,
		OrgMetadataOnly: m.Flags.OrgMetadataOnly, Exclude: m.Exclude, URL: url,
		CreatedAt: offsetTime{m.CreatedAt}, UpdatedAt: offsetTime{m.UpdatedAt},
	}
	if m.HasArchive() && !rd.svc.expired(m) {
		j.ArchiveURL = url + "/archive"
	}
	if withRepos {
		list, err := migrationRepos(ctx, rd.q, m.ID)
		if err != nil {
			return j, err
		}
		if j.Repositories, err = rd.repositories(ctx, list); err != nil {
			return j, err
		}
	}
	return j, nil
}

// repositories renders repository objects in the shape of the request's
// API version: full repository objects, or simple ones from 2026-03-10.
// The caller is an organization owner, hence the admin permissions; full
// objects carry the caller's temp_clone_token (see cloneToken).
func (rd renderer) repositories(ctx context.Context, list []*repos.Repository) (any, error) {
	full := make([]repos.JSON, 0, len(list))
	for _, r := range list {
		st, err := repos.StatsOf(ctx, rd.q, r.ID)
		if err != nil {
			return nil, err
		}
		j := repos.ToJSON(repos.URLs{Base: rd.base, SSHPort: rd.sshPort}, r, st, auth.RoleAdmin)
		token, err := rd.cloneToken(ctx, r)
		if err != nil {
			return nil, err
		}
		j.TempCloneToken = &token
		full = append(full, j)
	}
	if rd.version != httpapi.Version20260310 {
		return full, nil
	}
	simple := make([]repos.SimpleJSON, 0, len(full))
	for i := range full {
		simple = append(simple, full[i].Simple())
	}
	return simple, nil
}

// cloneToken returns the temp_clone_token of the repository for the
// request's caller: a clone token (auth.CloneTokens) when the caller's
// credentials give admin rights on the repository and could read its
// contents themselves (a classic token without the repo scope gets none
// for a private repository), "" otherwise. Tokens are derived, not
// stored, so rendering a migration writes nothing.
func (rd renderer) cloneToken(ctx context.Context, repo *repos.Repository) (string, error) {
	p := auth.PrincipalFrom(ctx)
	if rd.svc.CloneTokens == nil || p.Anonymous() || p.FineGrained() {
		return "", nil
	}
	role, err := access.RepoRole(ctx, rd.q, p, repo)
	if err != nil || role < auth.RoleAdmin {
		return "", err
	}
	token, _ := rd.svc.CloneTokens.Mint(repo.ID, p.Account.ID)
	return token, nil
}

package teams

import (
	"context"
	"errors"

	"forgeapi/internal/accounts"
	"forgeapi/internal/auth"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// simpleJSON is the platform's team-simple object (a team's parent, and
// the fields every team object shares).
type simpleJSON struct {
	ID                  int64   `json:"id"`
	NodeID              string  `json:"node_id"`
	URL                 string  `json:"url"`
	MembersURL          string  `json:"members_url"`
	Name                string  `json:"name"`
	Description         *string `json:"description"`
	Permission          string  `json:"permission"`
	Privacy             string  `json:"privacy"`
	NotificationSetting string  `json:"notification_setting"`
	HTMLURL             string  `json:"html_url"`
	RepositoriesURL     string  `json:"repositories_url"`
	Slug                string  `json:"slug"`
	Type                string  `json:"type"`
	OrganizationID      int64   `json:"organization_id"`
}

func toSimpleJSON(base string, t *Team) simpleJSON {
	api := base + "/organizations/" + wire.Itoa(t.Org.ID) + "/team/" + wire.Itoa(t.ID)
	var desc *string
	if t.Description != "" {
		desc = &t.Description
	}
	return simpleJSON{ID: t.ID, NodeID: wire.NodeID("Team", t.ID), URL: api, MembersURL: api + "/members{/member}",
		Name: t.Name, Description: desc, Permission: t.Permission, Privacy: t.Privacy,
		NotificationSetting: t.NotificationSetting, HTMLURL: accounts.WebBase(base) + "/orgs/" + t.Org.Login + "/teams/" + t.Slug,
		RepositoriesURL: api + "/repos", Slug: t.Slug, Type: "organization", OrganizationID: t.Org.ID}
}

// teamJSON is the platform's team object (lists), with its parent.
type teamJSON struct {
	simpleJSON
	Parent *simpleJSON `json:"parent"`
}

func toTeamJSON(base string, t *Team, parent *Team) teamJSON {
	j := teamJSON{simpleJSON: toSimpleJSON(base, t)}
	if parent != nil {
		p := toSimpleJSON(base, parent)
		j.Parent = &p
	}
	return j
}

// fullJSON is the platform's team-full object (one team).
type fullJSON struct {
	teamJSON
	MembersCount int                   `json:"members_count"`
	ReposCount   int                   `json:"repos_count"`
	CreatedAt    wire.Time             `json:"created_at"`
	UpdatedAt    wire.Time             `json:"updated_at"`
	Organization accounts.Organization `json:"organization"`
}

// toOrganization renders the team's organization as team-organization.
func toOrganization(base string, a *accounts.Account) accounts.Organization {
	so := accounts.ToSimpleOrg(base, a)
	return accounts.Organization{
		Login: so.Login, ID: so.ID, NodeID: so.NodeID, URL: so.URL, ReposURL: so.ReposURL, EventsURL: so.EventsURL,
		HooksURL: so.HooksURL, IssuesURL: so.IssuesURL, MembersURL: so.MembersURL, PublicMembersURL: so.PublicMembersURL,
		AvatarURL: so.AvatarURL, Description: so.Description, HasOrganizationProjects: true, HasRepositoryProjects: true,
		HTMLURL: accounts.HTMLURL(base, a), CreatedAt: wire.T(a.CreatedAt), UpdatedAt: wire.T(a.UpdatedAt), Type: a.Type,
	}
}

// membershipJSON is the platform's team-membership object.
type membershipJSON struct {
	URL   string `json:"url"`
	Role  string `json:"role"`
	State string `json:"state"`
}

// memberJSON is the platform's team-member object.
type memberJSON struct {
	accounts.SimpleUser
	Role      string `json:"role"`
	Inherited bool   `json:"inherited"`
}

// permissionFlags is a repository's permissions hash for a team.
type permissionFlags struct {
	Pull     bool `json:"pull"`
	Triage   bool `json:"triage"`
	Push     bool `json:"push"`
	Maintain bool `json:"maintain"`
	Admin    bool `json:"admin"`
}

func flags(perm string) permissionFlags {
	r := rank(perm)
	return permissionFlags{Pull: r >= 1, Triage: r >= 2, Push: r >= 3, Maintain: r >= 4, Admin: r >= 5}
}

// rank orders the permissions: pull 1 ... admin 5, 0 for none.
func rank(perm string) int {
	for i, p := range Permissions {
		if p == perm {
			return i + 1
		}
	}
	return 0
}

// role is the access role a permission gives (as access.CollaboratorRole).
func role(perm string) auth.Role {
	switch r := rank(perm); {
	case r >= 5:
		return auth.RoleAdmin
	case r >= 3:
		return auth.RoleWrite
	case r >= 1:
		return auth.RoleRead
	}
	return auth.RoleNone
}

// teamRepoJSON is the platform's team-repository object: a repository
// with the team's permissions on it.
type teamRepoJSON struct {
	repos.JSON
	Permissions permissionFlags `json:"permissions"`
	RoleName    string          `json:"role_name"`
}

func toTeamRepoJSON(urls repos.URLs, r *repos.Repository, st repos.Stats, perm string) teamRepoJSON {
	return teamRepoJSON{JSON: repos.ToJSON(urls, r, st, role(perm)), Permissions: flags(perm), RoleName: roleName(perm)}
}

// roleName is the platform's role name of a permission: read and write
// for pull and push.
func roleName(perm string) string {
	switch perm {
	case "pull":
		return "read"
	case "push":
		return "write"
	}
	return perm
}

// JSON renders the team as the platform's team object (lists, and the
// teams of other areas' objects: branch protection's restrictions), its
// parent read from q.
func JSON(ctx context.Context, q store.Q, base string, t *Team) (any, error) {
	var parent *Team
	if t.ParentID != 0 {
		p, err := ByID(ctx, q, t.Org, t.ParentID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
		parent = p
	}
	return toTeamJSON(base, t, parent), nil
}

package accounts

import (
	"strings"

	"forgeapi/internal/httpapi"
	"forgeapi/internal/wire"
)

// SimpleUser is the platform's simple-user object (also used for
// organizations and bots where the platform embeds an owner).
type SimpleUser struct {
	Login             string  `json:"login"`
	ID                int64   `json:"id"`
	NodeID            string  `json:"node_id"`
	Name              *string `json:"name,omitempty"`
	Email             *string `json:"email,omitempty"`
	AvatarURL         string  `json:"avatar_url"`
	GravatarID        string  `json:"gravatar_id"`
	URL               string  `json:"url"`
	HTMLURL           string  `json:"html_url"`
	FollowersURL      string  `json:"followers_url"`
	FollowingURL      string  `json:"following_url"`
	GistsURL          string  `json:"gists_url"`
	StarredURL        string  `json:"starred_url"`
	SubscriptionsURL  string  `json:"subscriptions_url"`
	OrganizationsURL  string  `json:"organizations_url"`
	ReposURL          string  `json:"repos_url"`
	EventsURL         string  `json:"events_url"`
	ReceivedEventsURL string  `json:"received_events_url"`
	Type              string  `json:"type"`
	UserViewType      string  `json:"user_view_type"`
	SiteAdmin         bool    `json:"site_admin"`
}

// ToSimpleUser renders an account as a simple-user with URLs under base.
func ToSimpleUser(base string, a *Account) SimpleUser {
	u := base + "/users/" + a.Login
	return SimpleUser{
		Login:             a.Login,
		ID:                a.ID,
		NodeID:            NodeID(a),
		AvatarURL:         AvatarURL(base, a),
		URL:               u,
		HTMLURL:           HTMLURL(base, a),
		FollowersURL:      u + "/followers",
		FollowingURL:      u + "/following{/other_user}",
		GistsURL:          u + "/gists{/gist_id}",
		StarredURL:        u + "/starred{/owner}{/repo}",
		SubscriptionsURL:  u + "/subscriptions",
		OrganizationsURL:  u + "/orgs",
		ReposURL:          u + "/repos",
		EventsURL:         u + "/events{/privacy}",
		ReceivedEventsURL: u + "/received_events",
		Type:              a.Type,
		UserViewType:      "public",
		SiteAdmin:         a.SiteAdmin,
	}
}

// NodeID is the account's global node id.
func NodeID(a *Account) string {
	switch a.Type {
	case TypeOrg:
		return wire.NodeID("O", a.ID)
	case TypeBot:
		return wire.NodeID("BOT", a.ID)
	}
	return wire.NodeID("U", a.ID)
}

// AvatarURL is the account's avatar address.
func AvatarURL(base string, a *Account) string {
	return base + "/avatars/u/" + itoa(a.ID) + "?v=4"
}

// HTMLURL is the account's web address: the root of its repositories.
func HTMLURL(base string, a *Account) string {
	return WebBase(base) + "/" + strings.TrimSuffix(a.Login, "[bot]")
}

// WebBase is the web (and git) root for an API base URL: the API base
// without a trailing /api/v3 (httpapi.WebBase).
func WebBase(base string) string { return httpapi.WebBase(base) }

func itoa(v int64) string { return wire.Itoa(v) }

// User is the platform's public user object (GET /users/{username}).
type User struct {
	SimpleUser
	// UserViewType is "public" here and "private" in the authenticated
	// user's own object: the platform's discriminator of the two.
	UserViewType    string    `json:"user_view_type"`
	Name            *string   `json:"name"`
	Company         *string   `json:"company"`
	Blog            string    `json:"blog"`
	Location        *string   `json:"location"`
	Email           *string   `json:"email"`
	Hireable        *bool     `json:"hireable"`
	Bio             *string   `json:"bio"`
	TwitterUsername *string   `json:"twitter_username"`
	PublicRepos     int       `json:"public_repos"`
	PublicGists     int       `json:"public_gists"`
	Followers       int       `json:"followers"`
	Following       int       `json:"following"`
	CreatedAt       wire.Time `json:"created_at"`
	UpdatedAt       wire.Time `json:"updated_at"`
}

// PrivateUser is the authenticated user's own object (GET /user).
type PrivateUser struct {
	User
	PrivateGists            int  `json:"private_gists"`
	TotalPrivateRepos       int  `json:"total_private_repos"`
	OwnedPrivateRepos       int  `json:"owned_private_repos"`
	DiskUsage               int  `json:"disk_usage"`
	Collaborators           int  `json:"collaborators"`
	TwoFactorAuthentication bool `json:"two_factor_authentication"`
}

// Organization is the platform's organization-full object.
type Organization struct {
	// Name, Company, Location and Email are left out when unset: the
	// platform's description types them as strings, never null.
	Login                   string    `json:"login"`
	ID                      int64     `json:"id"`
	NodeID                  string    `json:"node_id"`
	URL                     string    `json:"url"`
	ReposURL                string    `json:"repos_url"`
	EventsURL               string    `json:"events_url"`
	HooksURL                string    `json:"hooks_url"`
	IssuesURL               string    `json:"issues_url"`
	MembersURL              string    `json:"members_url"`
	PublicMembersURL        string    `json:"public_members_url"`
	AvatarURL               string    `json:"avatar_url"`
	Description             *string   `json:"description"`
	Name                    *string   `json:"name,omitempty"`
	Company                 *string   `json:"company,omitempty"`
	Blog                    string    `json:"blog"`
	Location                *string   `json:"location,omitempty"`
	Email                   *string   `json:"email,omitempty"`
	TwitterUsername         *string   `json:"twitter_username"`
	IsVerified              bool      `json:"is_verified"`
	HasOrganizationProjects bool      `json:"has_organization_projects"`
	HasRepositoryProjects   bool      `json:"has_repository_projects"`
	PublicRepos             int       `json:"public_repos"`
	PublicGists             int       `json:"public_gists"`
	Followers               int       `json:"followers"`
	Following               int       `json:"following"`
	HTMLURL                 string    `json:"html_url"`
	CreatedAt               wire.Time `json:"created_at"`
	UpdatedAt               wire.Time `json:"updated_at"`
	ArchivedAt              *string   `json:"archived_at"`
	Type                    string    `json:"type"`
	*OrgOwnerFields
}

// OrgOwnerFields are the fields of organization-full that only the
// organization's owners see.
type OrgOwnerFields struct {
	TotalPrivateRepos            int     `json:"total_private_repos"`
	OwnedPrivateRepos            int     `json:"owned_private_repos"`
	BillingEmail                 *string `json:"billing_email"`
	DefaultRepositoryPermission  string  `json:"default_repository_permission"`
	MembersCanCreateRepositories bool    `json:"members_can_create_repositories"`
	TwoFactorRequirementEnabled  bool    `json:"two_factor_requirement_enabled"`
	OrgOwnerUsage
	// The creation settings the platform splits by visibility follow
	// members_can_create_repositories: forgeapi keeps one setting.
	MembersAllowedRepositoryCreationType string `json:"members_allowed_repository_creation_type"`
	MembersCanCreatePublicRepositories   bool   `json:"members_can_create_public_repositories"`
	MembersCanCreatePrivateRepositories  bool   `json:"members_can_create_private_repositories"`
	MembersCanCreateInternalRepositories bool   `json:"members_can_create_internal_repositories"`
	// forgeapi serves no Pages: members may create them as far as it knows.
	MembersCanCreatePages        bool `json:"members_can_create_pages"`
	MembersCanCreatePublicPages  bool `json:"members_can_create_public_pages"`
	MembersCanCreatePrivatePages bool `json:"members_can_create_private_pages"`
}

// OrgOwnerUsage is the organization's usage that its owners see: its
// plan (forgeapi's is unlimited: the self-managed edition's
// "enterprise"), the size of its repositories' git data, its outside
// collaborators, and private gists (forgeapi has no gists).
type OrgOwnerUsage struct {
	Plan          OrgPlan `json:"plan"`
	DiskUsage     int64   `json:"disk_usage"`
	Collaborators int     `json:"collaborators"`
	PrivateGists  int     `json:"private_gists"`
}

// OrgPlan is the plan object of an organization.
type OrgPlan struct {
	Name         string `json:"name"`
	Space        int64  `json:"space"`
	PrivateRepos int64  `json:"private_repos"`
	FilledSeats  int    `json:"filled_seats"`
	Seats        int    `json:"seats"`
}

// SimpleOrg is the platform's organization-simple object, embedded in
// webhook payloads and migrations.
type SimpleOrg struct {
	Login            string  `json:"login"`
	ID               int64   `json:"id"`
	NodeID           string  `json:"node_id"`
	URL              string  `json:"url"`
	ReposURL         string  `json:"repos_url"`
	EventsURL        string  `json:"events_url"`
	HooksURL         string  `json:"hooks_url"`
	IssuesURL        string  `json:"issues_url"`
	MembersURL       string  `json:"members_url"`
	PublicMembersURL string  `json:"public_members_url"`
	AvatarURL        string  `json:"avatar_url"`
	Description      *string `json:"description"`
}

// ToSimpleOrg renders an organization as organization-simple.
func ToSimpleOrg(base string, a *Account) SimpleOrg {
	u := base + "/orgs/" + a.Login
	return SimpleOrg{
		Login: a.Login, ID: a.ID, NodeID: NodeID(a), URL: u,
		ReposURL: u + "/repos", EventsURL: u + "/events", HooksURL: u + "/hooks", IssuesURL: u + "/issues",
		MembersURL: u + "/members{/member}", PublicMembersURL: u + "/public_members{/member}",
		AvatarURL: AvatarURL(base, a), Description: optional(a.Description),
	}
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// AppendJSON appends the simple-user as encoding/json renders it.
func (u *SimpleUser) AppendJSON(b []byte) []byte {
	o := wire.Begin(b)
	o.String("login", u.Login)
	o.Int("id", u.ID)
	o.String("node_id", u.NodeID)
	if u.Name != nil {
		o.StringPtr("name", u.Name)
	}
	if u.Email != nil {
		o.StringPtr("email", u.Email)
	}
	o.String("avatar_url", u.AvatarURL)
	o.String("gravatar_id", u.GravatarID)
	o.String("url", u.URL)
	o.String("html_url", u.HTMLURL)
	o.String("followers_url", u.FollowersURL)
	o.String("following_url", u.FollowingURL)
	o.String("gists_url", u.GistsURL)
	o.String("starred_url", u.StarredURL)
	o.String("subscriptions_url", u.SubscriptionsURL)
	o.String("organizations_url", u.OrganizationsURL)
	o.String("repos_url", u.ReposURL)
	o.String("events_url", u.EventsURL)
	o.String("received_events_url", u.ReceivedEventsURL)
	o.String("type", u.Type)
	o.String("user_view_type", u.UserViewType)
	o.Bool("site_admin", u.SiteAdmin)
	return o.End()
}

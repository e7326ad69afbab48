package archive

import "time"

// Names of the files of an archive, in the layout of the platform's
// migration tooling. Each holds a JSON array; larger exports split records
// over _000002 and following files.
const (
	SchemaFile        = "schema.json"
	OrganizationsFile = "organizations_000001.json"
	UsersFile         = "users_000001.json"
	RepositoriesFile  = "repositories_000001.json"
)

// SchemaVersion is the archive format version written to SchemaFile.
const SchemaVersion = "1.2.0"

// RepositoriesDir is the folder of the archive that holds the git data,
// one bare repository per RepositoriesDir/<org>/<repo>.git.
const RepositoriesDir = "repositories"

// Schema is the content of SchemaFile.
type Schema struct {
	Version string `json:"version"`
}

// Organization is a record of OrganizationsFile.
type Organization struct {
	Type        string               `json:"type"` // always "organization"
	URL         string               `json:"url"`  // the organization's HTML URL
	Login       string               `json:"login"`
	Name        string               `json:"name"`
	Description string               `json:"description"`
	Website     *string              `json:"website"`
	Location    *string              `json:"location"`
	Email       *string              `json:"email"`
	Members     []OrganizationMember `json:"members"`
	CreatedAt   time.Time            `json:"created_at"`
}

// OrganizationMember is a membership listed in an Organization record.
type OrganizationMember struct {
	User  string `json:"user"`  // the URL of the member's User record
	Role  string `json:"role"`  // "admin" (owner) or "direct_member"
	State string `json:"state"` // "active" or "pending"
}

// User is a record of UsersFile.
type User struct {
	Type      string      `json:"type"` // always "user"
	URL       string      `json:"url"`  // the user's HTML URL
	Login     string      `json:"login"`
	Name      string      `json:"name"`
	Bio       *string     `json:"bio"`
	Company   *string     `json:"company"`
	Website   *string     `json:"website"`
	Location  *string     `json:"location"`
	Emails    []UserEmail `json:"emails"`
	CreatedAt time.Time   `json:"created_at"`
}

// UserEmail is an email address listed in a User record.
type UserEmail struct {
	Address string `json:"address"`
	Primary bool   `json:"primary"`
}

// Repository is a record of RepositoriesFile. Empty lists must be empty
// slices, not nil, so that they encode as [] like the platform's.
type Repository struct {
	Type          string    `json:"type"`  // always "repository"
	URL           string    `json:"url"`   // the repository's HTML URL
	Owner         string    `json:"owner"` // the URL of the owner's record
	Name          string    `json:"name"`
	Description   string    `json:"description"`
	Website       *string   `json:"website"`
	Private       bool      `json:"private"`
	HasIssues     bool      `json:"has_issues"`
	HasWiki       bool      `json:"has_wiki"`
	HasDownloads  bool      `json:"has_downloads"`
	Labels        []Label   `json:"labels"`
	Collaborators []any     `json:"collaborators"`
	Webhooks      []any     `json:"webhooks"`
	PublicKeys    []any     `json:"public_keys"`
	CreatedAt     time.Time `json:"created_at"`
	GitURL        string    `json:"git_url"` // see GitURL
	DefaultBranch string    `json:"default_branch"`
	WikiURL       *string   `json:"wiki_url"`
	IsArchived    bool      `json:"is_archived"`
}

// Label is a label listed in a Repository record.
type Label struct {
	URL         string    `json:"url"`
	Name        string    `json:"name"`
	Color       string    `json:"color"`
	Description string    `json:"description"`
	CreatedAt   time.Time `json:"created_at"`
}

// GitURL returns the git_url of a Repository record whose git data the
// archive holds at RepositoriesDir/<org>/<repo>.git, in the tarball://
// form the platform's import tooling resolves inside the archive.
func GitURL(org, repo string) string {
	return "tarball://root/" + repositoryPath(org, repo)
}

func repositoryPath(org, repo string) string {
	return RepositoriesDir + "/" + org + "/" + repo + ".git"
}

// Package docs holds forgeapi's documentation pages, one Markdown file
// per area, embedded so that the server can serve them (see package
// internal/docsite) and error bodies can link to them. A page's name is
// its file name without ".md"; the constants below name the pages that
// code links to.
package docs

import (
	"embed"
	"io/fs"
	"path"
	"sort"
	"strings"
)

//go:embed *.md
var files embed.FS

// The pages that API areas link to from their error bodies.
const (
	Index              = "index"
	API                = "api"
	GitHosting         = "git-hosting"
	Webhooks           = "webhooks"
	EventFeeds         = "event-feeds"
	OAuth              = "oauth"
	Console            = "console"
	CustomAgents       = "custom-agents"
	ArtifactMetadata   = "artifact-metadata"
	DependencyReview   = "dependency-review"
	Migrations         = "migrations"
	Organizations      = "organizations"
	RepositoryContents = "repository-contents"
	Operations         = "operations"
	Performance        = "performance"
	Permissions        = "permissions"
	Apps               = "apps"
	Issues             = "issues"
	Pulls              = "pulls"
	Checks             = "checks"
	Actions            = "actions"
	GraphQL            = "graphql"
	Commits            = "commits"
	BranchProtection   = "branch-protection"
	Markdown           = "markdown"
	Deployments        = "deployments"
	Reactions          = "reactions"
	Notifications      = "notifications"
	Releases           = "releases"
	Gists              = "gists"
	Web                = "web"
	Keys               = "keys"
	SiteAdmin          = "site-admin"
	ActionsSettings    = "actions-settings"
	SecretScanning     = "secret-scanning"
	CodeScanning       = "code-scanning"
	Dependabot         = "dependabot"
)

// The pages of the areas of repository statistics (package repostats),
// custom properties (package customprops), autolinks and tag
// protection (package reposettings) and pre-receive hooks (package
// prereceive).
const (
	RepositoryStatistics = "repository-statistics"
	CustomProperties     = "custom-properties"
	RepositorySettings   = "repository-settings"
	PreReceiveHooks      = "pre-receive-hooks"
)

// OrganizationRoles is the page of organization roles, custom repository
// roles and security manager teams (package orgroles).
const OrganizationRoles = "organization-roles"

// Pages returns the names of every page, sorted.
func Pages() []string {
	entries, _ := fs.ReadDir(files, ".") // an embed.FS root always reads
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".md"); ok {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// Source returns the Markdown of the named page, and false when there is
// no such page.
func Source(name string) ([]byte, bool) {
	if name == "" || name != path.Base(name) {
		return nil, false
	}
	b, err := files.ReadFile(name + ".md")
	return b, err == nil
}

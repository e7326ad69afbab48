// Package house is the map of forgeapi's packages as floors: every
// package stands on one floor and imports only packages on its own floor
// or below, so that what is low (the store, errors, git plumbing) never
// depends on what is high (areas, the wiring, the CLI). floors_test.go
// checks every import of the module against Floors, and fails on a
// package that is missing from it.
//
// A new package goes on the lowest floor whose packages hold everything
// it imports: a new API area usually on the floor of the areas it builds
// on, one above them when it imports one of them.
package house

// Floor is a level of the house: its number (0 is the ground), what
// stands there and its packages, as import paths relative to the module.
type Floor struct {
	Level    int
	What     string
	Packages []string
}

// Floors are the floors of the house, ground first.
var Floors = []Floor{
	{0, "foundations: this map, errors, the store, blob storage, sealing, the JSON helpers, git's process runner and reference names, the leased worker loop, the tests' wait, cache and shared browser, the TLS authority, the embedded docs, the search query syntax",
		[]string{"docs", "internal/apierr", "internal/house", "internal/blob", "internal/depreview/advisory", "internal/git/gitcmd",
			"internal/git/gitref", "internal/search", "internal/secretbox", "internal/store", "internal/store/storetest", "internal/actions/engine/dockertest", "internal/apptest/browsertest", "internal/testcache", "internal/testwait", "internal/tlsca", "internal/wire", "internal/worker"}},
	{1, "protocols: authentication, git reading, writing, merging and serving, Markdown rendering, the reference tables' copier, a webhook's signed request, archive writing, manifest parsing, the GraphQL schema's generator, the Actions engine and its runners' protocol",
		[]string{"internal/actions/engine", "internal/actions/runnerproto", "internal/auth", "internal/depreview", "internal/depreview/advisorydb", "internal/git/githttp", "internal/git/gitmerge", "internal/git/gitsign", "internal/git/gitssh", "internal/graphql/schemagen",
			"internal/git/gitread", "internal/git/gitwrite", "internal/markdown", "internal/reference/gendata", "internal/orgmigration/archive", "internal/webhooks/hookshot"}},
	{2, "the HTTP layer: routes, the error writer, limits, paging; the diff and patch media types; the registered Actions runner (a client of the server)",
		[]string{"internal/actions/runnerclient", "internal/git/gitdiff", "internal/httpapi"}},
	{3, "accounts, the documentation site, the reference tables, commit signatures verified",
		[]string{"internal/accounts", "internal/docsite", "internal/reference", "internal/sigverify"}},
	{4, "the resources everything hangs on: repositories, OAuth",
		[]string{"internal/oauth", "internal/repos"}},
	{5, "the access guard, the event spine, commit JSON, dependency review's API, the reactions the areas count",
		[]string{"internal/access", "internal/depreview/api", "internal/events", "internal/reactions", "internal/repos/gitjson"}},
	{6, "API areas",
		[]string{"internal/actions", "internal/activity", "internal/archives", "internal/artifacts", "internal/auditlog", "internal/blocks",
			"internal/codescanning", "internal/codesearch", "internal/collaborators", "internal/dependabot", "internal/dispatches", "internal/feeds", "internal/gitdata", "internal/issues", "internal/licenses", "internal/repostats", "internal/customprops",
			"internal/markdown/api", "internal/notifications", "internal/secretscanning", "internal/statuses"}},
	{7, "areas built on areas: git hosting, SSH keys, organizations, migrations, webhooks",
		[]string{"internal/actions/settings", "internal/commitcomments", "internal/githost", "internal/keys", "internal/orgmigration", "internal/orgs", "internal/webhooks"}},
	{8, "areas built on git hosting and webhooks: pull requests, contents, apps, checks, teams, agents, deployments, branch protection",
		[]string{"internal/agents", "internal/apps", "internal/checks", "internal/deployments", "internal/gists", "internal/protection", "internal/prereceive", "internal/pulls", "internal/releases", "internal/repocontent", "internal/reposettings", "internal/siteadmin", "internal/teams"}},
	{9, "areas over many: rulesets, GraphQL, the OAuth web flow, backups, branch merges",
		[]string{"internal/backup", "internal/graphql", "internal/merges", "internal/oauthweb", "internal/orgroles", "internal/rulesets"}},
	{10, "the web pages: the console's, and those behind every html_url (on the console's sessions and layout)",
		[]string{"internal/console", "internal/web"}},
	{11, "the wiring: one App over one store, the running server",
		[]string{"internal/app"}},
	{12, "the command line: serve and the admin commands",
		[]string{"internal/cli"}},
	{13, "programs and the test harness",
		[]string{"cmd/forgeapi", "cmd/forgeapi-bench", "internal/apptest"}},
	{14, "the smaller areas' end-to-end tests, in two test binaries",
		[]string{"internal/e2e", "internal/e2e/repository"}},
}

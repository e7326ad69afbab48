package e2e_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"forgeapi/internal/apptest"
	"forgeapi/internal/webhooks"
)

// octokitAppSummary is what testdata/node/octokit-app.mjs prints last.
type octokitAppSummary struct {
	Failures            []string `json:"failures"`
	Error               string   `json:"error"`
	Slug                string   `json:"slug"`
	InstallationID      int64    `json:"installationId"`
	PushInstallationID  int64    `json:"pushInstallationId"`
	TokenExpiresAt      string   `json:"tokenExpiresAt"`
	RepositorySelection string   `json:"repositorySelection"`
	StatusCreator       string   `json:"statusCreator"`
	StatusSHA           string   `json:"statusSHA"`
}

// TestOctokitApp runs a Probot-style app on octokit.js (@octokit/auth-app
// and @octokit/webhooks, pinned in testdata/node): it authenticates as
// the app, points the app's webhook at itself, receives a push to its
// installed repository and sets a commit status on the pushed commit
// with an installation token; the status is the bot's.
func TestOctokitApp(t *testing.T) {
	t.Parallel()
	dir := apptest.NodeModules(t, "@octokit/auth-app")
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	octo := env.User("octo")
	org := env.Org("acme", octo)
	repo := env.Repo(org, "widgets", apptest.RepoOpts{Private: true})
	a := env.RegisterApp(org, "Probot Style", "contents:read,statuses:write", apptest.AppOpts{Events: []string{"push"}})
	inst := env.Install(a, org, repo)
	keyFile := filepath.Join(t.TempDir(), "app.pem")
	apptest.Must(t, "key file", os.WriteFile(keyFile, a.PrivateKeyPEM, 0o600))

	node := apptest.StartNodeApp(t, dir, "octokit-app.mjs", "FORGEAPI_URL="+env.APIBase(), "APP_ID="+strconv.FormatInt(a.ID, 10),
		"PRIVATE_KEY_FILE="+keyFile, "OWNER=acme", "REPO=widgets")

	token := env.Token(octo, "repo")
	work := apptest.WorkTree(t, map[string]string{"a.txt": "1\n"})
	sha := strings.TrimSpace(apptest.Git(t, work, "rev-parse", "HEAD"))
	apptest.Git(t, work, "push", "-q", env.GitURL("acme", "widgets", "octo", token), "HEAD:refs/heads/main")

	var s octokitAppSummary
	node.Summary(&s)
	if s.Error != "" || len(s.Failures) > 0 {
		t.Fatalf("octokit app: error %q, receiver failures %v", s.Error, s.Failures)
	}
	if s.Slug != "probot-style" || s.InstallationID != inst.ID || s.PushInstallationID != inst.ID ||
		s.TokenExpiresAt == "" || s.RepositorySelection != "selected" || s.StatusSHA != sha || s.StatusCreator != "probot-style[bot]" {
		t.Fatalf("summary %+v", s)
	}
	statuses, _, err := env.Client(token).Repositories.ListStatuses(apptest.Ctx(), "acme", "widgets", sha, nil)
	apptest.Must(t, "list statuses", err)
	if len(statuses) != 1 || statuses[0].GetCreator().GetLogin() != "probot-style[bot]" || statuses[0].GetContext() != "octokit-app" {
		t.Fatalf("statuses %+v", statuses)
	}
}

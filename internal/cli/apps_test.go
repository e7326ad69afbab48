package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/bradleyfalzon/ghinstallation/v2"

	"forgeapi/internal/apptest"
)

// TestCLIAppsRegisterInstallSuspendUninstall registers an app with the
// admin command line, installs it, and drives it with ghinstallation
// using the key file the command wrote.
func TestCLIAppsRegisterInstallSuspendUninstall(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo := env.User("octo")
	org := env.Org("acme", octo)
	env.Repo(org, "api", apptest.RepoOpts{Private: true})
	run := func(args ...string) string { return cliOK(t, append(args, storeFlags(env)...)...) }
	keyFile := filepath.Join(t.TempDir(), "bot.pem")

	var created struct {
		ID           int64  `json:"id"`
		Slug         string `json:"slug"`
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}
	apptest.Must(t, "app create prints JSON", json.Unmarshal([]byte(run("app", "create", "--app", "Deploy Bot",
		"--owner", "acme", "--permissions", "contents:read", "--events", "push", "--private-key-file", keyFile)), &created))
	if created.Slug != "deploy-bot" || len(created.ClientID) != 20 || created.ClientSecret == "" {
		t.Fatalf("app create: %+v", created)
	}
	if st, err := os.Stat(keyFile); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", st, err)
	}
	var inst struct {
		ID                  int64  `json:"id"`
		RepositorySelection string `json:"repository_selection"`
	}
	apptest.Must(t, "app install prints JSON", json.Unmarshal([]byte(run("app", "install", "deploy-bot", "--account", "acme",
		"--repositories", "api")), &inst))
	if inst.RepositorySelection != "selected" {
		t.Fatalf("installation: %+v", inst)
	}

	atr, err := ghinstallation.NewAppsTransportKeyFromFile(env.Transport(), created.ID, keyFile)
	apptest.Must(t, "apps transport", err)
	atr.BaseURL = env.APIBase()
	ac := env.ClientWith(atr)
	ctx := apptest.Ctx()
	app, _, err := ac.Apps.Get(ctx, "")
	apptest.Must(t, "GET /app", err)
	if app.GetSlug() != "deploy-bot" {
		t.Fatalf("app: %+v", app)
	}
	if _, _, err := ac.Apps.CreateInstallationToken(ctx, inst.ID, nil); err != nil {
		t.Fatalf("mint: %v", err)
	}
	run("app", "suspend", "deploy-bot", "--account", "acme")
	if _, resp, _ := ac.Apps.CreateInstallationToken(ctx, inst.ID, nil); apptest.ResponseStatus(resp) != 403 {
		t.Fatalf("mint while suspended: %d, want 403", apptest.ResponseStatus(resp))
	}
	run("app", "suspend", "deploy-bot", "--account", "acme", "--unsuspend")
	if _, _, err := ac.Apps.CreateInstallationToken(ctx, inst.ID, nil); err != nil {
		t.Fatalf("mint after unsuspend: %v", err)
	}
	run("app", "uninstall", "deploy-bot", "--account", "acme")
	if _, resp, _ := ac.Apps.GetInstallation(ctx, inst.ID); apptest.ResponseStatus(resp) != 404 {
		t.Fatalf("after uninstall: %d, want 404", apptest.ResponseStatus(resp))
	}
	for _, bad := range [][]string{
		{"app", "create", "--app", "X", "--owner", "ghost", "--permissions", "contents:read", "--private-key-file", keyFile},
		{"app", "install", "no-such-app", "--account", "acme", "--all-repositories"},
		{"app", "install", "deploy-bot", "--account", "acme"},
		{"app", "uninstall", "deploy-bot", "--account", "acme"},
	} {
		if code, _, _ := cliRun(t, append(bad, storeFlags(env)...)...); code == 0 {
			t.Errorf("forgeapi %v succeeded", bad)
		}
	}
}

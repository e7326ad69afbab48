package e2e_test

import (
	"strings"
	"testing"

	"forgeapi/internal/apptest"
)

// TestGitHubCLISecrets runs `gh secret set/list/remove` against a server
// on --tls, through the validating proxy: gh seals the values with the
// public keys itself (libsodium's sealed box), for a repository, an
// environment and an organization's selected repositories, and a run
// reads them back opened. (The gh on this machine, 2.23, has no `gh
// variable`; variables are tested with go-github.)
func TestGitHubCLISecrets(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithTLS())
	ctx := apptest.Ctx()
	owner := env.User("owner")
	org := env.Org("acme", owner)
	repo := env.Repo(org, "api")
	gh := apptest.GH(t, env, env.Token(owner, "repo", "admin:org", "read:org"), true)
	r := "-R" + gh.Host + "/acme/api"
	apptest.Step(t, "gh secret set and list for a repository", func(t *testing.T) {
		gh.Run(t, "secret", "set", "DEPLOY_KEY", "--body", "from-gh", r)
		out := gh.Run(t, "secret", "list", r)
		if !strings.Contains(out, "DEPLOY_KEY") {
			t.Fatalf("gh secret list printed %q", out)
		}
	})
	apptest.Step(t, "gh secret set for an environment", func(t *testing.T) {
		resp, body := env.DoJSON("PUT", "/repos/acme/api/environments/prod", env.Token(owner, "repo"), "{}")
		if resp.StatusCode != 200 {
			t.Fatalf("environment %d %s", resp.StatusCode, body)
		}
		gh.Run(t, "secret", "set", "DEPLOY_KEY", "--env", "prod", "--body", "prod-from-gh", r)
		out := gh.Run(t, "secret", "list", "--env", "prod", r)
		if !strings.Contains(out, "DEPLOY_KEY") {
			t.Fatalf("gh secret list --env printed %q", out)
		}
	})
	apptest.Step(t, "gh secret set for an organization's selected repositories", func(t *testing.T) {
		gh.Run(t, "secret", "set", "ORG_TOKEN", "--org", "acme", "--repos", "api", "--body", "org-from-gh")
		out := gh.Run(t, "secret", "list", "--org", "acme")
		if !strings.Contains(out, "ORG_TOKEN") || !strings.Contains(strings.ToLower(out), "selected") {
			t.Fatalf("gh secret list --org printed %q", out)
		}
		resp, body := env.Get("/orgs/acme/actions/secrets/ORG_TOKEN/repositories", "token "+env.Token(owner, "admin:org"))
		if resp.StatusCode != 200 || !strings.Contains(string(body), `"total_count":1`) || !strings.Contains(string(body), `"full_name":"acme/api"`) {
			t.Fatalf("selected repositories %d %s", resp.StatusCode, body)
		}
	})
	apptest.Step(t, "a run reads what gh sealed", func(t *testing.T) {
		secrets, _, err := env.App.ActionsSettings.RunValues(ctx, repo.ID, "prod")
		apptest.Must(t, "run values", err)
		if secrets["DEPLOY_KEY"] != "prod-from-gh" || secrets["ORG_TOKEN"] != "org-from-gh" {
			t.Fatalf("run secrets %v", secrets)
		}
		secrets, _, err = env.App.ActionsSettings.RunValues(ctx, repo.ID, "")
		apptest.Must(t, "run values", err)
		if secrets["DEPLOY_KEY"] != "from-gh" {
			t.Fatalf("run secrets %v", secrets)
		}
	})
	apptest.Step(t, "gh secret remove", func(t *testing.T) {
		gh.Run(t, "secret", "remove", "DEPLOY_KEY", r)
		if out := gh.Run(t, "secret", "list", r); strings.Contains(out, "DEPLOY_KEY") {
			t.Fatalf("gh secret list printed %q after remove", out)
		}
	})
}

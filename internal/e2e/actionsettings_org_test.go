package e2e_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// TestOrganizationSecretsAndVariables plays an organization owner on
// go-github: a secret and a variable for selected repositories, then for
// private ones, the selected repositories endpoints (409 when the
// visibility is not selected), what each repository lists as its
// organization's, the audit log, and the layering a run sees: the
// organization's values under the repository's under the environment's.
func TestOrganizationSecretsAndVariables(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	owner, member := env.User("owner"), env.User("member")
	acme := env.Org("acme", owner, member)
	c := env.Client(env.Token(owner, "repo", "admin:org"))
	api, _, err := c.Repositories.Create(ctx, "acme", &github.Repository{Name: github.Ptr("api")})
	apptest.Must(t, "api", err)
	web, _, err := c.Repositories.Create(ctx, "acme", &github.Repository{Name: github.Ptr("web"), Private: github.Ptr(true)})
	apptest.Must(t, "web", err)
	key, _, err := c.Actions.GetOrgPublicKey(ctx, "acme")
	apptest.Must(t, "org key", err)
	apptest.Step(t, "a secret for selected repositories", func(t *testing.T) {
		resp, err := c.Actions.CreateOrUpdateOrgSecret(ctx, "acme", "NPM_TOKEN", github.SecretOrgRequest{KeyID: key.GetKeyID(),
			EncryptedValue: seal(t, key, "npm-1"), Visibility: "selected", SelectedRepositoryIDs: []int64{api.GetID()}})
		apptest.Must(t, "create", err)
		settingsStatus(t, "create", resp, http.StatusCreated)
		s, _, err := c.Actions.GetOrgSecret(ctx, "acme", "npm_token")
		apptest.Must(t, "get", err)
		if s.Visibility != "selected" || s.SelectedRepositoriesURL != env.APIBase()+"/orgs/acme/actions/secrets/NPM_TOKEN/repositories" {
			t.Fatalf("secret %+v", s)
		}
		sel, _, err := c.Actions.ListSelectedReposForOrgSecret(ctx, "acme", "NPM_TOKEN", nil)
		apptest.Must(t, "selected", err)
		if sel.GetTotalCount() != 1 || sel.Repositories[0].GetName() != "api" {
			t.Fatalf("selected %+v", sel)
		}
		seen, _, err := c.Actions.ListRepoOrgSecrets(ctx, "acme", "api", nil)
		apptest.Must(t, "api's organization secrets", err)
		hidden, _, err := c.Actions.ListRepoOrgSecrets(ctx, "acme", "web", nil)
		apptest.Must(t, "web's organization secrets", err)
		if seen.TotalCount != 1 || hidden.TotalCount != 0 {
			t.Fatalf("api sees %d, web %d", seen.TotalCount, hidden.TotalCount)
		}
		resp, err = c.Actions.AddSelectedRepoToOrgSecret(ctx, "acme", "NPM_TOKEN", web.GetID())
		apptest.Must(t, "add web", err)
		settingsStatus(t, "add", resp, http.StatusNoContent)
		resp, err = c.Actions.RemoveSelectedRepoFromOrgSecret(ctx, "acme", "NPM_TOKEN", api.GetID())
		apptest.Must(t, "remove api", err)
		settingsStatus(t, "remove", resp, http.StatusNoContent)
		sel, _, err = c.Actions.ListSelectedReposForOrgSecret(ctx, "acme", "NPM_TOKEN", nil)
		apptest.Must(t, "selected", err)
		if sel.GetTotalCount() != 1 || sel.Repositories[0].GetName() != "web" {
			t.Fatalf("selected %+v", sel)
		}
		if resp, err := c.Actions.SetSelectedReposForOrgSecret(ctx, "acme", "NPM_TOKEN", []int64{api.GetID(), 999999}); err == nil ||
			resp.StatusCode != http.StatusUnprocessableEntity {
			t.Fatalf("a repository of no organization selected: %v", err)
		}
	})
	apptest.Step(t, "a variable for private repositories; selecting is a 409 then", func(t *testing.T) {
		resp, err := c.Actions.CreateOrgVariable(ctx, "acme", github.ActionsCreateOrgVariableRequest{Name: "REGION", Value: "eu",
			Visibility: "private"})
		apptest.Must(t, "create", err)
		settingsStatus(t, "create", resp, http.StatusCreated)
		if resp, err := c.Actions.AddSelectedRepoToOrgVariable(ctx, "acme", "REGION", api); err == nil || resp.StatusCode != http.StatusConflict {
			t.Fatalf("selecting with visibility private: %v", err)
		}
		v, _, err := c.Actions.GetOrgVariable(ctx, "acme", "REGION")
		apptest.Must(t, "get", err)
		if v.Value != "eu" || v.GetVisibility() != "private" {
			t.Fatalf("variable %+v", v)
		}
		seen, _, err := c.Actions.ListRepoOrgVariables(ctx, "acme", "web", nil)
		apptest.Must(t, "web's organization variables", err)
		public, _, err := c.Actions.ListRepoOrgVariables(ctx, "acme", "api", nil)
		apptest.Must(t, "api's organization variables", err)
		if seen.TotalCount != 1 || seen.Variables[0].Value != "eu" || public.TotalCount != 0 {
			t.Fatalf("web sees %+v, api %d", seen, public.TotalCount)
		}
		if resp, err := c.Actions.CreateOrgVariable(ctx, "acme", github.ActionsCreateOrgVariableRequest{Name: "OTHER", Value: "x",
			Visibility: "everyone"}); err == nil || resp.StatusCode != http.StatusUnprocessableEntity {
			t.Fatalf("a visibility the platform does not know: %v", err)
		}
	})
	apptest.Step(t, "a run sees the organization's values under the repository's and the environment's", func(t *testing.T) {
		rk, _, err := c.Actions.GetRepoPublicKey(ctx, "acme", "web")
		apptest.Must(t, "web key", err)
		_, err = c.Actions.CreateOrUpdateRepoSecret(ctx, "acme", "web", "DB_PASSWORD", github.SecretRequest{KeyID: rk.GetKeyID(),
			EncryptedValue: seal(t, rk, "repo-db")})
		apptest.Must(t, "repository secret", err)
		_, err = c.Actions.CreateRepoVariable(ctx, "acme", "web", github.ActionsCreateVariableRequest{Name: "REGION", Value: "us"})
		apptest.Must(t, "repository variable", err)
		_, _, err = c.Repositories.CreateUpdateEnvironment(ctx, "acme", "web", "staging", &github.CreateUpdateEnvironment{})
		apptest.Must(t, "environment", err)
		_, err = c.Actions.CreateEnvVariable(ctx, "acme", "web", "staging", github.ActionsCreateVariableRequest{Name: "REGION", Value: "ap"})
		apptest.Must(t, "environment variable", err)
		secrets, vars, err := env.App.ActionsSettings.RunValues(ctx, web.GetID(), "")
		apptest.Must(t, "run values", err)
		if len(secrets) != 2 || secrets["NPM_TOKEN"] != "npm-1" || secrets["DB_PASSWORD"] != "repo-db" || vars["REGION"] != "us" {
			t.Fatalf("web's run: secrets %v variables %v", secrets, vars)
		}
		_, vars, err = env.App.ActionsSettings.RunValues(ctx, web.GetID(), "staging")
		apptest.Must(t, "run values in staging", err)
		if vars["REGION"] != "ap" {
			t.Fatalf("staging's variables %v", vars)
		}
		secrets, vars, err = env.App.ActionsSettings.RunValues(ctx, api.GetID(), "")
		apptest.Must(t, "api's run values", err)
		if len(secrets) != 0 || len(vars) != 0 {
			t.Fatalf("api's run: secrets %v variables %v", secrets, vars)
		}
	})
	apptest.Step(t, "Dependabot's organization secret takes its repository ids as strings", func(t *testing.T) {
		dk, _, err := c.Dependabot.GetOrgPublicKey(ctx, "acme")
		apptest.Must(t, "dependabot key", err)
		resp, err := c.Dependabot.CreateOrUpdateOrgSecret(ctx, "acme", "REGISTRY_TOKEN", github.SecretOrgRequest{KeyID: dk.GetKeyID(),
			EncryptedValue: seal(t, dk, "npm-2"), Visibility: "selected", SelectedRepositoryIDs: []int64{web.GetID()}})
		apptest.Must(t, "create", err)
		settingsStatus(t, "create", resp, http.StatusCreated)
		sel, _, err := c.Dependabot.ListSelectedReposForOrgSecret(ctx, "acme", "REGISTRY_TOKEN", nil)
		apptest.Must(t, "selected", err)
		if sel.GetTotalCount() != 1 || sel.Repositories[0].GetName() != "web" {
			t.Fatalf("selected %+v", sel)
		}
		secrets, _, err := env.App.ActionsSettings.RunValues(ctx, web.GetID(), "")
		apptest.Must(t, "run values", err)
		if _, ok := secrets["REGISTRY_TOKEN"]; ok {
			t.Fatalf("a Dependabot secret reached a run: %v", secrets)
		}
	})
	apptest.Step(t, "the audit log records the changes, never the values", func(t *testing.T) {
		resp, body := env.Get("/orgs/acme/audit-log?phrase=action:org.create_actions_secret", "token "+env.Token(owner, "read:audit_log"))
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"org.create_actions_secret"`) || strings.Contains(string(body), "npm-1") {
			t.Fatalf("audit log %d %s", resp.StatusCode, body)
		}
		resp, body = env.Get("/orgs/acme/audit-log?phrase=action:environment.create_actions_variable", "token "+env.Token(owner, "read:audit_log"))
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"acme/web"`) {
			t.Fatalf("audit log %d %s", resp.StatusCode, body)
		}
	})
	apptest.Step(t, "a fine-grained token needs the organization's Secrets permission, write to write", func(t *testing.T) {
		fc := env.Client(env.FineGrainedToken(owner, acme, apptest.AllRepos, "organization_secrets:read"))
		list, _, err := fc.Actions.ListOrgSecrets(ctx, "acme", nil)
		apptest.Must(t, "list with organization_secrets:read", err)
		if list.TotalCount != 1 {
			t.Fatalf("organization secrets %+v", list)
		}
		if resp, err := fc.Actions.DeleteOrgSecret(ctx, "acme", "NPM_TOKEN"); err == nil || resp.StatusCode != http.StatusForbidden {
			t.Fatalf("delete with organization_secrets:read: %v", err)
		}
		vc := env.Client(env.FineGrainedToken(owner, acme, apptest.AllRepos, "organization_variables:read"))
		if _, resp, err := vc.Actions.ListOrgSecrets(ctx, "acme", nil); err == nil || resp.StatusCode != http.StatusForbidden {
			t.Fatalf("secrets with organization_variables:read: %v", err)
		}
	})
	apptest.Step(t, "members who do not own the organization are refused", func(t *testing.T) {
		mc := env.Client(env.Token(member, "repo", "admin:org"))
		if _, resp, err := mc.Actions.ListOrgSecrets(ctx, "acme", nil); err == nil || resp.StatusCode != http.StatusForbidden {
			t.Fatalf("a member listed the organization's secrets: %v", err)
		}
	})
}

package e2e_test

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// TestActionsPermissionsRoundTrip sets and reads back a repository's and
// an organization's Actions permissions with go-github: enabled and
// allowed actions, selected actions, the workflow token's defaults,
// access from other repositories, retention bounded by the
// organization's, the organization's enabled repositories and what they
// mean for a repository's runs; and the 422s of values the platform
// refuses.
func TestActionsPermissionsRoundTrip(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	owner := env.User("owner")
	org := env.Org("acme", owner)
	c := env.Client(env.Token(owner, "repo", "admin:org"))
	svc := env.App.ActionsSettings
	repo, _, err := c.Repositories.Create(ctx, "acme", &github.Repository{Name: github.Ptr("svc"), Private: github.Ptr(true)})
	apptest.Must(t, "repository", err)
	apptest.Step(t, "defaults: enabled, all actions, read token, 90 days", func(t *testing.T) {
		p, _, err := c.Repositories.GetActionsPermissions(ctx, "acme", "svc")
		apptest.Must(t, "get", err)
		w, _, err := c.Repositories.GetDefaultWorkflowPermissions(ctx, "acme", "svc")
		apptest.Must(t, "workflow", err)
		r, _, err := c.Repositories.GetArtifactAndLogRetentionPeriod(ctx, "acme", "svc")
		apptest.Must(t, "retention", err)
		if !p.GetEnabled() || p.GetAllowedActions() != "all" || w.GetDefaultWorkflowPermissions() != "read" ||
			w.GetCanApprovePullRequestReviews() || r.GetDays() != 90 || r.GetMaximumAllowedDays() != 90 {
			t.Fatalf("defaults %+v %+v %+v", p, w, r)
		}
	})
	apptest.Step(t, "the repository's settings round trip", func(t *testing.T) {
		_, _, err := c.Repositories.UpdateActionsPermissions(ctx, "acme", "svc", github.ActionsPermissionsRepository{
			Enabled: github.Ptr(true), AllowedActions: github.Ptr("selected")})
		apptest.Must(t, "permissions", err)
		_, _, err = env.Client(env.Token(owner, "repo")).Repositories.EditActionsAllowed(ctx, "acme", "svc", github.ActionsAllowed{
			GithubOwnedAllowed: github.Ptr(false), VerifiedAllowed: github.Ptr(true), PatternsAllowed: []string{"acme/*"}})
		apptest.Must(t, "selected actions", err)
		_, _, err = c.Repositories.UpdateDefaultWorkflowPermissions(ctx, "acme", "svc", github.DefaultWorkflowPermissionRepository{
			DefaultWorkflowPermissions: github.Ptr("write"), CanApprovePullRequestReviews: github.Ptr(true)})
		apptest.Must(t, "workflow", err)
		_, err = c.Repositories.EditActionsAccessLevel(ctx, "acme", "svc", github.RepositoryActionsAccessLevel{AccessLevel: github.Ptr("organization")})
		apptest.Must(t, "access", err)
		_, err = c.Repositories.UpdateArtifactAndLogRetentionPeriod(ctx, "acme", "svc", github.ArtifactPeriodOpt{Days: github.Ptr(30)})
		apptest.Must(t, "retention", err)

		p, _, err := c.Repositories.GetActionsPermissions(ctx, "acme", "svc")
		apptest.Must(t, "get", err)
		sel, _, err := c.Repositories.GetActionsAllowed(ctx, "acme", "svc")
		apptest.Must(t, "selected", err)
		w, _, err := c.Repositories.GetDefaultWorkflowPermissions(ctx, "acme", "svc")
		apptest.Must(t, "workflow", err)
		a, _, err := c.Repositories.GetActionsAccessLevel(ctx, "acme", "svc")
		apptest.Must(t, "access", err)
		r, _, err := c.Repositories.GetArtifactAndLogRetentionPeriod(ctx, "acme", "svc")
		apptest.Must(t, "retention", err)
		if p.GetAllowedActions() != "selected" || p.GetSelectedActionsURL() != env.APIBase()+"/repos/acme/svc/actions/permissions/selected-actions" ||
			sel.GetGithubOwnedAllowed() || !sel.GetVerifiedAllowed() || len(sel.PatternsAllowed) != 1 || sel.PatternsAllowed[0] != "acme/*" ||
			w.GetDefaultWorkflowPermissions() != "write" || !w.GetCanApprovePullRequestReviews() || a.GetAccessLevel() != "organization" ||
			r.GetDays() != 30 {
			t.Fatalf("read back %+v %+v %+v %+v %+v", p, sel, w, a, r)
		}
	})
	apptest.Step(t, "values the platform refuses are 422", func(t *testing.T) {
		for what, call := range map[string]func() (*github.Response, error){
			"allowed_actions": func() (*github.Response, error) {
				_, resp, err := c.Repositories.UpdateActionsPermissions(ctx, "acme", "svc", github.ActionsPermissionsRepository{
					Enabled: github.Ptr(true), AllowedActions: github.Ptr("some")})
				return resp, err
			},
			"enabled missing": func() (*github.Response, error) {
				_, resp, err := c.Repositories.UpdateActionsPermissions(ctx, "acme", "svc", github.ActionsPermissionsRepository{})
				return resp, err
			},
			"workflow permissions": func() (*github.Response, error) {
				_, resp, err := c.Repositories.UpdateDefaultWorkflowPermissions(ctx, "acme", "svc", github.DefaultWorkflowPermissionRepository{
					DefaultWorkflowPermissions: github.Ptr("admin")})
				return resp, err
			},
			"access level user in an organization": func() (*github.Response, error) {
				return c.Repositories.EditActionsAccessLevel(ctx, "acme", "svc", github.RepositoryActionsAccessLevel{AccessLevel: github.Ptr("user")})
			},
			"retention over the maximum": func() (*github.Response, error) {
				return c.Repositories.UpdateArtifactAndLogRetentionPeriod(ctx, "acme", "svc", github.ArtifactPeriodOpt{Days: github.Ptr(91)})
			},
		} {
			if resp, err := call(); err == nil || resp.StatusCode != http.StatusUnprocessableEntity {
				t.Fatalf("%s: %v", what, err)
			}
		}
	})
	apptest.Step(t, "the organization bounds retention and picks the repositories that run Actions", func(t *testing.T) {
		_, err := c.Actions.UpdateArtifactAndLogRetentionPeriodInOrganization(ctx, "acme", github.ArtifactPeriodOpt{Days: github.Ptr(14)})
		apptest.Must(t, "organization retention", err)
		r, _, err := c.Repositories.GetArtifactAndLogRetentionPeriod(ctx, "acme", "svc")
		apptest.Must(t, "repository retention", err)
		if r.GetDays() != 14 || r.GetMaximumAllowedDays() != 14 {
			t.Fatalf("bounded retention %+v", r)
		}
		on, err := svc.ActionsEnabled(ctx, repo.GetID(), org.ID)
		apptest.Must(t, "enabled", err)
		if !on {
			t.Fatal("Actions are off before the organization selects")
		}
		_, _, err = c.Actions.UpdateActionsPermissions(ctx, "acme", github.ActionsPermissions{EnabledRepositories: github.Ptr("selected"),
			AllowedActions: github.Ptr("local_only")})
		apptest.Must(t, "organization permissions", err)
		p, _, err := c.Actions.GetActionsPermissions(ctx, "acme")
		apptest.Must(t, "organization permissions", err)
		if p.GetEnabledRepositories() != "selected" || p.GetAllowedActions() != "local_only" {
			t.Fatalf("organization %+v", p)
		}
		if on, _ := svc.ActionsEnabled(ctx, repo.GetID(), org.ID); on {
			t.Fatal("Actions run in a repository the organization did not select")
		}
		resp, body := env.DoJSON("PUT", "/orgs/acme/actions/permissions/repositories/"+strconv.FormatInt(repo.GetID(), 10), env.Token(owner, "admin:org"), "")
		if resp.StatusCode != http.StatusNoContent {
			t.Fatalf("enable %d %s", resp.StatusCode, body)
		}
		list, _, err := c.Actions.ListEnabledReposInOrg(ctx, "acme", nil)
		apptest.Must(t, "enabled repositories", err)
		if list.TotalCount != 1 || list.Repositories[0].GetName() != "svc" {
			t.Fatalf("enabled %+v", list)
		}
		if on, _ := svc.ActionsEnabled(ctx, repo.GetID(), org.ID); !on {
			t.Fatal("Actions are off in a selected repository")
		}
	})
}

// TestEnterpriseActionsPermissions sets an enterprise's Actions
// permissions and sees them bound its organizations: the retention they
// may set, and whether their repositories run Actions at all.
func TestEnterpriseActionsPermissions(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	owner := env.User("owner")
	org := env.Org("acme", owner)
	env.Enterprise("big", owner, org)
	token := env.Token(owner, "repo", "admin:org", "admin:enterprise")
	c := env.Client(token)
	repo, _, err := c.Repositories.Create(ctx, "acme", &github.Repository{Name: github.Ptr("svc")})
	apptest.Must(t, "repository", err)
	_, err = c.Actions.UpdateArtifactAndLogRetentionPeriodInEnterprise(ctx, "big", github.ArtifactPeriodOpt{Days: github.Ptr(30)})
	apptest.Must(t, "enterprise retention", err)
	r, _, err := c.Actions.GetArtifactAndLogRetentionPeriodInOrganization(ctx, "acme")
	apptest.Must(t, "organization retention", err)
	if r.GetMaximumAllowedDays() != 30 || r.GetDays() != 30 {
		t.Fatalf("organization retention under the enterprise's %+v", r)
	}
	rr, _, err := c.Repositories.GetArtifactAndLogRetentionPeriod(ctx, "acme", "svc")
	apptest.Must(t, "repository retention", err)
	if rr.GetMaximumAllowedDays() != 30 {
		t.Fatalf("repository retention under the enterprise's %+v", rr)
	}
	if resp, err := c.Actions.UpdateArtifactAndLogRetentionPeriodInOrganization(ctx, "acme", github.ArtifactPeriodOpt{Days: github.Ptr(31)}); err == nil ||
		resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("over the enterprise's maximum: %v", err)
	}
	_, _, err = c.Actions.UpdateActionsPermissionsInEnterprise(ctx, "big", github.ActionsPermissionsEnterprise{
		EnabledOrganizations: github.Ptr("selected"), AllowedActions: github.Ptr("all")})
	apptest.Must(t, "enterprise permissions", err)
	p, _, err := c.Actions.GetActionsPermissionsInEnterprise(ctx, "big")
	apptest.Must(t, "enterprise permissions", err)
	if p.GetEnabledOrganizations() != "selected" || p.GetAllowedActions() != "all" {
		t.Fatalf("enterprise %+v", p)
	}
	if on, _ := env.App.ActionsSettings.ActionsEnabled(ctx, repo.GetID(), org.ID); on {
		t.Fatal("Actions run in an organization the enterprise did not select")
	}
	_, err = c.Actions.AddEnabledOrgInEnterprise(ctx, "big", org.ID)
	apptest.Must(t, "select the organization", err)
	if on, _ := env.App.ActionsSettings.ActionsEnabled(ctx, repo.GetID(), org.ID); !on {
		t.Fatal("Actions are off in a selected organization")
	}
	orgs, _, err := c.Actions.ListEnabledOrgsInEnterprise(ctx, "big", nil)
	apptest.Must(t, "enabled organizations", err)
	if orgs.TotalCount != 1 || orgs.Organizations[0].GetLogin() != "acme" {
		t.Fatalf("enabled organizations %+v", orgs)
	}
	if resp, err := c.Actions.AddEnabledOrgInEnterprise(ctx, "big", 424242); err == nil || resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("an organization of no enterprise: %v", err)
	}
}

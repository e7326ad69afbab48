package e2e_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// TestRepositoryRulesets creates a repository's own ruleset beside its
// organization's, lists them with and without the parents, reads the
// branch's rules, has a push refused by the repository's ruleset, and
// changes and deletes it; an organization's ruleset is not the
// repository's to change.
func TestRepositoryRulesets(t *testing.T) {
	t.Parallel()
	f := newRulesetFixture(t)
	ctx := apptest.Ctx()
	orgSet := f.create(t, noForcePushes())
	repoSet := github.RepositoryRuleset{
		Name: "No deletion of releases", Target: new(github.RulesetTargetBranch), Enforcement: github.RulesetEnforcementActive,
		Conditions: &github.RepositoryRulesetConditions{
			RefName: &github.RepositoryRulesetRefConditionParameters{Include: []string{"release/*"}, Exclude: []string{}}},
		Rules: &github.RepositoryRulesetRules{Deletion: &github.EmptyRuleParameters{}},
	}
	var own *github.RepositoryRuleset

	apptest.Step(t, "the repository's admin creates its ruleset; a writer may not", func(t *testing.T) {
		_, resp, _ := f.dev_.Repositories.CreateRuleset(ctx, "acme", "app", repoSet)
		if apptest.ResponseStatus(resp) != http.StatusForbidden && apptest.ResponseStatus(resp) != http.StatusNotFound {
			t.Fatalf("a writer creates a ruleset: %d", apptest.ResponseStatus(resp))
		}
		var err error
		own, _, err = f.boss_.Repositories.CreateRuleset(ctx, "acme", "app", repoSet)
		apptest.Must(t, "create", err)
		if *own.GetSourceType() != github.RulesetSourceTypeRepository || own.Source != "acme/app" {
			t.Fatalf("source: %v %q", own.GetSourceType(), own.Source)
		}
	})

	apptest.Step(t, "the lists show the parents unless told not to", func(t *testing.T) {
		all, _, err := f.dev_.Repositories.GetAllRulesets(ctx, "acme", "app", &github.RepositoryListRulesetsOptions{IncludesParents: new(true)})
		apptest.Must(t, "list", err)
		if len(all) != 2 || all[0].GetID() != orgSet.GetID() || all[1].GetID() != own.GetID() {
			t.Fatalf("with parents: %d rulesets", len(all))
		}
		mine, _, err := f.dev_.Repositories.GetAllRulesets(ctx, "acme", "app", &github.RepositoryListRulesetsOptions{IncludesParents: new(false)})
		apptest.Must(t, "list own", err)
		if len(mine) != 1 || mine[0].GetID() != own.GetID() {
			t.Fatalf("without parents: %d rulesets", len(mine))
		}
		got, _, err := f.dev_.Repositories.GetRuleset(ctx, "acme", "app", orgSet.GetID(), true)
		apptest.Must(t, "the organization's through the repository", err)
		if *got.GetSourceType() != github.RulesetSourceTypeOrganization {
			t.Fatalf("source type %v", got.GetSourceType())
		}
		resp, body := f.env.Get("/repos/acme/app/rules/branches/release/1.0", "token "+f.devToken)
		apptest.WantStatus(t, "rules of release/1.0", resp, body, http.StatusOK)
		if !strings.Contains(string(body), `"type":"deletion"`) || !strings.Contains(string(body), `"ruleset_source_type":"Repository"`) {
			t.Fatalf("rules of release/1.0: %s", body)
		}
		resp, body = f.env.Get("/repos/acme/app/rules/branches/main", "token "+f.devToken)
		apptest.WantStatus(t, "rules of main", resp, body, http.StatusOK)
		if strings.Contains(string(body), `"Repository"`) || !strings.Contains(string(body), `"non_fast_forward"`) {
			t.Fatalf("rules of main: %s", body)
		}
	})

	apptest.Step(t, "the repository's ruleset refuses a push", func(t *testing.T) {
		apptest.Git(t, f.work, "push", "-q", f.url(f.dev, f.devToken), "HEAD:refs/heads/release/1.0")
		out, err := apptest.TryGit(t, f.work, "push", f.url(f.dev, f.devToken), ":refs/heads/release/1.0")
		if err == nil || !strings.Contains(out, "No deletion of releases") || !strings.Contains(out, "Cannot delete this branch.") {
			t.Fatalf("deletion of release/1.0: %v\n%s", err, out)
		}
	})

	apptest.Step(t, "the admin changes and deletes the repository's ruleset, not the organization's", func(t *testing.T) {
		own.Enforcement = github.RulesetEnforcementDisabled
		got, _, err := f.boss_.Repositories.UpdateRuleset(ctx, "acme", "app", own.GetID(), *own)
		apptest.Must(t, "disable", err)
		if got.Enforcement != github.RulesetEnforcementDisabled {
			t.Fatalf("enforcement %v", got.Enforcement)
		}
		apptest.Git(t, f.work, "push", "-q", f.url(f.dev, f.devToken), ":refs/heads/release/1.0")
		resp, err := f.boss_.Repositories.DeleteRuleset(ctx, "acme", "app", orgSet.GetID())
		if apptest.ResponseStatus(resp) != http.StatusNotFound {
			t.Fatalf("the organization's ruleset deleted through the repository: %v", err)
		}
		_, err = f.boss_.Repositories.DeleteRuleset(ctx, "acme", "app", own.GetID())
		apptest.Must(t, "delete", err)
		_, resp, _ = f.dev_.Repositories.GetRuleset(ctx, "acme", "app", own.GetID(), true)
		if apptest.ResponseStatus(resp) != http.StatusNotFound {
			t.Fatalf("GET after DELETE: %d", apptest.ResponseStatus(resp))
		}
	})
}

package e2e_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

type ruleSuite struct {
	ID               int64  `json:"id"`
	ActorName        string `json:"actor_name"`
	Ref              string `json:"ref"`
	RepositoryName   string `json:"repository_name"`
	AfterSHA         string `json:"after_sha"`
	Result           string `json:"result"`
	EvaluationResult string `json:"evaluation_result"`
	RuleEvaluations  []struct {
		RuleSource struct {
			Name string `json:"name"`
		} `json:"rule_source"`
		Enforcement string  `json:"enforcement"`
		Result      string  `json:"result"`
		RuleType    string  `json:"rule_type"`
		Details     *string `json:"details"`
	} `json:"rule_evaluations"`
}

// suites GETs a rule suites path as the token and decodes it.
func suites[T any](t *testing.T, f *rulesetFixture, path, token string) T {
	t.Helper()
	resp, body := f.env.Do(http.MethodGet, path, token, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
	}
	var out T
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return out
}

// TestRuleSuites: a ruleset in evaluate mode lets a push through that it
// would refuse and records a rule suite (result pass, evaluation_result
// fail, the rule's failure in rule_evaluations); an active ruleset's
// refusal is a suite with result fail. The organization's and the
// repository's lists filter by result, ref and actor; a member who is no
// owner or admin cannot read them.
func TestRuleSuites(t *testing.T) {
	t.Parallel()
	f := newRulesetFixture(t)
	rs := smallFiles()
	rs.Enforcement = github.RulesetEnforcementEvaluate
	f.create(t, rs)
	big := strings.Repeat("x", 1<<20+10)
	apptest.Commit(t, f.work, "big", map[string]string{"big.bin": big})
	apptest.Git(t, f.work, "push", "-q", f.url(f.dev, f.devToken), "HEAD:refs/heads/main")
	after := strings.TrimSpace(apptest.Git(t, f.work, "rev-parse", "HEAD"))
	f.create(t, noForcePushes())
	refused(t, f, ":refs/heads/main", false, "Cannot delete this branch")

	list := suites[[]ruleSuite](t, f, "/orgs/acme/rulesets/rule-suites", f.bossToken)
	if len(list) != 2 {
		t.Fatalf("suites: %+v", list)
	}
	del, push := list[0], list[1]
	if push.Result != "pass" || push.EvaluationResult != "fail" || push.ActorName != "dev" || push.Ref != "refs/heads/main" ||
		push.RepositoryName != "app" || push.AfterSHA != after || push.RuleEvaluations != nil {
		t.Errorf("evaluated push: %+v", push)
	}
	if del.Result != "fail" || del.EvaluationResult != "fail" {
		t.Errorf("refused deletion: %+v", del)
	}
	one := suites[ruleSuite](t, f, "/orgs/acme/rulesets/rule-suites/"+itoa(push.ID), f.bossToken)
	if len(one.RuleEvaluations) != 1 {
		t.Fatalf("rule evaluations: %+v", one.RuleEvaluations)
	}
	if e := one.RuleEvaluations[0]; e.RuleType != "max_file_size" || e.Result != "fail" || e.Enforcement != "evaluate" ||
		e.RuleSource.Name != "Small files" || e.Details == nil || !strings.Contains(*e.Details, "big.bin") {
		t.Errorf("rule evaluation: %+v", e)
	}
	if got := suites[[]ruleSuite](t, f, "/orgs/acme/rulesets/rule-suites?rule_suite_result=fail", f.bossToken); len(got) != 1 || got[0].ID != del.ID {
		t.Errorf("rule_suite_result=fail: %+v", got)
	}
	if got := suites[[]ruleSuite](t, f, "/orgs/acme/rulesets/rule-suites?ref=main&actor_name=dev&evaluate_status=evaluate&rule_suite_result=pass", f.bossToken); len(got) != 1 || got[0].ID != push.ID {
		t.Errorf("ref=main, evaluate_status=evaluate, rule_suite_result=pass: %+v", got)
	}
	if got := suites[[]ruleSuite](t, f, "/repos/acme/app/rulesets/rule-suites?time_period=hour", f.bossToken); len(got) != 2 {
		t.Errorf("repository suites: %+v", got)
	}
	suites[ruleSuite](t, f, "/repos/acme/app/rulesets/rule-suites/"+itoa(del.ID), f.bossToken)
	if resp, _ := f.env.Do(http.MethodGet, "/orgs/acme/rulesets/rule-suites", f.devToken, nil); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a member lists the suites: %d", resp.StatusCode)
	}
	if resp, _ := f.env.Do(http.MethodGet, "/orgs/acme/rulesets/rule-suites?time_period=year", f.bossToken, nil); resp.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("time_period=year: %d", resp.StatusCode)
	}
}

// TestProtectedRepositoryNames: an active ruleset whose repository_name
// condition is protected refuses renaming a repository it targets (422,
// naming the ruleset), even for an owner who is no bypass actor; in
// evaluate mode the rename passes.
func TestProtectedRepositoryNames(t *testing.T) {
	t.Parallel()
	f := newRulesetFixture(t)
	ctx := t.Context()
	rs := f.create(t, github.RepositoryRuleset{
		Name: "Keep names", Target: new(github.RulesetTargetBranch), Enforcement: github.RulesetEnforcementActive,
		Conditions: &github.RepositoryRulesetConditions{
			RefName: &github.RepositoryRulesetRefConditionParameters{Include: []string{"~ALL"}, Exclude: []string{}},
			RepositoryName: &github.RepositoryRulesetRepositoryNamesConditionParameters{Include: []string{"app"}, Exclude: []string{},
				Protected: new(true)}},
		Rules: &github.RepositoryRulesetRules{Deletion: &github.EmptyRuleParameters{}},
	})
	_, resp, err := f.boss_.Repositories.Edit(ctx, "acme", "app", &github.Repository{Name: new("renamed")})
	if apptest.ResponseStatus(resp) != http.StatusUnprocessableEntity || !strings.Contains(err.Error(), `"Keep names"`) {
		t.Fatalf("renaming a protected repository: %d %v", apptest.ResponseStatus(resp), err)
	}
	_, _, err = f.boss_.Repositories.Edit(ctx, "acme", "app", &github.Repository{Description: new("still app")})
	apptest.Must(t, "edit without renaming", err)
	f.setEnforcement(t, rs, github.RulesetEnforcementEvaluate)
	_, _, err = f.boss_.Repositories.Edit(ctx, "acme", "app", &github.Repository{Name: new("renamed")})
	apptest.Must(t, "rename under an evaluated ruleset", err)
}

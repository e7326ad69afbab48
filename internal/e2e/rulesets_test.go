package e2e_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apptest"
	"forgeapi/internal/repos"
)

// fixture is the organization acme owned by boss, with dev a member
// whose base permission is write, and its repository app holding main.
type rulesetFixture struct {
	env                 *apptest.Env
	boss, dev           *accounts.Account
	acme                *accounts.Account
	repo                *repos.Repository
	bossToken, devToken string
	boss_, dev_         *github.Client
	work                string
}

func newRulesetFixture(t *testing.T) *rulesetFixture {
	t.Helper()
	env := apptest.Start(t)
	f := &rulesetFixture{env: env, boss: env.User("boss"), dev: env.User("dev")}
	f.acme = env.Org("acme", f.boss, f.dev)
	f.repo = env.Repo(f.acme, "app")
	f.bossToken, f.devToken = env.Token(f.boss, "admin:org", "repo"), env.Token(f.dev, "admin:org", "repo")
	f.boss_, f.dev_ = env.Client(f.bossToken), env.Client(f.devToken)
	_, _, err := f.boss_.Organizations.Edit(context.Background(), "acme", &github.Organization{DefaultRepoPermission: new("write")})
	apptest.Must(t, "base permission write", err)
	f.work = apptest.WorkTree(t, map[string]string{"README.md": "hello"})
	apptest.Git(t, f.work, "push", "-q", f.url(f.boss, f.bossToken), "HEAD:refs/heads/main")
	return f
}

func (f *rulesetFixture) url(user *accounts.Account, token string) string {
	return f.env.GitURL("acme", "app", user.Login, token)
}

// create makes a ruleset as boss.
func (f *rulesetFixture) create(t *testing.T, rs github.RepositoryRuleset) *github.RepositoryRuleset {
	t.Helper()
	got, _, err := f.boss_.Organizations.CreateRepositoryRuleset(context.Background(), "acme", rs)
	apptest.Must(t, "create ruleset "+rs.Name, err)
	return got
}

// setEnforcement changes a ruleset's enforcement as boss.
func (f *rulesetFixture) setEnforcement(t *testing.T, rs *github.RepositoryRuleset, e github.RulesetEnforcement) {
	t.Helper()
	rs.Enforcement = e
	_, _, err := f.boss_.Organizations.UpdateRepositoryRuleset(context.Background(), "acme", rs.GetID(), *rs)
	apptest.Must(t, "update ruleset", err)
}

func noForcePushes() github.RepositoryRuleset {
	return github.RepositoryRuleset{
		Name: "No force pushes", Target: new(github.RulesetTargetBranch), Enforcement: github.RulesetEnforcementActive,
		BypassActors: []*github.BypassActor{{ActorType: new(github.BypassActorTypeOrganizationAdmin), BypassMode: new(github.BypassModeAlways)}},
		Conditions: &github.RepositoryRulesetConditions{
			RefName:        &github.RepositoryRulesetRefConditionParameters{Include: []string{"~DEFAULT_BRANCH"}, Exclude: []string{}},
			RepositoryName: &github.RepositoryRulesetRepositoryNamesConditionParameters{Include: []string{"~ALL"}, Exclude: []string{"other*"}},
		},
		Rules: &github.RepositoryRulesetRules{NonFastForward: &github.EmptyRuleParameters{}, Deletion: &github.EmptyRuleParameters{}},
	}
}

func smallFiles() github.RepositoryRuleset {
	return github.RepositoryRuleset{
		Name: "Small files", Target: new(github.RulesetTargetPush), Enforcement: github.RulesetEnforcementActive,
		Conditions: &github.RepositoryRulesetConditions{
			RepositoryName: &github.RepositoryRulesetRepositoryNamesConditionParameters{Include: []string{"app"}, Exclude: []string{}},
		},
		Rules: &github.RepositoryRulesetRules{MaxFileSize: &github.MaxFileSizeRuleParameters{MaxFileSize: 1}},
	}
}

func TestRulesetsCRUD(t *testing.T) {
	t.Parallel()
	f := newRulesetFixture(t)
	ctx := context.Background()
	rs := f.create(t, noForcePushes())
	if rs.GetID() == 0 || rs.Source != "acme" || *rs.SourceType != github.RulesetSourceTypeOrganization ||
		rs.Rules == nil || rs.Rules.NonFastForward == nil || rs.Rules.Deletion == nil || rs.Rules.Creation != nil ||
		len(rs.BypassActors) != 1 || rs.Conditions.RefName.Include[0] != "~DEFAULT_BRANCH" {
		t.Fatalf("created %+v", rs)
	}
	push := f.create(t, smallFiles())
	if push.Rules.MaxFileSize.MaxFileSize != 1 || push.Conditions.RefName != nil {
		t.Errorf("push ruleset %+v", push)
	}

	got, _, err := f.boss_.Organizations.GetRepositoryRuleset(ctx, "acme", rs.GetID())
	apptest.Must(t, "get", err)
	if got.Name != "No force pushes" || got.GetLinks().GetSelf().GetHRef() == "" {
		t.Errorf("got %+v", got)
	}
	list, _, err := f.boss_.Organizations.ListAllRepositoryRulesets(ctx, "acme", nil)
	apptest.Must(t, "list", err)
	if len(list) != 2 || list[0].Name != "No force pushes" || list[1].Name != "Small files" {
		t.Errorf("list %+v", list)
	}
	if resp, _ := f.env.Do("GET", "/orgs/acme/rulesets?targets=push", f.bossToken, nil); resp.StatusCode != 200 {
		t.Errorf("targets filter: %d", resp.StatusCode)
	}

	got.Enforcement = github.RulesetEnforcementEvaluate
	got.Name = "Renamed"
	upd, _, err := f.boss_.Organizations.UpdateRepositoryRuleset(ctx, "acme", rs.GetID(), *got)
	apptest.Must(t, "update", err)
	if upd.Enforcement != github.RulesetEnforcementEvaluate || upd.Name != "Renamed" || upd.Rules.NonFastForward == nil {
		t.Errorf("updated %+v", upd)
	}

	// A member who is not an owner sees none of it.
	if _, resp, err := f.dev_.Organizations.GetRepositoryRuleset(ctx, "acme", rs.GetID()); err == nil || resp.StatusCode == 200 {
		t.Errorf("member read a ruleset: %v", err)
	}
	// Rules git cannot enforce, a second name, a missing enforcement: 422.
	for _, body := range []string{
		`{"name":"x","enforcement":"active","conditions":{"ref_name":{"include":["~ALL"]},"repository_name":{"include":["~ALL"]}},"rules":[{"type":"pull_request"}]}`,
		`{"name":"Small files","target":"push","enforcement":"active","conditions":{"repository_name":{"include":["~ALL"]}}}`,
		`{"name":"y","conditions":{"repository_name":{"include":["~ALL"]}}}`,
		`{"name":"z","target":"push","enforcement":"active","conditions":{"repository_name":{"include":["~ALL"]}},"rules":[{"type":"max_file_size","parameters":{"max_file_size":500}}]}`,
	} {
		if resp, b := f.env.DoJSON("POST", "/orgs/acme/rulesets", f.bossToken, body); resp.StatusCode != 422 {
			t.Errorf("POST %s: %d %s", body, resp.StatusCode, b)
		}
	}

	_, err = f.boss_.Organizations.DeleteRepositoryRuleset(ctx, "acme", rs.GetID())
	apptest.Must(t, "delete", err)
	if _, resp, _ := f.boss_.Organizations.GetRepositoryRuleset(ctx, "acme", rs.GetID()); resp.StatusCode != 404 {
		t.Errorf("deleted ruleset: %d", resp.StatusCode)
	}
}

// refused pushes refspec as dev and checks the refusal names the ruleset
// and says why.
func refused(t *testing.T, f *rulesetFixture, refspec string, force bool, wants ...string) {
	t.Helper()
	args := []string{"push", f.url(f.dev, f.devToken), refspec}
	if force {
		args = append(args, "--force")
	}
	out, err := apptest.TryGit(t, f.work, args...)
	if err == nil {
		t.Fatalf("push %s passed:\n%s", refspec, out)
	}
	for _, want := range wants {
		if !strings.Contains(out, want) {
			t.Errorf("refusal lacks %q:\n%s", want, out)
		}
	}
}

func TestRulesetsRefusePushes(t *testing.T) {
	t.Parallel()
	f := newRulesetFixture(t)
	ctx := context.Background()
	force := f.create(t, noForcePushes())
	size := f.create(t, smallFiles())
	base := strings.TrimSpace(apptest.Git(t, f.work, "rev-parse", "HEAD"))

	// A force push to the default branch: refused for dev, not for boss,
	// an owner with bypass.
	apptest.Commit(t, f.work, "one", map[string]string{"a.txt": "a"})
	apptest.Git(t, f.work, "push", "-q", f.url(f.dev, f.devToken), "HEAD:refs/heads/main")
	apptest.Git(t, f.work, "reset", "-q", "--hard", base)
	apptest.Commit(t, f.work, "other", map[string]string{"b.txt": "b"})
	refused(t, f, "HEAD:refs/heads/main", true, "refs/heads/main", `Ruleset "No force pushes"`, "Cannot force-push to this branch")
	// Other branches are not the default one.
	apptest.Git(t, f.work, "push", "-q", f.url(f.dev, f.devToken), "HEAD~1:refs/heads/topic")
	apptest.Git(t, f.work, "push", "-q", "--force", f.url(f.dev, f.devToken), "HEAD:refs/heads/topic")
	apptest.Git(t, f.work, "push", "-q", "--force", f.url(f.boss, f.bossToken), "HEAD:refs/heads/main")
	refused(t, f, ":refs/heads/main", false, "Cannot delete this branch")

	// A file over 1 MB: refused through git and through the contents API.
	big := strings.Repeat("x", 1<<20+10)
	apptest.Commit(t, f.work, "big", map[string]string{"big.bin": big})
	refused(t, f, "HEAD:refs/heads/main", false, `Ruleset "Small files"`, "Cannot push files larger than 1 MB", "big.bin")
	refused(t, f, "HEAD:refs/heads/topic", true, `Ruleset "Small files"`)
	_, resp, err := f.dev_.Repositories.CreateFile(ctx, "acme", "app", "api.bin", &github.RepositoryContentFileOptions{
		Message: new("big"), Content: []byte(big), Branch: new("main")})
	if err == nil || resp.StatusCode != http.StatusConflict || !strings.Contains(err.Error(), `Ruleset "Small files"`) {
		t.Errorf("contents PUT of a big file: %v", err)
	}
	// The git references API moves references as pushes too: a forced
	// update of main and its deletion are refused for dev.
	_, resp, err = f.dev_.Git.UpdateRef(ctx, "acme", "app", "heads/main", github.UpdateRef{SHA: base, Force: new(true)})
	if err == nil || resp.StatusCode != http.StatusConflict || !strings.Contains(err.Error(), `Ruleset "No force pushes"`) {
		t.Errorf("forced ref update: %v", err)
	}
	resp, err = f.dev_.Git.DeleteRef(ctx, "acme", "app", "heads/main")
	if err == nil || resp.StatusCode != http.StatusConflict || !strings.Contains(err.Error(), "Cannot delete this branch") {
		t.Errorf("ref deletion: %v", err)
	}
	// A small file through the API passes.
	_, _, err = f.dev_.Repositories.CreateFile(ctx, "acme", "app", "small.txt", &github.RepositoryContentFileOptions{
		Message: new("small"), Content: []byte("s"), Branch: new("main")})
	apptest.Must(t, "small file through the API", err)

	// In evaluate mode, and disabled, rulesets do not block.
	f.setEnforcement(t, size, github.RulesetEnforcementEvaluate)
	apptest.Git(t, f.work, "fetch", "-q", f.url(f.dev, f.devToken), "main")
	apptest.Git(t, f.work, "rebase", "-q", "FETCH_HEAD")
	apptest.Git(t, f.work, "push", "-q", f.url(f.dev, f.devToken), "HEAD:refs/heads/main")
	f.setEnforcement(t, force, github.RulesetEnforcementDisabled)
	apptest.Git(t, f.work, "push", "-q", "--force", f.url(f.dev, f.devToken), base+":refs/heads/main")
}

func TestRulesetsOtherRules(t *testing.T) {
	t.Parallel()
	f := newRulesetFixture(t)
	all := &github.RepositoryRulesetRepositoryNamesConditionParameters{Include: []string{"~ALL"}, Exclude: []string{}}
	f.create(t, github.RepositoryRuleset{
		Name: "Files", Target: new(github.RulesetTargetPush), Enforcement: github.RulesetEnforcementActive,
		Conditions: &github.RepositoryRulesetConditions{RepositoryName: all},
		Rules: &github.RepositoryRulesetRules{
			FilePathRestriction:      &github.FilePathRestrictionRuleParameters{RestrictedFilePaths: []string{"secrets/**"}},
			FileExtensionRestriction: &github.FileExtensionRestrictionRuleParameters{RestrictedFileExtensions: []string{".exe"}},
		},
	})
	f.create(t, github.RepositoryRuleset{
		Name: "Releases", Target: new(github.RulesetTargetTag), Enforcement: github.RulesetEnforcementActive,
		Conditions: &github.RepositoryRulesetConditions{RepositoryName: all,
			RefName: &github.RepositoryRulesetRefConditionParameters{Include: []string{"refs/tags/v*"}, Exclude: []string{}}},
		Rules: &github.RepositoryRulesetRules{Creation: &github.EmptyRuleParameters{}},
	})
	linear := f.create(t, github.RepositoryRuleset{
		Name: "Linear", Target: new(github.RulesetTargetBranch), Enforcement: github.RulesetEnforcementActive,
		Conditions: &github.RepositoryRulesetConditions{RepositoryName: all,
			RefName: &github.RepositoryRulesetRefConditionParameters{Include: []string{"~ALL"}, Exclude: []string{}}},
		Rules: &github.RepositoryRulesetRules{RequiredLinearHistory: &github.EmptyRuleParameters{}},
	})
	base := strings.TrimSpace(apptest.Git(t, f.work, "rev-parse", "HEAD"))

	apptest.Commit(t, f.work, "secret", map[string]string{"secrets/deep/key.txt": "k"})
	refused(t, f, "HEAD:refs/heads/main", false, `Ruleset "Files"`, "secrets/deep/key.txt")
	apptest.Git(t, f.work, "reset", "-q", "--hard", base)
	apptest.Commit(t, f.work, "exe", map[string]string{"bin/tool.EXE": "MZ"})
	refused(t, f, "HEAD:refs/heads/main", false, `Ruleset "Files"`, "bin/tool.EXE")
	apptest.Git(t, f.work, "reset", "-q", "--hard", base)

	refused(t, f, "HEAD:refs/tags/v1", false, `Ruleset "Releases"`, "Cannot create ref")
	apptest.Git(t, f.work, "push", "-q", f.url(f.dev, f.devToken), "HEAD:refs/tags/nightly")

	apptest.Git(t, f.work, "checkout", "-q", "-b", "side")
	apptest.Commit(t, f.work, "side", map[string]string{"s.txt": "s"})
	apptest.Git(t, f.work, "checkout", "-q", "-")
	apptest.Commit(t, f.work, "main", map[string]string{"m.txt": "m"})
	apptest.Git(t, f.work, "-c", "user.name=t", "-c", "user.email=t@example.com", "merge", "-q", "--no-ff", "-m", "merge", "side")
	refused(t, f, "HEAD:refs/heads/main", false, `Ruleset "Linear"`, "must not contain merge commits")

	// A RepositoryRole bypass actor: dev has write on the repository.
	linear.BypassActors = []*github.BypassActor{{ActorID: new(int64(4)), ActorType: new(github.BypassActorTypeRepositoryRole), BypassMode: new(github.BypassModeAlways)}}
	_, _, err := f.boss_.Organizations.UpdateRepositoryRuleset(context.Background(), "acme", linear.GetID(), *linear)
	apptest.Must(t, "add bypass", err)
	apptest.Git(t, f.work, "push", "-q", f.url(f.dev, f.devToken), "HEAD:refs/heads/main")
}

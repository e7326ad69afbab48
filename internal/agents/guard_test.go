package agents_test

import (
	"strings"
	"testing"

	"forgeapi/internal/apptest"
)

// patchRepo sends PATCH /repos/{fullName} and checks the status; a 422
// must name the ruleset in its message and its one field error.
func (f *fixture) patchRepo(t *testing.T, want int, fullName, token, body, field string) {
	t.Helper()
	b := f.mustCall(t, want, "PATCH", "/repos/"+fullName, token, body)
	if want != 422 {
		return
	}
	var e apiError
	decode(t, b, &e)
	if !strings.Contains(e.Message, `ruleset "Protect custom agents"`) || len(e.Errors) != 1 ||
		e.Errors[0].Field != field || e.Errors[0].Code != "custom" {
		t.Errorf("PATCH %s %s: %s", fullName, body, b)
	}
}

func TestRulesetRefusesRenamesByOthers(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.bossPush(t, apptest.WorkTree(t, map[string]string{"agents/a.md": "a"}), f.repo)
	f.putSource(t, f.acme, nil)

	// dev may not rename the source away (to push to it unprotected and
	// rename it back) ...
	f.patchRepo(t, 422, "acme/.service-private", f.devToken, `{"name": "tmp"}`, "name")
	f.mustCall(t, 200, "GET", "/repos/acme/.service-private", f.devToken, "")
	// ... nor make another repository the source by renaming it.
	f.mustCall(t, 200, "PATCH", "/repos/acme/.service-private", f.bossToken, `{"name": "old"}`)
	evil := f.env.Repo(f.acme, "evil")
	apptest.Git(t, apptest.WorkTree(t, map[string]string{"agents/evil.md": "e"}), "push", "-q",
		f.gitURL(evil, f.dev, f.devToken), "HEAD:refs/heads/main")
	f.patchRepo(t, 422, "acme/evil", f.devToken, `{"name": ".service-private"}`, "name")
	f.mustCall(t, 404, "GET", base, f.bossToken, "")

	// Enterprise owners may; a change of case keeps the target.
	f.mustCall(t, 200, "PATCH", "/repos/acme/old", f.bossToken, `{"name": ".service-private"}`)
	f.mustCall(t, 200, "PATCH", "/repos/acme/.service-private", f.devToken, `{"name": ".Service-Private"}`)
	if list, _ := f.listAgents(t, ""); names(list) != "a=agents/a.md" {
		t.Fatalf("agents after the renames: %s", names(list))
	}

	// Without a ruleset, anyone with admin access may rename.
	f.putSource(t, f.acme, ptr(false))
	f.mustCall(t, 200, "PATCH", "/repos/acme/.Service-Private", f.devToken, `{"name": "free"}`)
}

func TestRulesetRefusesDefaultBranchChangesByOthers(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	work := apptest.WorkTree(t, map[string]string{"agents/a.md": "a", "README.md": "r"})
	f.bossPush(t, work, f.repo)
	bossURL := f.gitURL(f.repo, f.boss, f.bossToken)
	apptest.Git(t, work, "checkout", "-q", "-b", "docs")
	apptest.Commit(t, work, "docs only", map[string]string{"README.md": "r2", "agents/sub/x.md": "x"})
	apptest.Git(t, work, "push", "-q", bossURL, "docs")
	apptest.Git(t, work, "checkout", "-q", "-b", "other", "main")
	apptest.Commit(t, work, "other agents", map[string]string{"agents/a.md": "a2", ".service/agents/b.md": "b"})
	apptest.Git(t, work, "push", "-q", bossURL, "other")
	f.putSource(t, f.acme, nil)

	f.patchRepo(t, 422, "acme/.service-private", f.devToken, `{"default_branch": "other"}`, "default_branch")
	var repo struct {
		DefaultBranch string `json:"default_branch"`
	}
	decode(t, f.mustCall(t, 200, "GET", "/repos/acme/.service-private", f.devToken, ""), &repo)
	if repo.DefaultBranch != "main" {
		t.Fatalf("default branch %q after a refused change", repo.DefaultBranch)
	}
	// A branch with the same restricted files may be the default.
	f.mustCall(t, 200, "PATCH", "/repos/acme/.service-private", f.devToken, `{"default_branch": "docs"}`)
	// An enterprise owner may choose any branch.
	f.mustCall(t, 200, "PATCH", "/repos/acme/.service-private", f.bossToken, `{"default_branch": "other"}`)
	if list, _ := f.listAgents(t, ""); len(list) != 1 || !strings.HasSuffix(list[0].URL, "/blob/other/agents/a.md") {
		t.Fatalf("agents on other: %+v", list)
	}
}

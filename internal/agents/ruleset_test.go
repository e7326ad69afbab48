package agents_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"forgeapi/internal/apptest"
	"forgeapi/internal/repos"
)

func eventCount(t *testing.T, f *fixture, repo *repos.Repository) int {
	t.Helper()
	var n int
	apptest.Must(t, "count events", f.env.Q().QueryRowContext(context.Background(),
		`SELECT count(*) FROM events WHERE repo_id = $1`, repo.ID).Scan(&n))
	return n
}

// refused pushes refspec from work as dev and checks that the ruleset
// refused it, naming itself and the path, and that nothing changed.
func refused(t *testing.T, f *fixture, work, refspec, path string, force bool) {
	t.Helper()
	head, events := f.serverHead(t, f.repo), eventCount(t, f, f.repo)
	args := []string{"push", f.gitURL(f.repo, f.dev, f.devToken), refspec}
	if force {
		args = append(args, "--force")
	}
	out, err := apptest.TryGit(t, work, args...)
	if err == nil {
		t.Fatalf("push of %s by dev passed:\n%s", path, out)
	}
	for _, want := range []string{`Ruleset "Protect custom agents"`, "of enterprise acme-corp", "agents/*.md, .service/agents/*.md", path} {
		if !strings.Contains(out, "remote: ") || !strings.Contains(out, want) {
			t.Errorf("refusal of %s lacks %q:\n%s", path, want, out)
		}
	}
	if got := f.serverHead(t, f.repo); got != head {
		t.Errorf("main moved from %s to %s after a refused push", head, got)
	}
	if n := eventCount(t, f, f.repo); n != events {
		t.Errorf("a refused push recorded events: %d -> %d", events, n)
	}
}

func TestRulesetRefusesAgentChangesByOthers(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	work := apptest.WorkTree(t, map[string]string{"agents/x.md": "v1", "README.md": "r"})
	f.bossPush(t, work, f.repo)
	f.putSource(t, f.acme, nil)
	devURL := f.gitURL(f.repo, f.dev, f.devToken)
	base := strings.TrimSpace(apptest.Git(t, work, "rev-parse", "HEAD"))

	// Adding, changing and removing protected files: refused.
	apptest.Commit(t, work, "add", map[string]string{"agents/new.md": "n"})
	refused(t, f, work, "HEAD:refs/heads/main", "agents/new.md", false)
	apptest.Git(t, work, "reset", "-q", "--hard", base)
	apptest.Commit(t, work, "change", map[string]string{"agents/x.md": "v2"})
	refused(t, f, work, "HEAD:refs/heads/main", "agents/x.md", false)
	apptest.Git(t, work, "reset", "-q", "--hard", base)
	apptest.Commit(t, work, "remove", map[string]string{"agents/x.md": ""})
	refused(t, f, work, "HEAD:refs/heads/main", "agents/x.md", false)
	apptest.Git(t, work, "reset", "-q", "--hard", base)
	apptest.Commit(t, work, "hidden", map[string]string{".service/agents/y.md": "y"})
	refused(t, f, work, "HEAD:refs/heads/main", ".service/agents/y.md", false)

	// On any branch or tag, and even when a later commit undoes it.
	apptest.Git(t, work, "reset", "-q", "--hard", base)
	apptest.Commit(t, work, "add", map[string]string{"agents/tmp.md": "t"})
	apptest.Commit(t, work, "undo", map[string]string{"agents/tmp.md": ""})
	refused(t, f, work, "HEAD:refs/heads/topic", "agents/tmp.md", false)
	refused(t, f, work, "HEAD:refs/tags/v1", "agents/tmp.md", false)

	// Paths outside the patterns pass: * does not cross /.
	apptest.Git(t, work, "reset", "-q", "--hard", base)
	apptest.Commit(t, work, "others", map[string]string{
		"agents/sub/deep.md": "d", "agents/notes.txt": "n", "README.md": "r2", "docs/agents/z.md": "z", "agents.md": "a",
	})
	events := eventCount(t, f, f.repo)
	apptest.Git(t, work, "push", "-q", devURL, "HEAD:refs/heads/main")
	if eventCount(t, f, f.repo) == events {
		t.Error("an accepted push recorded no events")
	}

	// An enterprise owner may change them.
	apptest.Commit(t, work, "owner edit", map[string]string{"agents/x.md": "v3", "agents/owner.md": "o"})
	f.bossPush(t, work, f.repo)
	if list, _ := f.listAgents(t, ""); names(list) != "owner=agents/owner.md,x=agents/x.md" {
		t.Fatalf("agents after owner push: %s", names(list))
	}

	// A force push back to an older commit changes the files without a
	// new commit: refused too.
	refused(t, f, work, "HEAD~1:refs/heads/main", "agents/owner.md", true)
	// And so is moving a branch onto commits that change them.
	apptest.Git(t, work, "push", "-q", devURL, base+":refs/heads/old")
	refused(t, f, work, "HEAD:refs/heads/old", "agents/x.md", false)
}

func TestRulesetTargetsOnlyTheSourceRepository(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.putSource(t, f.acme, nil)
	other := f.env.Repo(f.acme, "other")
	beta, betaRepo := f.org(t, "beta")
	_ = beta
	work := apptest.WorkTree(t, map[string]string{"agents/x.md": "x"})
	for _, repo := range []*repos.Repository{other, betaRepo} {
		if out, err := apptest.TryGit(t, work, "push", f.gitURL(repo, f.dev, f.devToken), "main"); err != nil {
			t.Errorf("push to %s: %v\n%s", repo.FullName(), err, out)
		}
	}
	// Deleting a branch changes no file on it.
	apptest.Git(t, work, "push", "-q", f.gitURL(f.repo, f.boss, f.bossToken), "main:refs/heads/gone")
	apptest.Git(t, work, "push", "-q", f.gitURL(f.repo, f.dev, f.devToken), ":refs/heads/gone")
}

func TestRulesetRefusesInstallationsAndOtherEnterprisesOwners(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.putSource(t, f.acme, nil)
	work := apptest.WorkTree(t, map[string]string{"agents/x.md": "x"})

	install := f.env.InstallationToken(f.acme, apptest.AllRepos, "contents:write")
	out, err := apptest.TryGit(t, work, "push", f.env.GitURL("acme", ".service-private", "x-access-token", install), "main")
	if err == nil || !strings.Contains(out, "Protect custom agents") {
		t.Fatalf("installation push: %v\n%s", err, out)
	}

	// Owning another enterprise does not count.
	f.env.Enterprise("elsewhere", f.dev)
	refused(t, f, work, "HEAD:refs/heads/main", "agents/x.md", false)

	// Made an owner of this one, dev may push.
	f.env.EnterpriseOwner(f.ent, f.dev)
	apptest.Git(t, work, "push", "-q", f.gitURL(f.repo, f.dev, f.devToken), "main")
}

// TestRulesetRefusesContentsWrites: a write through the contents API to a
// protected agent file is refused as a push of it is (409 naming the
// ruleset), and nothing moves; other files are written.
func TestRulesetRefusesContentsWrites(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	work := apptest.WorkTree(t, map[string]string{"agents/x.md": "v1", "README.md": "r"})
	f.bossPush(t, work, f.repo)
	f.putSource(t, f.acme, nil)
	head, events := f.serverHead(t, f.repo), eventCount(t, f, f.repo)
	path := "/repos/" + f.repo.FullName() + "/contents/agents/new.md"
	resp, body := f.env.DoJSON("PUT", path, f.devToken, `{"message":"add an agent","content":"bmV3"}`)
	if resp.StatusCode != http.StatusConflict || !strings.Contains(string(body), "Protect custom agents") || !strings.Contains(string(body), "agents/new.md") {
		t.Fatalf("PUT %s by dev: %d %s, want a 409 naming the ruleset", path, resp.StatusCode, body)
	}
	if got := f.serverHead(t, f.repo); got != head {
		t.Fatalf("main moved from %s to %s after a refused write", head, got)
	}
	if n := eventCount(t, f, f.repo); n != events {
		t.Fatalf("a refused write recorded events: %d -> %d", events, n)
	}
	resp, body = f.env.DoJSON("PUT", "/repos/"+f.repo.FullName()+"/contents/docs/ok.md", f.devToken, `{"message":"docs","content":"b2s="}`)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("PUT of an unprotected file by dev: %d %s", resp.StatusCode, body)
	}
}

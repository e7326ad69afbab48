package agents_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"forgeapi/internal/apptest"
)

func TestDefinitionsPushedWithGitAreListed(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	work := apptest.WorkTree(t, map[string]string{
		"agents/security-reviewer.md": "---\nname: Security Reviewer\ndescription: finds holes\n---\nYou review code.\n",
		"agents/docs writer.md":       "# Writes docs\n",
		"agents/crlf.md":              "\uFEFF---\r\nname: \"Windows: Agent\"\r\n---\r\nbody\r\n",
		"agents/broken.md":            "---\nname: [oops\n---\n",
		"agents/notes.txt":            "not an agent",
		"agents/sub/nested.md":        "---\nname: Nested\n---\n",
		".service/agents/hidden.md":   "---\nname: Hidden\n---\n",
		"README.md":                   "# private\n",
	})
	if err := os.Symlink("security-reviewer.md", filepath.Join(work, "agents", "link.md")); err != nil {
		t.Fatal(err)
	}
	apptest.Git(t, work, "add", "agents/link.md")
	apptest.Commit(t, work, "symlink", nil)
	f.bossPush(t, work, f.repo)
	f.putSource(t, f.acme, nil)

	list, resp := f.listAgents(t, "")
	want := "broken=agents/broken.md,Windows: Agent=agents/crlf.md,docs writer=agents/docs writer.md," +
		"Security Reviewer=agents/security-reviewer.md"
	if got := names(list); got != want {
		t.Fatalf("agents:\n got %s\nwant %s", got, want)
	}
	web := f.env.URL + "/acme/.service-private/blob/main/agents/"
	if list[2].URL != web+"docs%20writer.md" || list[3].URL != web+"security-reviewer.md" {
		t.Errorf("urls: %q, %q", list[2].URL, list[3].URL)
	}
	if resp.Header.Get("Link") != "" {
		t.Errorf("one page has a Link header: %s", resp.Header.Get("Link"))
	}

	// A later push changes what is listed (boss is an enterprise owner).
	apptest.Commit(t, work, "rename and remove", map[string]string{
		"agents/security-reviewer.md": "---\nname: 'Sec Reviewer v2'\n---\n",
		"agents/broken.md":            "",
	})
	f.bossPush(t, work, f.repo)
	list, _ = f.listAgents(t, "")
	if got := names(list); !strings.Contains(got, "Sec Reviewer v2=agents/security-reviewer.md") || strings.Contains(got, "broken") {
		t.Fatalf("after second push: %s", got)
	}
}

func TestDefinitionsPaginate(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	files := map[string]string{}
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		files["agents/"+n+".md"] = "---\nname: Agent " + strings.ToUpper(n) + "\n---\n"
	}
	f.bossPush(t, apptest.WorkTree(t, files), f.repo)
	f.putSource(t, f.acme, nil)

	var all []string
	for page := 1; page <= 3; page++ {
		list, resp := f.listAgents(t, "?per_page=2&page="+string(rune('0'+page)))
		for _, a := range list {
			all = append(all, a.Name)
		}
		link := resp.Header.Get("Link")
		if page < 3 && !strings.Contains(link, `rel="next"`) || page == 3 && strings.Contains(link, `rel="next"`) {
			t.Errorf("page %d Link %q", page, link)
		}
		if page == 1 && !strings.Contains(link, "page=3&per_page=2>; rel=\"last\"") {
			t.Errorf("page 1 Link %q lacks last", link)
		}
	}
	if strings.Join(all, ",") != "Agent A,Agent B,Agent C,Agent D,Agent E" {
		t.Fatalf("pages gave %v", all)
	}
	for _, q := range []string{"?page=9", "?page=92233720368547759&per_page=100", "?page=9223372036854775807"} {
		if list, _ := f.listAgents(t, q); list == nil || len(list) != 0 {
			t.Errorf("%s, past the end: %v (want an empty array)", q, list)
		}
	}
	for _, q := range []string{"?per_page=x", "?page=-1"} {
		f.mustCall(t, 422, "GET", base+q, f.bossToken, "")
	}
}

func TestDefinitionsOfEmptyRepositoryAndDefaultBranch(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.putSource(t, f.acme, nil)
	b := f.mustCall(t, 200, "GET", base, f.bossToken, "")
	if strings.TrimSpace(string(b)) != `{"custom_agents":[]}` {
		t.Fatalf("empty repository: %s", b)
	}

	// Definitions are read from the default branch only, and the url
	// names it.
	other, repo := f.org(t, "beta")
	work := apptest.WorkTree(t, map[string]string{"agents/on-main.md": "x"})
	apptest.Git(t, work, "push", "-q", f.gitURL(repo, f.boss, f.bossToken), "HEAD:refs/heads/main")
	apptest.Git(t, work, "checkout", "-q", "-b", "trunk")
	apptest.Commit(t, work, "trunk only", map[string]string{"agents/on-trunk.md": "y"})
	apptest.Git(t, work, "push", "-q", f.gitURL(repo, f.boss, f.bossToken), "trunk")
	f.putSource(t, other, nil)
	if list, _ := f.listAgents(t, ""); names(list) != "on-main=agents/on-main.md" {
		t.Fatalf("default branch main: %s", names(list))
	}
	_, err := f.env.Q().ExecContext(context.Background(), `UPDATE repositories SET default_branch = 'trunk' WHERE id = $1`, repo.ID)
	apptest.Must(t, "set default branch", err)
	list, _ := f.listAgents(t, "")
	if names(list) != "on-main=agents/on-main.md,on-trunk=agents/on-trunk.md" ||
		list[1].URL != f.env.URL+"/beta/.service-private/blob/trunk/agents/on-trunk.md" {
		t.Fatalf("default branch trunk: %+v", list)
	}
}

func TestCustomAgentsNullWithoutSource(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	b := f.mustCall(t, 200, "GET", base, f.bossToken, "")
	if strings.TrimSpace(string(b)) != `{"custom_agents":null}` {
		t.Fatalf("no source: %s", b)
	}
	f.mustCall(t, 404, "GET", base+"/source", f.bossToken, "")
	f.mustCall(t, 404, "DELETE", base+"/source", f.bossToken, "")
}

func TestSourceRepositoryGone(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.bossPush(t, apptest.WorkTree(t, map[string]string{"agents/a.md": "a"}), f.repo)
	f.putSource(t, f.acme, nil)
	// (A later repository keeps SQLite from giving the deleted id again.)
	f.env.Repo(f.acme, "later")
	_, err := f.env.Q().ExecContext(context.Background(), `DELETE FROM repositories WHERE id = $1`, f.repo.ID)
	apptest.Must(t, "delete repository", err)

	var e apiError
	decode(t, f.mustCall(t, 404, "GET", base, f.bossToken, ""), &e)
	if !strings.Contains(e.Message, "Source repository not found") {
		t.Errorf("message %q", e.Message)
	}
	var src sourceAnswer
	decode(t, f.mustCall(t, 200, "GET", base+"/source", f.bossToken, ""), &src)
	if src.Organization == nil || src.Organization.Login != "acme" || src.Repository != nil {
		t.Fatalf("source without its repository: %+v", src)
	}

	// Made again under the same name, it is the source again.
	repo := f.env.Repo(f.acme, ".Service-Private")
	f.bossPush(t, apptest.WorkTree(t, map[string]string{"agents/again.md": "a"}), repo)
	if list, _ := f.listAgents(t, ""); names(list) != "again=agents/again.md" {
		t.Fatalf("recreated repository: %s", names(list))
	}
}

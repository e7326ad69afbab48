package e2e_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/reposettings"
)

// TestAutolinks creates, lists, reads and deletes autolink references
// through go-github; bad prefixes and templates and a taken prefix are
// 422s. (Who may: tag protection's test checks the admin rule both share.)
func TestAutolinks(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo")
	env.Repo(octo, "lib")
	c := env.Client(env.Token(octo, "repo"))

	a, resp, err := c.Repositories.CreateAutolink(ctx, "octo", "lib", github.CreateAutolinkRequest{KeyPrefix: "TICKET-",
		URLTemplate: "https://tracker.example.com/t/<num>", IsAlphanumeric: github.Ptr(false)})
	apptest.Must(t, "create", err)
	if resp.StatusCode != http.StatusCreated || a.GetKeyPrefix() != "TICKET-" || a.GetIsAlphanumeric() ||
		!strings.HasSuffix(resp.Header.Get("Location"), "/autolinks/"+github.Stringify(a.GetID())) {
		t.Fatalf("created %+v (%d, Location %s)", a, resp.StatusCode, resp.Header.Get("Location"))
	}
	b, _, err := c.Repositories.CreateAutolink(ctx, "octo", "lib", github.CreateAutolinkRequest{KeyPrefix: "JIRA-",
		URLTemplate: "https://jira.example.com/browse/JIRA-<num>"})
	apptest.Must(t, "create another", err)
	if !b.GetIsAlphanumeric() {
		t.Fatal("is_alphanumeric defaults to true")
	}
	for what, req := range map[string]github.CreateAutolinkRequest{
		"taken prefix":   {KeyPrefix: "ticket-", URLTemplate: "https://x.example.com/<num>"},
		"no <num>":       {KeyPrefix: "X-", URLTemplate: "https://x.example.com/"},
		"not http":       {KeyPrefix: "X-", URLTemplate: "ftp://x.example.com/<num>"},
		"space":          {KeyPrefix: "A B", URLTemplate: "https://x.example.com/<num>"},
		"missing prefix": {URLTemplate: "https://x.example.com/<num>"},
	} {
		if _, resp, err := c.Repositories.CreateAutolink(ctx, "octo", "lib", req); status(resp) != http.StatusUnprocessableEntity {
			t.Errorf("%s: %v", what, err)
		}
	}
	list, _, err := c.Repositories.ListAutolinks(ctx, "octo", "lib")
	apptest.Must(t, "list", err)
	if len(list) != 2 || list[0].GetID() != a.GetID() {
		t.Fatalf("list %+v", list)
	}
	got, _, err := c.Repositories.GetAutolink(ctx, "octo", "lib", b.GetID())
	apptest.Must(t, "get", err)
	if got.GetURLTemplate() != "https://jira.example.com/browse/JIRA-<num>" {
		t.Fatalf("got %+v", got)
	}
	_, err = c.Repositories.DeleteAutolink(ctx, "octo", "lib", a.GetID())
	apptest.Must(t, "delete", err)
	if _, resp, err := c.Repositories.GetAutolink(ctx, "octo", "lib", a.GetID()); status(resp) != http.StatusNotFound {
		t.Fatalf("deleted autolink: %v", err)
	}
	if resp, err := c.Repositories.DeleteAutolink(ctx, "octo", "lib", a.GetID()); status(resp) != http.StatusNotFound {
		t.Fatalf("deleting twice: %v", err)
	}
}

// TestTagProtection protects v* tags of a repository: a collaborator
// with push cannot push, move or delete a protected tag over git (other
// tags pass), an admin can; rules are listed, refused when invalid or
// taken, and deleted, after which the collaborator's push passes.
func TestTagProtection(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo, dev := env.User("octo"), env.User("dev")
	env.Repo(octo, "lib")
	ownerToken := env.Token(octo, "repo")
	c := env.Client(ownerToken)
	devToken := env.Token(dev, "repo")
	_, _, err := c.Repositories.AddCollaborator(ctx, "octo", "lib", "dev", &github.RepositoryAddCollaboratorOptions{Permission: "push"})
	apptest.Must(t, "invite dev", err)
	devGH := env.Client(devToken)
	invs, _, err := devGH.Users.ListInvitations(ctx, nil)
	apptest.Must(t, "invitations", err)
	_, err = devGH.Users.AcceptInvitation(ctx, invs[0].GetID())
	apptest.Must(t, "accept", err)

	work := apptest.WorkTree(t, map[string]string{"a.txt": "1\n"})
	ownerURL := env.GitURL("octo", "lib", "octo", ownerToken)
	devURL := env.GitURL("octo", "lib", "dev", devToken)
	apptest.Git(t, work, "push", "-q", ownerURL, "HEAD:refs/heads/main")

	rule, resp, err := c.Repositories.CreateTagProtection(ctx, "octo", "lib", "v*")
	apptest.Must(t, "protect v*", err)
	if resp.StatusCode != http.StatusCreated || rule.GetPattern() != "v*" {
		t.Fatalf("rule %+v", rule)
	}
	for _, bad := range []string{"v*", "", "[v"} {
		if _, resp, err := c.Repositories.CreateTagProtection(ctx, "octo", "lib", bad); status(resp) != http.StatusUnprocessableEntity {
			t.Errorf("pattern %q: %v", bad, err)
		}
	}
	if _, resp, err := devGH.Repositories.ListTagProtection(ctx, "octo", "lib"); status(resp) != http.StatusForbidden &&
		status(resp) != http.StatusNotFound {
		t.Fatalf("a collaborator with push lists the rules: %v", err)
	}

	apptest.Git(t, work, "tag", "v1.0")
	apptest.Git(t, work, "tag", "nightly")
	out, err := apptest.TryGit(t, work, "push", devURL, "refs/tags/v1.0")
	if err == nil || !strings.Contains(out, "protected tag") {
		t.Fatalf("dev pushed a protected tag: %s", out)
	}
	apptest.Git(t, work, "push", "-q", devURL, "refs/tags/nightly")
	apptest.Git(t, work, "push", "-q", ownerURL, "refs/tags/v1.0")
	if out, err := apptest.TryGit(t, work, "push", devURL, ":refs/tags/v1.0"); err == nil {
		t.Fatalf("dev deleted a protected tag: %s", out)
	}
	if resp, err := devGH.Git.DeleteRef(ctx, "octo", "lib", "tags/v1.0"); err == nil {
		t.Fatalf("dev deleted a protected tag through the API (%d)", status(resp))
	}

	list, _, err := c.Repositories.ListTagProtection(ctx, "octo", "lib")
	apptest.Must(t, "list", err)
	if len(list) != 1 || list[0].GetID() != rule.GetID() {
		t.Fatalf("rules %+v", list)
	}
	_, err = c.Repositories.DeleteTagProtection(ctx, "octo", "lib", rule.GetID())
	apptest.Must(t, "delete the rule", err)
	apptest.Git(t, work, "push", "-q", devURL, ":refs/tags/v1.0")
}

// TestProtects pins the patterns' globs.
func TestProtects(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		pattern, tag string
		want         bool
	}{{"v*", "v1.0", true}, {"v*", "release", false}, {"v*", "v1/rc", false}, {"*", "x", true}, {"v?.*", "v1.2", true}} {
		if got := reposettings.Protects(c.pattern, c.tag); got != c.want {
			t.Errorf("Protects(%q, %q) = %v", c.pattern, c.tag, got)
		}
	}
}

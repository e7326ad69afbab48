package graphql_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/repos"
	"forgeapi/internal/webhooks"
)

// TestGitHubCLIRepoEditRenameArchive runs gh 2.23's `repo edit`
// (description, homepage, topics, features: REST's PATCH and PUT
// .../topics), `repo rename` (PATCH) and `repo archive` (GraphQL's
// archiveRepository) against a server on --tls, and checks through REST
// and the repository webhook what each changed: an archived repository
// refuses pushes and issues until unarchiveRepository (gh 2.23 has no
// unarchive command) makes it writable again.
func TestGitHubCLIRepoEditRenameArchive(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithTLS(), apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	octo := env.User("octo")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo", "read:org", "admin:repo_hook")
	run, host := ghCLI(t, env, token)
	rest := env.Client(token)
	ctx := apptest.Ctx()
	rc := apptest.NewReceiver(t, "s")
	_, _, err := rest.Repositories.CreateHook(ctx, "octo", "hello", &github.Hook{Events: []string{"repository"},
		Config: &github.HookConfig{URL: github.Ptr(rc.URL), ContentType: github.Ptr("json"), Secret: github.Ptr("s")}})
	apptest.Must(t, "hook", err)
	get := func(name string) *github.Repository {
		t.Helper()
		r, _, err := rest.Repositories.Get(ctx, "octo", name)
		apptest.Must(t, "REST repository", err)
		return r
	}

	run("repo", "edit", host+"/octo/hello", "--description", "Says hello", "--homepage", "https://hello.example",
		"--add-topic", "greeting", "--add-topic", "go", "--enable-wiki=false", "--enable-projects=false")
	r := get("hello")
	if r.GetDescription() != "Says hello" || r.GetHomepage() != "https://hello.example" || r.GetHasWiki() || r.GetHasProjects() ||
		!slices.Equal(r.Topics, []string{"greeting", "go"}) {
		t.Errorf("gh repo edit: %q %q wiki %v projects %v topics %v", r.GetDescription(), r.GetHomepage(), r.GetHasWiki(), r.GetHasProjects(), r.Topics)
	}
	run("repo", "edit", host+"/octo/hello", "--remove-topic", "go")
	if r := get("hello"); !slices.Equal(r.Topics, []string{"greeting"}) {
		t.Errorf("gh repo edit --remove-topic: %v", r.Topics)
	}
	if out := run("repo", "view", host+"/octo/hello"); !strings.Contains(out, "description:\tSays hello\n") {
		t.Errorf("gh repo view after the edit:\n%s", out)
	}

	run("repo", "rename", "hi", "--repo", host+"/octo/hello", "--yes")
	if r := get("hi"); r.GetName() != "hi" || r.GetFullName() != "octo/hi" {
		t.Errorf("gh repo rename: %s", r.GetFullName())
	}

	run("repo", "archive", host+"/octo/hi", "--yes")
	if !get("hi").GetArchived() {
		t.Fatal("gh repo archive: not archived")
	}
	if out := run("repo", "view", host+"/octo/hi", "--json", "isArchived"); strings.TrimSpace(out) != `{"isArchived":true}` {
		t.Errorf("gh repo view --json isArchived: %s", out)
	}
	if _, resp, err := rest.Issues.Create(ctx, "octo", "hi", github.CreateIssueRequest{Title: "Hello?"}); err == nil ||
		resp.StatusCode != http.StatusForbidden || !strings.Contains(err.Error(), "Repository was archived so is read-only.") {
		t.Errorf("an issue in an archived repository: %v", err)
	}
	dir := apptest.WorkTree(t, map[string]string{"README.md": "# hi\n"})
	out, err := apptest.TryGit(t, dir, "-c", "http.sslCAInfo="+env.Main.CAFile(), "push", "-q", env.GitURL("octo", "hi", "octo", token), "main")
	if err == nil || !strings.Contains(out, "This repository was archived so it is read-only.") {
		t.Errorf("a push to an archived repository: %v\n%s", err, out)
	}
	// Stars stay the user's own.
	if _, err := rest.Activity.Star(ctx, "octo", "hi"); err != nil {
		t.Errorf("starring an archived repository: %v", err)
	}

	var got struct {
		UnarchiveRepository struct{ Repository struct{ IsArchived bool } }
	}
	gqlData(t, env, token, `mutation($id: ID!) { unarchiveRepository(input: {repositoryId: $id}) { repository { isArchived } } }`,
		map[string]any{"id": r.GetNodeID()}, &got)
	if got.UnarchiveRepository.Repository.IsArchived || get("hi").GetArchived() {
		t.Error("unarchiveRepository: still archived")
	}
	if _, _, err := rest.Issues.Create(ctx, "octo", "hi", github.CreateIssueRequest{Title: "Hello?"}); err != nil {
		t.Errorf("an issue once unarchived: %v", err)
	}
	rc.WaitFor(t, apptest.EventAction, "repository edited", "repository renamed", "repository archived", "repository unarchived")
}

// TestArchiveRepositoryNeedsAdmin: archiveRepository asks what PATCH
// /repos/{owner}/{repo} asks: admin, and Administration write of a
// fine-grained token.
func TestArchiveRepositoryNeedsAdmin(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo, bob := env.User("octo"), env.User("bob")
	hello := env.Repo(octo, "hello")
	token := env.Token(octo, "repo")
	inv, _, err := env.Client(token).Repositories.AddCollaborator(apptest.Ctx(), "octo", "hello", "bob",
		&github.RepositoryAddCollaboratorOptions{Permission: "push"})
	apptest.Must(t, "invite", err)
	bobToken := env.Token(bob, "repo")
	_, err = env.Client(bobToken).Users.AcceptInvitation(apptest.Ctx(), inv.GetID())
	apptest.Must(t, "accept", err)
	const archive = `mutation($id: ID!) { archiveRepository(input: {repositoryId: $id}) { repository { isArchived } } }`
	vars := map[string]any{"id": repoNodeID(t, env, token, "hello")}
	for name, tok := range map[string]string{
		"a pusher":                      bobToken,
		"Administration read":           env.FineGrainedToken(octo, octo, []*repos.Repository{hello}, "administration:read"),
		"a token without repo or admin": env.Token(octo, "read:org"),
	} {
		if r := post(t, env, tok, archive, vars); len(r.Errors) != 1 || r.Errors[0].Type != "FORBIDDEN" {
			t.Errorf("%s: %+v", name, r.Errors)
		}
	}
	fine := env.FineGrainedToken(octo, octo, []*repos.Repository{hello}, "administration:write")
	if r := post(t, env, fine, archive, vars); len(r.Errors) != 0 || string(r.Data["archiveRepository"]) != `{"repository":{"isArchived":true}}` {
		t.Errorf("Administration write: %+v %s", r.Errors, r.Data["archiveRepository"])
	}
}

// TestGitHubCLIRepoSync runs `gh repo sync OWNER/FORK` for a fork
// behind its parent: gh 2.23 asks GraphQL for the fork and its parent,
// then POST .../merge-upstream, which fast-forwards the fork's default
// branch to the parent's.
func TestGitHubCLIRepoSync(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithTLS())
	octo, bob := env.User("octo"), env.User("bob")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo")
	dir := apptest.WorkTree(t, map[string]string{"README.md": "# hello\n"})
	remote := env.GitURL("octo", "hello", "octo", token)
	apptest.Git(t, dir, "-c", "http.sslCAInfo="+env.Main.CAFile(), "push", "-q", remote, "main")
	bobToken := env.Token(bob, "repo", "read:org")
	if resp, body := env.DoJSON("POST", "/repos/octo/hello/forks", bobToken, `{}`); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("fork: %d %s", resp.StatusCode, body)
	}
	apptest.Commit(t, dir, "Say more", map[string]string{"more.txt": "more\n"})
	apptest.Git(t, dir, "-c", "http.sslCAInfo="+env.Main.CAFile(), "push", "-q", remote, "main")
	head := strings.TrimSpace(apptest.Git(t, dir, "rev-parse", "HEAD"))

	run, host := ghCLI(t, env, bobToken)
	run("repo", "sync", host+"/bob/hello")
	b, _, err := env.Client(bobToken).Repositories.GetBranch(apptest.Ctx(), "bob", "hello", "main", 0)
	apptest.Must(t, "the fork's main", err)
	if b.GetCommit().GetSHA() != head {
		t.Errorf("gh repo sync: the fork's main is %s, want the parent's %s", b.GetCommit().GetSHA(), head)
	}
}

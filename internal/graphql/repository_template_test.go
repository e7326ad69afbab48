package graphql_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apptest"
)

// cloneTemplate is the mutation gh repo create --template sends.
const cloneTemplate = `mutation CloneTemplateRepository($input: CloneTemplateRepositoryInput!) {
	cloneTemplateRepository(input: $input) { clientMutationId repository { id name owner { login } url isPrivate } } }`

// templateFixture makes octo/tmpl a template whose main branch holds
// README.md and whose branch extra another commit, and returns octo's
// classic token.
func templateFixture(t *testing.T, env *apptest.Env, octo *accounts.Account, gitArgs ...string) string {
	t.Helper()
	env.Repo(octo, "tmpl")
	token := env.Token(octo, "repo", "read:org")
	work := apptest.WorkTree(t, map[string]string{"README.md": "template\n"})
	apptest.Git(t, work, "branch", "-M", "main")
	apptest.Git(t, work, append(gitArgs, "push", "-q", env.GitURL("octo", "tmpl", "octo", token), "main", "main:extra")...)
	if _, _, err := env.Client(token).Repositories.Edit(apptest.Ctx(), "octo", "tmpl", &github.Repository{IsTemplate: github.Ptr(true)}); err != nil {
		t.Fatalf("make octo/tmpl a template: %v", err)
	}
	return token
}

// TestCloneTemplateRepository runs cloneTemplateRepository for the
// viewer and for an organization (with every branch) and checks through
// REST what POST .../generate makes: the template's files in a new
// repository whose template_repository is the template, the branches
// asked, a PushEvent; and that what that route refuses is refused.
func TestCloneTemplateRepository(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo, bob := env.User("octo"), env.User("bob")
	acme := env.Org("acme", octo)
	plain := env.Repo(octo, "plain")
	token := templateFixture(t, env, octo)
	rest := env.Client(token)
	ctx := apptest.Ctx()
	tmplID := nodeIDOf(t, env, token, "octo/tmpl")

	var out struct {
		CloneTemplateRepository struct {
			ClientMutationID string
			Repository       struct {
				ID, Name, URL string
				IsPrivate     bool
				Owner         struct{ Login string }
			}
		}
	}
	gqlData(t, env, token, cloneTemplate, map[string]any{"input": map[string]any{"repositoryId": tmplID, "name": "gen",
		"ownerId": accounts.NodeID(octo), "visibility": "PUBLIC", "description": "generated", "clientMutationId": "c1"}}, &out)
	gen, _, err := rest.Repositories.Get(ctx, "octo", "gen")
	apptest.Must(t, "REST get octo/gen", err)
	if c := out.CloneTemplateRepository; c.ClientMutationID != "c1" || c.Repository.ID != gen.GetNodeID() || c.Repository.URL != gen.GetHTMLURL() ||
		c.Repository.IsPrivate || gen.GetTemplateRepository().GetFullName() != "octo/tmpl" || gen.GetDescription() != "generated" ||
		gen.GetDefaultBranch() != "main" {
		t.Fatalf("cloneTemplateRepository: %+v\nREST: %+v", c, gen)
	}
	readme, _, _, err := rest.Repositories.GetContents(ctx, "octo", "gen", "README.md", nil)
	apptest.Must(t, "README.md of octo/gen", err)
	if text, _ := readme.GetContent(); text != "template\n" {
		t.Errorf("README.md of octo/gen: %q", text)
	}
	branches, _, err := rest.Repositories.ListBranches(ctx, "octo", "gen", nil)
	apptest.Must(t, "branches", err)
	if len(branches) != 1 {
		t.Errorf("octo/gen has %d branches, want the default one", len(branches))
	}
	evs, _, err := rest.Activity.ListRepositoryEvents(ctx, "octo", "gen", nil)
	apptest.Must(t, "events", err)
	if len(evs) == 0 || !strings.Contains(evs[0].GetType()+" "+evs[len(evs)-1].GetType(), "PushEvent") {
		t.Errorf("no PushEvent in octo/gen's feed: %d events", len(evs))
	}

	gqlData(t, env, token, cloneTemplate, map[string]any{"input": map[string]any{"repositoryId": tmplID, "name": "gen-all",
		"ownerId": accounts.NodeID(acme), "visibility": "INTERNAL", "includeAllBranches": true}}, &out)
	if c := out.CloneTemplateRepository.Repository; c.Owner.Login != "acme" || !c.IsPrivate {
		t.Fatalf("for acme: %+v", c)
	}
	branches, _, err = rest.Repositories.ListBranches(ctx, "acme", "gen-all", nil)
	apptest.Must(t, "acme/gen-all's branches", err)
	if len(branches) != 2 {
		t.Errorf("acme/gen-all has %d branches, want main and extra", len(branches))
	}

	bobToken := env.Token(bob, "repo")
	secret := env.Repo(octo, "secret", apptest.RepoOpts{Private: true})
	refused := map[string]struct {
		token string
		input map[string]any
		typ   string
	}{
		"not a template":       {token, map[string]any{"repositoryId": nodeIDOf(t, env, token, plain.FullName()), "ownerId": accounts.NodeID(octo)}, "UNPROCESSABLE"},
		"a name taken":         {token, map[string]any{"name": "gen"}, "UNPROCESSABLE"},
		"a hidden template":    {bobToken, map[string]any{"repositoryId": nodeIDOf(t, env, token, secret.FullName()), "ownerId": accounts.NodeID(bob)}, "NOT_FOUND"},
		"for another user":     {bobToken, map[string]any{"ownerId": accounts.NodeID(octo)}, "FORBIDDEN"},
		"in an organization":   {bobToken, map[string]any{"ownerId": accounts.NodeID(acme)}, "UNPROCESSABLE"},
		"an unknown owner":     {bobToken, map[string]any{"ownerId": "O_nothing"}, "NOT_FOUND"},
		"private without repo": {env.Token(octo, "public_repo"), map[string]any{"visibility": "PRIVATE"}, "FORBIDDEN"},
		"fine-grained without Administration": {env.FineGrainedToken(octo, octo, apptest.AllRepos, "contents:write"),
			map[string]any{}, "FORBIDDEN"},
	}
	for name, c := range refused {
		input := map[string]any{"repositoryId": tmplID, "name": "refused", "ownerId": accounts.NodeID(octo), "visibility": "PUBLIC"}
		for k, v := range c.input {
			input[k] = v
		}
		r := post(t, env, c.token, cloneTemplate, map[string]any{"input": input})
		if len(r.Errors) != 1 || r.Errors[0].Type != c.typ || string(r.Data["cloneTemplateRepository"]) != "null" {
			t.Errorf("%s: %+v, want %s", name, r, c.typ)
		}
	}
	for _, full := range []string{"octo/refused", "bob/refused", "acme/refused"} {
		if resp, _ := env.DoJSON("GET", "/repos/"+full, token, ""); resp.StatusCode != http.StatusNotFound {
			t.Errorf("a refused clone made %s: %d", full, resp.StatusCode)
		}
	}
}

// nodeIDOf is the node_id REST shows of a repository.
func nodeIDOf(t *testing.T, env *apptest.Env, token, fullName string) string {
	t.Helper()
	owner, name, _ := strings.Cut(fullName, "/")
	repo, _, err := env.Client(token).Repositories.Get(apptest.Ctx(), owner, name)
	apptest.Must(t, "REST get "+fullName, err)
	return repo.GetNodeID()
}

// TestGitHubCLIRepoCreateFromTemplate runs `gh repo create NAME
// --template OWNER/TEMPLATE --public` on a server on --tls: gh resolves
// the template and the viewer through GraphQL and runs
// cloneTemplateRepository; REST shows the repository made of it.
func TestGitHubCLIRepoCreateFromTemplate(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithTLS())
	octo, bob := env.User("octo"), env.User("bob")
	token := templateFixture(t, env, octo, "-c", "http.sslCAInfo="+env.Main.CAFile())
	bobToken := env.Token(bob, "repo", "read:org")
	run, _ := ghCLI(t, env, bobToken)
	out := run("repo", "create", "made", "--template", "octo/tmpl", "--public")
	if !strings.Contains(out, env.URL+"/bob/made") {
		t.Errorf("gh repo create made --template octo/tmpl --public:\n%s", out)
	}
	made, _, err := env.Client(token).Repositories.Get(apptest.Ctx(), "bob", "made")
	apptest.Must(t, "REST get bob/made", err)
	if made.GetPrivate() || made.GetTemplateRepository().GetFullName() != "octo/tmpl" || made.GetDefaultBranch() != "main" {
		t.Errorf("bob/made: %+v", made)
	}
}

package graphql_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apptest"
	"forgeapi/internal/testwait"
	"forgeapi/internal/webhooks"
)

// createRepository is the mutation gh repo create sends.
const createRepository = `mutation RepositoryCreate($input: CreateRepositoryInput!) {
	createRepository(input: $input) { clientMutationId repository { id name owner { login } url isPrivate visibility description } } }`

// TestCreateRepository runs createRepository for the viewer and for an
// organization, and checks through REST that each repository exists as
// asked, that the organization's hook got "repository created", its
// audit log repo.create and the feed a CreateEvent, and that what REST's creation routes refuse is
// refused: a private repository without the repo scope, an organization
// the caller is not a member of, a fine-grained token without
// Administration write or made for another account, an installation's
// token for a user, a name taken. template: true makes a template.
func TestCreateRepository(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	octo, bob, hubot := env.User("octo"), env.User("bob"), env.User("hubot")
	acme := env.Org("acme", octo, hubot)
	token := env.Token(octo, "repo", "admin:org_hook")
	rest := env.Client(token)
	ctx := apptest.Ctx()
	rc := apptest.NewReceiver(t, "s")
	_, _, err := rest.Organizations.CreateHook(ctx, "acme", &github.Hook{Name: github.Ptr("web"), Events: []string{"repository"},
		Config: &github.HookConfig{URL: github.Ptr(rc.URL), ContentType: github.Ptr("json"), Secret: github.Ptr("s")}})
	apptest.Must(t, "org hook", err)

	var out struct {
		CreateRepository struct {
			ClientMutationID string
			Repository       struct {
				ID, Name, URL, Visibility string
				Description               *string
				IsPrivate                 bool
				Owner                     struct{ Login string }
			}
		}
	}
	gqlData(t, env, token, createRepository, map[string]any{"input": map[string]any{"name": "made", "visibility": "PUBLIC",
		"description": "made through GraphQL", "homepageUrl": "https://example.com", "hasIssuesEnabled": true, "clientMutationId": "c1"}}, &out)
	made, _, err := rest.Repositories.Get(ctx, "octo", "made")
	apptest.Must(t, "REST get the user's repository", err)
	if c := out.CreateRepository; c.ClientMutationID != "c1" || c.Repository.ID != made.GetNodeID() || c.Repository.URL != made.GetHTMLURL() ||
		c.Repository.Owner.Login != "octo" || c.Repository.IsPrivate || made.GetPrivate() || made.GetDescription() != "made through GraphQL" {
		t.Fatalf("createRepository for the viewer: %+v\nREST: %+v", c, made)
	}

	gqlData(t, env, token, createRepository, map[string]any{"input": map[string]any{"name": "rockets", "visibility": "PRIVATE",
		"ownerId": accounts.NodeID(acme)}}, &out)
	rockets, _, err := rest.Repositories.Get(ctx, "acme", "rockets")
	apptest.Must(t, "REST get the organization's repository", err)
	if c := out.CreateRepository.Repository; c.ID != rockets.GetNodeID() || c.Owner.Login != "acme" || !c.IsPrivate || c.Visibility != "PRIVATE" ||
		!rockets.GetPrivate() || c.Description != nil {
		t.Fatalf("createRepository for an organization: %+v\nREST: %+v", c, rockets)
	}
	rc.WaitFor(t, func(d apptest.Delivery) string {
		e, ok := d.Parsed.(*github.RepositoryEvent)
		if !ok {
			return ""
		}
		return e.GetAction() + " " + e.GetRepo().GetFullName() + " by " + e.GetSender().GetLogin()
	}, "created acme/rockets by octo")
	audit := env.Token(octo, "read:audit_log")
	testwait.Until(t, "the organization's audit entry", func() bool {
		_, body := env.DoJSON("GET", "/orgs/acme/audit-log?phrase=action:repo.create", audit, "")
		var entries []struct{ Action, Repo, Actor string }
		return json.Unmarshal(body, &entries) == nil && len(entries) == 1 && entries[0].Repo == "acme/rockets" && entries[0].Actor == "octo"
	})
	feed, _, err := rest.Activity.ListEventsPerformedByUser(ctx, "octo", false, nil)
	apptest.Must(t, "octo's events", err)
	var created []string
	for _, e := range feed {
		if e.GetType() == "CreateEvent" {
			created = append(created, e.GetRepo().GetName())
		}
	}
	if strings.Join(created, " ") != "acme/rockets octo/made" {
		t.Errorf("CreateEvents: %v, want acme/rockets and octo/made", created)
	}

	refused := map[string]struct {
		token string
		input map[string]any
		typ   string
	}{
		"private without repo":            {env.Token(octo, "public_repo"), map[string]any{"name": "p", "visibility": "PRIVATE"}, "FORBIDDEN"},
		"a stranger for the organization": {env.Token(bob, "repo"), map[string]any{"name": "p", "visibility": "PUBLIC", "ownerId": accounts.NodeID(acme)}, "NOT_FOUND"},
		"another user":                    {env.Token(bob, "repo"), map[string]any{"name": "p", "visibility": "PUBLIC", "ownerId": accounts.NodeID(octo)}, "FORBIDDEN"},
		"fine-grained without Administration": {env.FineGrainedToken(octo, octo, apptest.AllRepos, "contents:write"),
			map[string]any{"name": "p", "visibility": "PUBLIC"}, "FORBIDDEN"},
		"fine-grained made for the organization, for the user": {env.FineGrainedToken(octo, acme, apptest.AllRepos, "administration:write"),
			map[string]any{"name": "p", "visibility": "PUBLIC"}, "FORBIDDEN"},
		"a name taken":  {token, map[string]any{"name": "made", "visibility": "PUBLIC"}, "UNPROCESSABLE"},
		"a bad name":    {token, map[string]any{"name": "", "visibility": "PUBLIC"}, "UNPROCESSABLE"},
		"an unknown id": {token, map[string]any{"name": "p", "visibility": "PUBLIC", "ownerId": "O_nothing"}, "NOT_FOUND"},
	}
	for name, c := range refused {
		r := post(t, env, c.token, createRepository, map[string]any{"input": c.input})
		if len(r.Errors) != 1 || r.Errors[0].Type != c.typ || string(r.Data["createRepository"]) != "null" {
			t.Errorf("%s: %+v, want %s", name, r, c.typ)
		}
	}
	if _, resp, _ := rest.Repositories.Get(ctx, "octo", "p"); apptest.ResponseStatus(resp) != 404 {
		t.Errorf("a refused creation made octo/p: %d", apptest.ResponseStatus(resp))
	}

	// template: true makes a template, as REST's is_template.
	gqlData(t, env, token, createRepository, map[string]any{"input": map[string]any{"name": "tmpl", "visibility": "PUBLIC",
		"template": true}}, &out)
	if tmpl, _, err := rest.Repositories.Get(ctx, "octo", "tmpl"); err != nil || !tmpl.GetIsTemplate() {
		t.Errorf("template: true: %v %+v", err, tmpl)
	}

	// A fine-grained token made for the organization with Administration
	// write creates there, as POST /orgs/{org}/repos lets it.
	orgToken := env.FineGrainedToken(octo, acme, apptest.AllRepos, "administration:write")
	gqlData(t, env, orgToken, createRepository, map[string]any{"input": map[string]any{"name": "fuel", "visibility": "INTERNAL",
		"ownerId": accounts.NodeID(acme)}}, &out)
	if c := out.CreateRepository.Repository; c.Name != "fuel" || !c.IsPrivate {
		t.Errorf("fine-grained for the organization: %+v", c)
	}
}

// TestGitHubCLIRepoCreate runs `gh repo create NAME --public` for the
// user and `gh repo create ORG/NAME --private` for an organization on a
// server on --tls, and checks what gh prints and, through REST, the
// repositories made.
func TestGitHubCLIRepoCreate(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithTLS())
	octo := env.User("octo")
	env.Org("acme", octo)
	token := env.Token(octo, "repo", "read:org")
	run, _ := ghCLI(t, env, token)
	rest := env.Client(token)
	ctx := apptest.Ctx()

	out := run("repo", "create", "made", "--public", "--description", "made by gh")
	if !strings.Contains(out, env.URL+"/octo/made") {
		t.Errorf("gh repo create made --public:\n%s", out)
	}
	made, _, err := rest.Repositories.Get(ctx, "octo", "made")
	apptest.Must(t, "REST get octo/made", err)
	if made.GetPrivate() || made.GetDescription() != "made by gh" {
		t.Errorf("octo/made: %+v", made)
	}

	out = run("repo", "create", "acme/rockets", "--private")
	if !strings.Contains(out, env.URL+"/acme/rockets") {
		t.Errorf("gh repo create acme/rockets --private:\n%s", out)
	}
	rockets, _, err := rest.Repositories.Get(ctx, "acme", "rockets")
	apptest.Must(t, "REST get acme/rockets", err)
	if !rockets.GetPrivate() {
		t.Errorf("acme/rockets is not private: %+v", rockets)
	}
}

// TestGitHubCLIRepoFork runs `gh repo fork HOST/OWNER/REPO
// --clone=false` on a server on --tls: gh forks a repository it is
// given through REST's POST /repos/{owner}/{repo}/forks alone (the
// platform has no fork mutation); REST shows the fork.
func TestGitHubCLIRepoFork(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithTLS())
	octo, bob := env.User("octo"), env.User("bob")
	env.Repo(octo, "hello")
	token := env.Token(bob, "repo", "read:org")
	run, host := ghCLI(t, env, token)
	run("repo", "fork", host+"/octo/hello", "--clone=false") // prints nothing when not on a terminal
	fork, _, err := env.Client(token).Repositories.Get(apptest.Ctx(), "bob", "hello")
	apptest.Must(t, "REST get bob/hello", err)
	if !fork.GetFork() || fork.GetParent().GetFullName() != "octo/hello" {
		t.Errorf("bob/hello: %+v", fork)
	}
}

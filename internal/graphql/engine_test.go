package graphql_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/shurcooL/githubv4"
	"golang.org/x/oauth2"

	"forgeapi/internal/apptest"
	"forgeapi/internal/repos"
	"forgeapi/internal/wire"
)

// client is a githubv4 client of the server for the token: typed
// queries against the platform's schema, as integrations make them,
// their responses validated as every apptest client's.
func client(env *apptest.Env, token string) *githubv4.Client {
	hc := &http.Client{Transport: &oauth2.Transport{Source: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: token}), Base: env.Transport()}}
	return githubv4.NewEnterpriseClient(env.URL+"/api/graphql", hc)
}

// TestTypedQueries runs githubv4 queries of the viewer, a user, an
// organization, a repository with the fields gh repo view asks, and
// node(id:) for each type served, and checks them against REST's ids.
func TestTypedQueries(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo := env.User("octo")
	acme := env.Org("acme", octo)
	hello := env.Repo(octo, "hello", apptest.RepoOpts{Description: "says hello"})
	fork := env.Repo(acme, "hello-fork", apptest.RepoOpts{ForkOf: hello})
	token := env.Token(octo, "repo", "read:org")
	gh := client(env, token)
	ctx := context.Background()

	var q struct {
		Viewer struct {
			Login      string
			DatabaseID int64
			ID         githubv4.ID
			URL        githubv4.URI
			IsViewer   bool
		}
		User struct {
			Login     string
			AvatarURL githubv4.URI `graphql:"avatarUrl(size: 40)"`
		} `graphql:"user(login: $login)"`
		Organization struct {
			Login string
			ID    githubv4.ID
		} `graphql:"organization(login: $org)"`
		Repository struct {
			ID               githubv4.ID
			DatabaseID       int64
			Name             string
			NameWithOwner    string
			Description      string
			URL              githubv4.URI
			SSHURL           string
			IsPrivate        bool
			IsFork           bool
			IsInOrganization bool
			Visibility       githubv4.RepositoryVisibility
			ViewerPermission githubv4.RepositoryPermission
			HasIssuesEnabled bool
			ForkCount        int
			StargazerCount   int
			CreatedAt        githubv4.DateTime
			PushedAt         githubv4.DateTime
			DefaultBranchRef *struct{ Name string }
			Owner            struct {
				Login string
				User  struct{ Email string } `graphql:"... on User"`
			}
			Parent *struct{ NameWithOwner string }
		} `graphql:"repository(owner: $org, name: $repo)"`
	}
	vars := map[string]any{"login": githubv4.String("octo"), "org": githubv4.String("acme"), "repo": githubv4.String("hello-fork")}
	apptest.Must(t, "query", gh.Query(ctx, &q, vars))
	if q.Viewer.Login != "octo" || q.Viewer.DatabaseID != octo.ID || q.Viewer.ID != wire.NodeID("U", octo.ID) ||
		q.Viewer.URL.String() != env.URL+"/octo" || !q.Viewer.IsViewer {
		t.Errorf("viewer: %+v", q.Viewer)
	}
	if q.User.Login != "octo" || !strings.HasSuffix(q.User.AvatarURL.String(), "&s=40") {
		t.Errorf("user: %+v", q.User)
	}
	if q.Organization.ID != wire.NodeID("O", acme.ID) {
		t.Errorf("organization: %+v", q.Organization)
	}
	restFork, _, err := env.Client(token).Repositories.Get(apptest.Ctx(), "acme", "hello-fork")
	apptest.Must(t, "REST repository", err)
	r := q.Repository
	if r.ID != restFork.GetNodeID() || r.DatabaseID != fork.ID || r.NameWithOwner != "acme/hello-fork" || r.URL.String() != restFork.GetHTMLURL() ||
		r.SSHURL != restFork.GetSSHURL() || !r.IsFork || !r.IsInOrganization || r.IsPrivate || r.Visibility != githubv4.RepositoryVisibilityPublic ||
		r.ViewerPermission != githubv4.RepositoryPermissionAdmin || !r.HasIssuesEnabled || r.DefaultBranchRef != nil ||
		r.Owner.Login != "acme" || r.Parent == nil || r.Parent.NameWithOwner != "octo/hello" ||
		!r.CreatedAt.Equal(restFork.GetCreatedAt().Time) || !r.PushedAt.Equal(restFork.GetPushedAt().Time) {
		t.Errorf("repository: %+v\nREST: %+v", r, restFork)
	}

	// node(id:) round trip for each type.
	for _, id := range []string{wire.NodeID("U", octo.ID), wire.NodeID("O", acme.ID), wire.NodeID("R", hello.ID)} {
		var n struct {
			Node struct {
				ID         githubv4.ID
				Typename   string                `graphql:"__typename"`
				Repository struct{ Name string } `graphql:"... on Repository"`
			} `graphql:"node(id: $id)"`
		}
		apptest.Must(t, "node", gh.Query(ctx, &n, map[string]any{"id": githubv4.ID(id)}))
		if n.Node.ID != id {
			t.Errorf("node(%s): %+v", id, n.Node)
		}
	}
	var ns struct {
		Nodes []struct {
			Typename string `graphql:"__typename"`
		} `graphql:"nodes(ids: $ids)"`
	}
	apptest.Must(t, "nodes", gh.Query(ctx, &ns, map[string]any{"ids": []githubv4.ID{wire.NodeID("R", hello.ID), wire.NodeID("O", acme.ID)}}))
	if len(ns.Nodes) != 2 || ns.Nodes[0].Typename != "Repository" || ns.Nodes[1].Typename != "Organization" {
		t.Errorf("nodes: %+v", ns.Nodes)
	}

	var rl struct {
		RateLimit struct{ Limit, Remaining, Used, Cost int }
	}
	apptest.Must(t, "rateLimit", gh.Query(ctx, &rl, nil))
	if rl.RateLimit.Cost != 1 || rl.RateLimit.Limit == 0 || rl.RateLimit.Remaining+rl.RateLimit.Used != rl.RateLimit.Limit {
		t.Errorf("rateLimit: %+v", rl.RateLimit)
	}
}

// TestRepositoriesConnection pages repositoryOwner.repositories forward
// and backward, as gh repo list does, and counts only what the caller
// sees.
func TestRepositoriesConnection(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo, bob := env.User("octo"), env.User("bob")
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		env.Repo(octo, name, apptest.RepoOpts{Private: name == "c"})
	}
	type page struct {
		RepositoryOwner struct {
			Repositories struct {
				TotalCount int
				Nodes      []struct{ Name string }
				Edges      []struct{ Cursor string }
				PageInfo   struct {
					HasNextPage, HasPreviousPage bool
					StartCursor, EndCursor       githubv4.String
				}
			} `graphql:"repositories(first: $first, after: $after, ownerAffiliations: OWNER, orderBy: {field: NAME, direction: ASC})"`
		} `graphql:"repositoryOwner(login: \"octo\")"`
	}
	list := func(token string) (names []string, total int) {
		t.Helper()
		var after *githubv4.String
		for {
			var p page
			apptest.Must(t, "page", client(env, token).Query(context.Background(), &p, map[string]any{"first": githubv4.Int(2), "after": after}))
			conn := p.RepositoryOwner.Repositories
			for _, n := range conn.Nodes {
				names = append(names, n.Name)
			}
			if len(conn.Edges) != len(conn.Nodes) || conn.PageInfo.HasPreviousPage != (after != nil) ||
				len(conn.Edges) > 0 && conn.Edges[len(conn.Edges)-1].Cursor != string(conn.PageInfo.EndCursor) {
				t.Fatalf("page after %v: %+v", after, conn)
			}
			if !conn.PageInfo.HasNextPage {
				return names, conn.TotalCount
			}
			after = &conn.PageInfo.EndCursor
		}
	}
	if names, total := list(env.Token(octo, "repo")); !slices.Equal(names, []string{"a", "b", "c", "d", "e"}) || total != 5 {
		t.Errorf("owner: %v (%d)", names, total)
	}
	if names, total := list(env.Token(bob, "repo")); !slices.Equal(names, []string{"a", "b", "d", "e"}) || total != 4 {
		t.Errorf("stranger: %v (%d)", names, total)
	}
	r := post(t, env, env.Token(octo, "repo"), `{ viewer { repositories(last: 2) { nodes { name } pageInfo { hasPreviousPage } } } }`, nil)
	if len(r.Errors) != 0 || string(r.Data["viewer"]) != `{"repositories":{"nodes":[{"name":"d"},{"name":"e"}],"pageInfo":{"hasPreviousPage":true}}}` {
		t.Errorf("last 2: %+v %s", r, r.Data["viewer"])
	}

	// Affiliations: bob owns mine and is a member of acme, which owns
	// tools (private).
	env.Repo(bob, "mine")
	acme := env.Org("acme", octo, bob)
	env.Repo(acme, "tools", apptest.RepoOpts{Private: true})
	bobToken := env.Token(bob, "repo", "read:org")
	for q, want := range map[string]string{
		`{ viewer { repositories(first: 10) { nodes { nameWithOwner } } } }`:                                                                   `["bob/mine"]`,
		`{ viewer { repositories(first: 10, ownerAffiliations: [ORGANIZATION_MEMBER]) { nodes { nameWithOwner } } } }`:                         `["acme/tools"]`,
		`{ viewer { repositories(first: 10, ownerAffiliations: [OWNER, ORGANIZATION_MEMBER]) { nodes { nameWithOwner } } } }`:                  `["bob/mine","acme/tools"]`,
		`{ viewer: organization(login: "acme") { repositories(first: 10, affiliations: [ORGANIZATION_MEMBER]) { nodes { nameWithOwner } } } }`: `["acme/tools"]`,
		`{ viewer: organization(login: "acme") { repositories(first: 10, affiliations: [OWNER]) { nodes { nameWithOwner } } } }`:               `[]`,
	} {
		r := post(t, env, bobToken, q, nil)
		var got struct {
			Repositories struct {
				Nodes []struct{ NameWithOwner string }
			}
		}
		names := []string{}
		if len(r.Errors) == 0 && json.Unmarshal(r.Data["viewer"], &got) == nil {
			for _, n := range got.Repositories.Nodes {
				names = append(names, n.NameWithOwner)
			}
		}
		if list, _ := json.Marshal(names); string(list) != want {
			t.Errorf("%s: %v %s, want %s", q, r.Errors, r.Data["viewer"], want)
		}
	}

	// (Missing and excessive page sizes are refused before the query
	// runs: TestQueryLimits.)
	q := `{ viewer { repositories(first: 1, after: "nope") { totalCount } } }`
	if r := post(t, env, env.Token(octo, "repo"), q, nil); len(r.Errors) != 1 || r.Errors[0].Type != "INVALID_ARGUMENTS" {
		t.Errorf("%s: %+v, want INVALID_ARGUMENTS", q, r)
	}
}

// TestVisibilityAndErrors: a private repository is NOT_FOUND, with the
// platform's message, to another user and to a fine-grained token that
// does not select it, and so is its node id; a field not served is a
// validation error naming it; introspection answers from the served
// schema.
func TestVisibilityAndErrors(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo, bob := env.User("octo"), env.User("bob")
	secret := env.Repo(octo, "secret", apptest.RepoOpts{Private: true})
	other := env.Repo(octo, "other", apptest.RepoOpts{Private: true})
	const q = `{ repository(owner: "octo", name: "secret") { name } }`
	if r := post(t, env, env.Token(octo, "repo"), q, nil); len(r.Errors) != 0 || string(r.Data["repository"]) != `{"name":"secret"}` {
		t.Fatalf("owner: %+v", r)
	}
	// Each caller sees octo's repositories but secret: none, or other.
	for _, c := range []struct {
		name, token string
		sees        int
	}{
		{"stranger", env.Token(bob, "repo"), 0},
		{"fine-grained token outside its selection", env.FineGrainedToken(octo, octo, []*repos.Repository{other}, "metadata:read"), 1},
		{"installation token outside its selection", env.InstallationToken(octo, []*repos.Repository{other}, "metadata:read"), 1},
	} {
		r := post(t, env, c.token, q, nil)
		if len(r.Errors) != 1 || r.Errors[0].Type != "NOT_FOUND" || string(r.Data["repository"]) != "null" ||
			r.Errors[0].Message != "Could not resolve to a Repository with the name 'octo/secret'." || !slices.Equal(r.Errors[0].Path, []any{"repository"}) {
			t.Errorf("%s: %+v", c.name, r)
		}
		r = post(t, env, c.token, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": wire.NodeID("R", secret.ID)})
		if len(r.Errors) != 1 || r.Errors[0].Type != "NOT_FOUND" || string(r.Data["node"]) != "null" {
			t.Errorf("%s node: %+v", c.name, r)
		}
		r = post(t, env, c.token, `{ repositoryOwner(login: "octo") { repositories(first: 10) { totalCount } } }`, nil)
		if want := fmt.Sprintf(`{"repositories":{"totalCount":%d}}`, c.sees); len(r.Errors) != 0 || string(r.Data["repositoryOwner"]) != want {
			t.Errorf("%s list: %+v %s, want %s", c.name, r, r.Data["repositoryOwner"], want)
		}
	}
	r := post(t, env, env.Token(octo, "repo"), `query($ids: [ID!]!) { nodes(ids: $ids) { id } }`,
		map[string]any{"ids": []string{wire.NodeID("R", secret.ID), "nope", wire.NodeID("R", 999999)}})
	if len(r.Errors) != 2 || string(r.Data["nodes"]) != `[{"id":"`+wire.NodeID("R", secret.ID)+`"},null,null]` ||
		!slices.Equal(r.Errors[0].Path, []any{"nodes", 1.0}) || r.Errors[1].Type != "NOT_FOUND" {
		t.Errorf("nodes: %+v %s", r, r.Data["nodes"])
	}
	r = post(t, env, env.Token(octo, "repo"), `{ user(login: "nobody") { login } }`, nil)
	if len(r.Errors) != 1 || r.Errors[0].Type != "NOT_FOUND" || string(r.Data["user"]) != "null" {
		t.Errorf("unknown user: %+v", r)
	}

	r = post(t, env, env.Token(octo, "repo"), `{ viewer { login followers { totalCount } } }`, nil)
	if len(r.Errors) != 1 || r.Data != nil || r.Errors[0].Message != "Field 'followers' doesn't exist on type 'User'" {
		t.Errorf("unknown field: %+v", r)
	}
	resp, out := env.DoJSON("POST", "/api/graphql", env.Token(octo, "repo"), `{"query":"{ viewer { followers { totalCount } } }"}`)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(out), `"extensions":{"code":"undefinedField","fieldName":"followers","typeName":"User"}`) {
		t.Errorf("unknown field: %d %s", resp.StatusCode, out)
	}

	r = post(t, env, env.Token(octo, "repo"), `{ __type(name: "Repository") { fields { name } } }`, nil)
	if len(r.Errors) != 0 || !strings.Contains(string(r.Data["__type"]), `{"name":"nameWithOwner"}`) ||
		strings.Contains(string(r.Data["__type"]), `{"name":"discussions"}`) {
		t.Errorf("introspection: %+v %s", r, r.Data["__type"])
	}
}

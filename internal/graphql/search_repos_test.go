package graphql_test

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"testing"

	"forgeapi/internal/apptest"
)

// searchQuery asks a search of repositories or users as gh repo list
// asks it, with every count.
const searchQuery = `query($q: String!, $type: SearchType!, $first: Int, $after: String) {
	search(query: $q, type: $type, first: $first, after: $after) {
		repositoryCount userCount issueCount
		pageInfo { hasNextPage endCursor }
		nodes { __typename ... on Repository { nameWithOwner isPrivate isFork } ... on User { login } ... on Organization { login } }
	} }`

// searchPage is one page of searchQuery's answer.
type searchPage struct {
	Search struct {
		RepositoryCount, UserCount, IssueCount int
		PageInfo                               struct {
			HasNextPage bool
			EndCursor   string
		}
		Nodes []struct {
			Typename      string `json:"__typename"`
			NameWithOwner string
			Login         string
		}
	}
}

// names are the page's repositories' full names or accounts' logins,
// each with its type.
func (p searchPage) names() string {
	var out []string
	for _, n := range p.Search.Nodes {
		out = append(out, n.Typename+":"+n.NameWithOwner+n.Login)
	}
	return strings.Join(out, " ")
}

// TestSearchRepositoriesAndUsers runs search(type: REPOSITORY) and
// search(type: USER) and checks them against REST's GET
// /search/repositories and /search/users: the same selection (forks
// left out unless asked, a private repository only to whom reads it),
// the count of its type (0 for the others), pages through after with
// pageInfo, user:@me, and a qualifier REST refuses is UNPROCESSABLE,
// a type forgeapi does not search INVALID_ARGUMENTS.
func TestSearchRepositoriesAndUsers(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo, bob := env.User("octo"), env.User("bob")
	acme := env.Org("acme", octo)
	engine := env.Repo(octo, "rocket-engine", apptest.RepoOpts{Description: "fast"})
	env.Repo(octo, "rocket-secret", apptest.RepoOpts{Private: true})
	env.Repo(acme, "rocket-fuel")
	env.Repo(bob, "garden")
	env.Repo(bob, "rocket-engine", apptest.RepoOpts{ForkOf: engine})
	octoToken, bobToken := env.Token(octo, "repo"), env.Token(bob, "repo")

	search := func(token, q, typ string, first int, after string) searchPage {
		t.Helper()
		vars := map[string]any{"q": q, "type": typ, "first": first}
		if after != "" {
			vars["after"] = after
		}
		var p searchPage
		gqlData(t, env, token, searchQuery, vars, &p)
		return p
	}
	restNames := func(token, path, q string) (int, string) {
		t.Helper()
		_, body := env.DoJSON("GET", path+"?per_page=100&q="+url.QueryEscape(q), token, "")
		var out struct {
			TotalCount int `json:"total_count"`
			Items      []struct {
				FullName string `json:"full_name"`
				Login    string `json:"login"`
				Type     string `json:"type"`
			}
		}
		if err := json.Unmarshal(body, &out); err != nil {
			t.Fatalf("%s %s: %s", path, q, body)
		}
		var names []string
		for _, it := range out.Items {
			if it.FullName != "" {
				names = append(names, "Repository:"+it.FullName)
			} else {
				names = append(names, map[string]string{"User": "User:", "Organization": "Organization:"}[it.Type]+it.Login)
			}
		}
		return out.TotalCount, strings.Join(names, " ")
	}

	// octo reads its private repository: three found, paged by two.
	first := search(octoToken, "rocket", "REPOSITORY", 2, "")
	if s := first.Search; s.RepositoryCount != 3 || s.UserCount != 0 || s.IssueCount != 0 || !s.PageInfo.HasNextPage || len(s.Nodes) != 2 {
		t.Fatalf("octo's first page: %+v", s)
	}
	second := search(octoToken, "rocket", "REPOSITORY", 2, first.Search.PageInfo.EndCursor)
	if s := second.Search; s.RepositoryCount != 3 || s.PageInfo.HasNextPage || len(s.Nodes) != 1 {
		t.Fatalf("octo's second page: %+v", s)
	}
	got := first.names() + " " + second.names()
	if total, want := restNames(octoToken, "/search/repositories", "rocket"); total != 3 || got != want {
		t.Errorf("octo's search: %s\nREST (%d): %s", got, total, want)
	}
	if !strings.Contains(got, "Repository:octo/rocket-secret") || strings.Contains(got, "bob/") {
		t.Errorf("octo's search: %s, want the private repository and no fork", got)
	}

	// bob does not read it; forks come with fork:true; @me is the caller.
	for _, c := range []struct{ token, q, want string }{
		{bobToken, "rocket", "Repository:acme/rocket-fuel Repository:octo/rocket-engine"},
		{bobToken, "rocket fork:true", "Repository:acme/rocket-fuel Repository:bob/rocket-engine Repository:octo/rocket-engine"},
		{bobToken, "user:@me fork:false", "Repository:bob/garden"},
		{octoToken, "user:@me sort:updated-desc", "Repository:octo/rocket-secret Repository:octo/rocket-engine"},
		{octoToken, "rocket is:private", "Repository:octo/rocket-secret"},
	} {
		p := search(c.token, c.q, "REPOSITORY", 100, "")
		names := strings.Split(p.names(), " ")
		if !strings.Contains(c.q, "sort:") {
			slices.Sort(names)
		}
		if strings.Join(names, " ") != c.want || p.Search.RepositoryCount != len(names) {
			t.Errorf("search %q: %d %v, want %s", c.q, p.Search.RepositoryCount, names, c.want)
		}
	}

	// Users and organizations, as REST's user search finds them.
	for _, q := range []string{"o", "acme", "type:user", "octo in:login"} {
		p := search(bobToken, q, "USER", 100, "")
		total, want := restNames(bobToken, "/search/users", q)
		if got := p.names(); got != want || p.Search.UserCount != total || p.Search.RepositoryCount != 0 || total == 0 {
			t.Errorf("user search %q: %d %s\nREST (%d): %s", q, p.Search.UserCount, got, total, want)
		}
	}
	if p := search(bobToken, "acme", "USER", 1, ""); p.names() != "Organization:acme" {
		t.Errorf("user search acme: %s", p.names())
	}

	// What REST refuses, GraphQL refuses; paging as every connection.
	for q, typ := range map[string]string{"stars:many": "UNPROCESSABLE", "type:robot": "UNPROCESSABLE"} {
		kind := "REPOSITORY"
		if strings.HasPrefix(q, "type:") {
			kind = "USER"
		}
		r := post(t, env, bobToken, searchQuery, map[string]any{"q": q, "type": kind, "first": 10})
		if len(r.Errors) != 1 || r.Errors[0].Type != typ {
			t.Errorf("search %q: %+v, want %s", q, r.Errors, typ)
		}
	}
	r := post(t, env, bobToken, `{ search(query: "rocket", type: REPOSITORY, first: 101) { repositoryCount } }`, nil)
	if len(r.Errors) != 1 || r.Errors[0].Type != "EXCESSIVE_PAGINATION" {
		t.Errorf("first: 101: %+v", r.Errors)
	}
	r = post(t, env, bobToken, `{ search(query: "rocket", type: DISCUSSION, first: 10) { discussionCount: issueCount } }`, nil)
	if len(r.Errors) != 1 || r.Errors[0].Type != "INVALID_ARGUMENTS" {
		t.Errorf("type: DISCUSSION: %+v", r.Errors)
	}
}

// TestGitHubCLIRepoListSearch runs `gh repo list --topic`, `--source
// --no-archived` and `--archived` on a server on --tls: with those
// filters gh asks search(type: REPOSITORY) (user:@me or user:OWNER,
// fork:, archived:, topic:, sort:updated-desc), and prints the
// repositories found, a private one only to whom reads it.
func TestGitHubCLIRepoListSearch(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithTLS())
	octo, bob := env.User("octo"), env.User("bob")
	engine := env.Repo(octo, "engine")
	env.Repo(octo, "secret", apptest.RepoOpts{Private: true})
	env.Repo(octo, "notes")
	env.Repo(octo, "engine-fork", apptest.RepoOpts{ForkOf: engine})
	token := env.Token(octo, "repo", "read:org")
	for _, name := range []string{"engine", "secret"} {
		if resp, body := env.DoJSON("PUT", "/repos/octo/"+name+"/topics", token, `{"names":["space"]}`); resp.StatusCode != 200 {
			t.Fatalf("topics of %s: %d %s", name, resp.StatusCode, body)
		}
	}
	run, _ := ghCLI(t, env, token)
	out := run("repo", "list", "--topic", "space")
	if !strings.Contains(out, "octo/engine\t") || !strings.Contains(out, "octo/secret") || strings.Contains(out, "octo/notes") {
		t.Errorf("gh repo list --topic space:\n%s", out)
	}
	out = run("repo", "list", "octo", "--source", "--no-archived")
	if !strings.Contains(out, "octo/notes") || !strings.Contains(out, "octo/engine\t") || strings.Contains(out, "engine-fork") {
		t.Errorf("gh repo list octo --source --no-archived:\n%s", out)
	}
	if out = run("repo", "list", "octo", "--archived"); strings.Contains(out, "octo/") {
		t.Errorf("gh repo list octo --archived (none is archived):\n%s", out)
	}
	bobRun, _ := ghCLI(t, env, env.Token(bob, "repo", "read:org"))
	out = bobRun("repo", "list", "octo", "--topic", "space")
	if !strings.Contains(out, "octo/engine") || strings.Contains(out, "octo/secret") {
		t.Errorf("bob's gh repo list octo --topic space:\n%s", out)
	}
}

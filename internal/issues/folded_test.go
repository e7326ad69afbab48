package issues_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// TestMixedCaseTextOnBothDatabases: the filters that match text of
// issues case-insensitively (PostgreSQL through the lowercased columns
// of migration 00184, SQLite through lower()) answer the same on both
// databases for titles and bodies in mixed case: the issues that mention
// a user (?mentioned=, /issues?filter=subscribed, mentions: and
// involves:) and the words of a search of one repository's pull
// requests (GraphQL search, pulls.Find).
func TestMixedCaseTextOnBothDatabases(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo, eve := env.User("octo"), env.User("eve")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo")
	c, eveC := env.Client(token), env.Client(env.Token(eve, "public_repo"))
	mk := func(title, body string) int {
		t.Helper()
		is, _, err := eveC.Issues.Create(ctx, "octo", "hello", github.CreateIssueRequest{Title: title, Body: github.Ptr(body)})
		apptest.Must(t, "issue "+title, err)
		return is.GetNumber()
	}
	mentioned := mk("Mention", "Ping @OcTo: the WiDgEt fails")
	quiet := mk("Quiet", "Nothing for anyone")
	work := apptest.WorkTree(t, map[string]string{"README.md": "# hello\n"})
	remote := env.GitURL("octo", "hello", "octo", token)
	apptest.Git(t, work, "push", "-q", remote, "HEAD:refs/heads/main")
	pull := func(branch, title, body string) int {
		t.Helper()
		apptest.Git(t, work, "checkout", "-q", "-b", branch, "main")
		apptest.Commit(t, work, title, map[string]string{branch + ".txt": branch + "\n"})
		apptest.Git(t, work, "push", "-q", remote, branch)
		pr, _, err := c.PullRequests.Create(ctx, "octo", "hello", github.CreatePullRequest{Title: github.Ptr(title),
			Body: github.Ptr(body), Head: branch, Base: "main"})
		apptest.Must(t, "pull request "+title, err)
		return pr.GetNumber()
	}
	byTitle := pull("a", "Fix the WIDGET", "")
	byBody := pull("b", "Refactor", "Touches the wIdGeT code")
	pull("c", "Unrelated", "Gadgets only")

	issueNumbers := func(list []*github.Issue) []int {
		var out []int
		for _, is := range list {
			out = append(out, is.GetNumber())
		}
		slices.Sort(out)
		return out
	}
	list, _, err := c.Issues.ListByRepo(ctx, "octo", "hello", &github.IssueListByRepoOptions{Mentioned: "OCTO"})
	apptest.Must(t, "list mentioned", err)
	if got := issueNumbers(list); !slices.Equal(got, []int{mentioned}) {
		t.Errorf("?mentioned=OCTO: %v, want [%d]", got, mentioned)
	}
	list, _, err = c.Issues.ListAllIssues(ctx, &github.ListAllIssuesOptions{Filter: "subscribed"})
	apptest.Must(t, "list subscribed", err)
	if got := issueNumbers(list); !slices.Contains(got, mentioned) || slices.Contains(got, quiet) {
		t.Errorf("/issues?filter=subscribed: %v, want %d (and octo's pull requests), not %d", got, mentioned, quiet)
	}
	for _, q := range []string{"mentions:OCTO repo:octo/hello", "involves:octo repo:octo/hello is:issue"} {
		res, _, err := c.Search.Issues(ctx, q, nil)
		apptest.Must(t, "search "+q, err)
		if got := issueNumbers(res.Issues); !slices.Equal(got, []int{mentioned}) {
			t.Errorf("%s: %v, want [%d]", q, got, mentioned)
		}
	}

	const query = `query($q: String!) { search(query: $q, type: ISSUE, first: 10) { nodes { ... on PullRequest { number } } } }`
	body, _ := json.Marshal(map[string]any{"query": query, "variables": map[string]any{"q": "repo:octo/hello is:pr WidGet sort:created-asc"}})
	resp, out := env.DoJSON("POST", "/api/graphql", token, string(body))
	var r struct {
		Data struct {
			Search struct{ Nodes []struct{ Number int } }
		}
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(out, &r) != nil {
		t.Fatalf("search pull requests: %d %s", resp.StatusCode, out)
	}
	var got []int
	for _, n := range r.Data.Search.Nodes {
		got = append(got, n.Number)
	}
	if !slices.Equal(got, []int{byTitle, byBody}) {
		t.Errorf("pull requests holding WidGet: %v, want [%d %d] (%s)", got, byTitle, byBody, out)
	}
}

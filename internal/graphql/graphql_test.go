package graphql_test

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// TestViewerQuery: the viewer query is answered for whoever the
// credentials authenticate; no credentials is a 401.
func TestViewerQuery(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo := env.User("octo")
	token := env.Token(octo)
	for _, q := range []string{"query UserCurrent{viewer{login}}", "{ viewer { login, databaseId # id\n name } }", "query { viewer { login url id } }"} {
		body, _ := json.Marshal(map[string]string{"query": q})
		resp, out := env.DoJSON("POST", "/api/graphql", token, string(body))
		var r struct {
			Data struct {
				Viewer map[string]any `json:"viewer"`
			} `json:"data"`
			Errors []any `json:"errors"`
		}
		if resp.StatusCode != http.StatusOK || json.Unmarshal(out, &r) != nil || r.Data.Viewer["login"] != "octo" || len(r.Errors) != 0 {
			t.Fatalf("%q: %d %s", q, resp.StatusCode, out)
		}
	}
	if resp, _ := env.DoJSON("POST", "/api/graphql", "", `{"query":"{viewer{login}}"}`); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("anonymous: %d, want 401", resp.StatusCode)
	}
}

// result is a GraphQL response.
type result struct {
	Data   map[string]json.RawMessage `json:"data"`
	Errors []struct {
		Type    string `json:"type"`
		Message string `json:"message"`
		Path    []any  `json:"path"`
	} `json:"errors"`
}

func post(t *testing.T, env *apptest.Env, token, query string, vars map[string]any) result {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	resp, out := env.DoJSON("POST", "/api/graphql", token, string(body))
	var r result
	if resp.StatusCode != http.StatusOK || json.Unmarshal(out, &r) != nil {
		t.Fatalf("%q: %d %s", query, resp.StatusCode, out)
	}
	return r
}

// pushFeature pushes main and a feature branch one commit ahead to the
// repository and opens a draft pull request of it as octo.
func pushFeature(t *testing.T, env *apptest.Env, repo, token string, gitArgs ...string) *github.PullRequest {
	t.Helper()
	dir := apptest.WorkTree(t, map[string]string{"README.md": "# hello\n"})
	remote := env.GitURL("octo", repo, "octo", token)
	apptest.Git(t, dir, append(gitArgs, "push", "-q", remote, "main")...)
	apptest.Git(t, dir, "checkout", "-q", "-b", "feature")
	apptest.Commit(t, dir, "Add a feature", map[string]string{"feature.txt": "new\n"})
	apptest.Git(t, dir, append(gitArgs, "push", "-q", remote, "feature")...)
	pr, _, err := env.Client(token).PullRequests.Create(apptest.Ctx(), "octo", repo, github.CreatePullRequest{
		Title: github.Ptr("WIP"), Head: "feature", Base: "main", Draft: github.Ptr(true)})
	apptest.Must(t, "open a draft", err)
	return pr
}

// TestPullRequestByNumber: repository(owner, name) { pullRequest(number) }
// answers the fields asked, under their aliases, with the arguments as
// variables (as gh's PullRequestByNumber) or literals; an unknown number
// or a repository the caller may not see is a NOT_FOUND error with its
// path and null data; a field not served is a validation error naming
// it, with no data.
func TestPullRequestByNumber(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo, bob := env.User("octo"), env.User("bob")
	env.Repo(octo, "secret", apptest.RepoOpts{Private: true})
	token := env.Token(octo, "repo")
	pr := pushFeature(t, env, "secret", token)
	const q = `query PullRequestByNumber($owner: String!, $repo: String!, $pr_number: Int!) {
		repository(owner: $owner, name: $repo) { pullRequest(number: $pr_number) { id, number state isDraft draft: isDraft url title } } }`
	vars := map[string]any{"owner": "octo", "repo": "secret", "pr_number": 1}
	r := post(t, env, token, q, vars)
	var got struct {
		PullRequest map[string]any `json:"pullRequest"`
	}
	if len(r.Errors) != 0 || json.Unmarshal(r.Data["repository"], &got) != nil {
		t.Fatalf("by number: %+v", r)
	}
	want := map[string]any{"id": pr.GetNodeID(), "number": 1.0, "state": "OPEN", "isDraft": true, "draft": true,
		"url": pr.GetHTMLURL(), "title": "WIP"}
	if !maps.Equal(got.PullRequest, want) {
		t.Fatalf("by number: %v, want %v", got.PullRequest, want)
	}
	r = post(t, env, token, `{ repository(owner: "octo", name: "secret") { pullRequest(number: 7) { id } } }`, nil)
	if len(r.Errors) != 1 || r.Errors[0].Type != "NOT_FOUND" || string(r.Data["repository"]) != `{"pullRequest":null}` ||
		!slices.Equal(r.Errors[0].Path, []any{"repository", "pullRequest"}) {
		t.Fatalf("unknown number: %+v %s", r, r.Data["repository"])
	}
	noPulls := env.FineGrainedToken(octo, octo, apptest.AllRepos, "contents:read")
	r = post(t, env, noPulls, q, vars)
	if len(r.Errors) != 1 || r.Errors[0].Type != "FORBIDDEN" || string(r.Data["repository"]) != `{"pullRequest":null}` {
		t.Errorf("fine-grained without Pull requests: %+v, want FORBIDDEN on the pull request", r)
	}
	for name, tok := range map[string]string{"stranger": env.Token(bob, "repo"), "no repo scope": env.Token(octo, "public_repo"),
		"fine-grained without Pull requests": noPulls} {
		if name != "fine-grained without Pull requests" {
			r = post(t, env, tok, q, vars)
			if len(r.Errors) != 1 || r.Errors[0].Type != "NOT_FOUND" || string(r.Data["repository"]) != "null" {
				t.Errorf("%s: %+v, want NOT_FOUND", name, r)
			}
		}
		r = post(t, env, tok, `mutation($id: ID!) { convertPullRequestToDraft(input: {pullRequestId: $id}) { clientMutationId } }`,
			map[string]any{"id": pr.GetNodeID()})
		if len(r.Errors) != 1 || r.Errors[0].Type != "NOT_FOUND" {
			t.Errorf("%s mutation: %+v, want NOT_FOUND", name, r)
		}
	}
	for bad, names := range map[string]string{
		`{ repository(owner: "octo", name: "secret") { pullRequest(number: 1) { id timelineItems { totalCount } } } }`: "timelineItems",
		`{ repository(owner: "octo", name: "secret") { pullRequest(number: 1) } }`:                                     "pullRequest",
		`mutation { enablePullRequestAutoMerge(input: {pullRequestId: "x"}) { clientMutationId } }`:                    "enablePullRequestAutoMerge",
		`{ repository(owner: "octo, name: "secret") { id } }`:                                                          "",
		`query($n: Int!) { repository(owner: "octo", name: "secret") { pullRequest(number: $n) { id } } }`:             `"n"`,
	} {
		r = post(t, env, token, bad, nil)
		if len(r.Errors) == 0 || r.Data != nil || r.Errors[0].Type != "" || !strings.Contains(r.Errors[0].Message, names) {
			t.Errorf("%q: %+v, want a validation error naming %q", bad, r, names)
		}
	}
}

// ghCLI returns a runner of the gh CLI against env (a server on --tls)
// with the token, which fails the test when gh fails, and the host that
// gh is given (GH_HOST, and the host of --repo arguments): env's
// validating proxy, so that every exchange gh makes is validated. It
// skips without gh, except in CI.
func ghCLI(t *testing.T, env *apptest.Env, token string) (run func(args ...string) string, host string) {
	t.Helper()
	gh := apptest.GH(t, env, token, true)
	gh.Env = []string{"GIT_SSL_CAINFO=" + env.Main.CAFile()} // gh repo clone and gh pr checkout run git
	return func(args ...string) string { t.Helper(); return gh.Run(t, args...) }, gh.Host
}

// TestGitHubCLIPullRequestReady runs `gh pr ready N --repo HOST/owner/repo`
// and `gh pr ready --undo` against a server on --tls self-signed: gh
// queries the pull request by number, then runs the mutation; REST shows
// the draft flag follow. Then `gh pr edit` changes the title and body
// and adds a label.
func TestGitHubCLIPullRequestReady(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithTLS())
	octo := env.User("octo")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo", "read:org")
	run, host := ghCLI(t, env, token)
	pushFeature(t, env, "hello", token, "-c", "http.sslCAInfo="+env.Main.CAFile())
	draft := func() bool {
		pr, _, err := env.Client(token).PullRequests.Get(apptest.Ctx(), "octo", "hello", 1)
		apptest.Must(t, "get", err)
		return pr.GetDraft()
	}
	run("pr", "ready", "1", "--repo", host+"/octo/hello")
	if draft() {
		t.Fatal("gh pr ready: still a draft")
	}
	run("pr", "ready", "1", "--undo", "--repo", host+"/octo/hello")
	if !draft() {
		t.Fatal("gh pr ready --undo: not a draft")
	}

	_, _, err := env.Client(token).Issues.CreateLabel(apptest.Ctx(), "octo", "hello", github.CreateIssueLabelRequest{Name: "ready"})
	apptest.Must(t, "label", err)
	out := run("pr", "edit", "1", "--repo", host+"/octo/hello", "--title", "A feature", "--body", "Adds it.", "--add-label", "ready")
	pr, _, err := env.Client(token).PullRequests.Get(apptest.Ctx(), "octo", "hello", 1)
	apptest.Must(t, "get", err)
	if strings.TrimSpace(out) != pr.GetHTMLURL() || pr.GetTitle() != "A feature" || pr.GetBody() != "Adds it." ||
		len(pr.Labels) != 1 || pr.Labels[0].GetName() != "ready" {
		t.Errorf("gh pr edit printed %q; REST shows %q, %q, %v", out, pr.GetTitle(), pr.GetBody(), pr.Labels)
	}
}

// TestGitHubCLIRepoViewAndList runs `gh repo view` and `gh repo list`
// against a server on --tls and checks what they print.
func TestGitHubCLIRepoViewAndList(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithTLS())
	octo := env.User("octo")
	env.Repo(octo, "hello", apptest.RepoOpts{Description: "says hello"})
	env.Repo(octo, "secret", apptest.RepoOpts{Private: true})
	token := env.Token(octo, "repo", "read:org")
	run, host := ghCLI(t, env, token)
	if out := run("repo", "view", host+"/octo/hello"); !strings.Contains(out, "name:\tocto/hello\n") || !strings.Contains(out, "description:\tsays hello\n") {
		t.Errorf("gh repo view:\n%s", out)
	}
	// Newest push first: secret was created (and so pushed) last.
	out := run("repo", "list", "octo")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "octo/secret\t\tprivate\t") || !strings.HasPrefix(lines[1], "octo/hello\tsays hello\tpublic\t") {
		t.Errorf("gh repo list:\n%s", out)
	}
	if out := run("repo", "list", "octo", "--visibility", "public"); !strings.HasPrefix(out, "octo/hello\t") || strings.Contains(out, "secret") {
		t.Errorf("gh repo list --visibility public:\n%s", out)
	}
}

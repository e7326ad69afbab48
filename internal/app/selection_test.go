package app_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apps"
	"forgeapi/internal/apptest"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/testwait"
)

// userActions are the write routes that name a repository but act for
// the token's user, each with its reason: the platform lets a
// permission-based token take them on a public repository outside its
// selection. The guard tells them by their rule's permissions, all of
// the user group; the walk below fails on a route whose permissions say
// so and that is not named here, and on a route named here whose
// permissions do not.
var userActions = map[string]string{
	"PUT /user/starred/{owner}/{repo}":          "starring is the user's own list (user permission Starring)",
	"DELETE /user/starred/{owner}/{repo}":       "unstarring is the user's own list (user permission Starring)",
	"PUT /repos/{owner}/{repo}/subscription":    "watching is the user's own subscription (user permission Watching)",
	"DELETE /repos/{owner}/{repo}/subscription": "unwatching is the user's own subscription (user permission Watching)",
}

// selectionWorld is a public repository alice/pub that alice owns, with
// an issue, a pull request, comments, a review, a label and a milestone,
// and three permission-based tokens holding every permission at write
// whose selections leave it out: alice's fine-grained token selecting
// alice/other, an installation token of an app installed on acme/priv
// only, and alice's app user token restricted to that installation.
type selectionWorld struct {
	env                       *apptest.Env
	fpat, iat, uat            string
	head                      string // the feature branch's commit
	issueComment, pullComment int64
	review                    int64
	pullNodeID                string
}

// allWrite is every permission of the catalog at write.
func allWrite() string {
	var all []string
	for _, p := range auth.PermissionCatalog() {
		all = append(all, p.Name+":write")
	}
	return strings.Join(all, ",")
}

func newSelectionWorld(t *testing.T) *selectionWorld {
	env := apptest.Start(t)
	alice := env.User("alice")
	env.User("bob")
	acme := env.Org("acme", alice)
	globex := env.Org("globex", alice)
	env.Repo(alice, "pub")
	other := env.Repo(alice, "other")
	priv := env.Repo(acme, "priv", apptest.RepoOpts{Private: true})
	env.Repo(globex, "tool")
	w := &selectionWorld{env: env}

	classic := env.Token(alice, "repo", "admin:org", "user")
	dir := apptest.WorkTree(t, map[string]string{"README.md": "# pub\n"})
	remote := env.GitURL("alice", "pub", "alice", classic)
	apptest.Git(t, dir, "push", "-q", remote, "main")
	apptest.Git(t, dir, "checkout", "-q", "-b", "feature")
	w.head = apptest.Commit(t, dir, "Add a feature", map[string]string{"feature.txt": "new\n"})
	apptest.Git(t, dir, "push", "-q", remote, "feature", "feature:topic")
	seed := func(method, path, body string, into any) {
		t.Helper()
		resp, out := env.DoJSON(method, path, classic, body)
		if resp.StatusCode >= 300 {
			t.Fatalf("seed %s %s: %d %s", method, path, resp.StatusCode, out)
		}
		if into != nil {
			apptest.Must(t, "seed "+path, json.Unmarshal(out, into))
		}
	}
	var ids struct {
		ID     int64  `json:"id"`
		NodeID string `json:"node_id"`
	}
	seed("POST", "/repos/alice/pub/issues", `{"title":"first"}`, nil)
	seed("POST", "/repos/alice/pub/pulls", `{"title":"feature","head":"feature","base":"main"}`, &ids)
	w.pullNodeID = ids.NodeID
	seed("POST", "/repos/alice/pub/issues/1/comments", `{"body":"a comment"}`, &ids)
	w.issueComment = ids.ID
	seed("POST", "/repos/alice/pub/pulls/2/comments",
		fmt.Sprintf(`{"body":"a line","commit_id":%q,"path":"feature.txt","line":1}`, w.head), &ids)
	w.pullComment = ids.ID
	seed("POST", "/repos/alice/pub/pulls/2/reviews", `{"event":"COMMENT","body":"a review"}`, &ids)
	w.review = ids.ID
	seed("POST", "/repos/alice/pub/labels", `{"name":"bug"}`, nil)
	seed("POST", "/repos/alice/pub/milestones", `{"title":"v1"}`, nil)
	seed("POST", "/orgs/globex/teams", `{"name":"core"}`, nil)
	// The pull request's mergeability is computed in the background
	// (its test merge written): wait for it, so that the walk below sees
	// the state settled.
	testwait.Until(t, "the pull request's mergeability", func() bool {
		var pr struct {
			Mergeable *bool `json:"mergeable"`
		}
		seed("GET", "/repos/alice/pub/pulls/2", "", &pr)
		return pr.Mergeable != nil
	})

	all := allWrite()
	w.fpat = env.FineGrainedToken(alice, alice, []*repos.Repository{other}, all)
	w.uat = env.AppUserToken(alice, acme, []*repos.Repository{priv}, all)
	app := env.RegisterApp(acme, "Everything Bot", all)
	minted, err := env.Apps().Mint(env.Context(), &app.App, env.Install(app, acme, priv), apps.TokenRequest{})
	apptest.Must(t, "mint an installation token", err)
	w.iat = minted.Token
	return w
}

// path fills the route's pattern with the world's values.
func (w *selectionWorld) path(pattern, org string) string {
	values := map[string]string{"{owner}": "alice", "{repo}": "pub", "{org}": org, "{username}": "bob",
		"{issue_number}": "1", "{pull_number}": "2", "{comments}": "comments", "{name}": "bug",
		"{milestone_number}": "1", "{path...}": "README.md", "{ref...}": "heads/feature", "{sha}": w.head,
		"{review_id}": strconv.FormatInt(w.review, 10), "{team_slug}": "core", "{repo_name}": "tool"}
	values["{comment_id}"] = strconv.FormatInt(w.issueComment, 10)
	if strings.Contains(pattern, "/pulls/") {
		values["{comment_id}"] = strconv.FormatInt(w.pullComment, 10)
	}
	if strings.HasPrefix(pattern, "/orgs/{org}/teams/{team_slug}/repos/") {
		values["{owner}"], values["{repo}"] = org, "tool"
	}
	return pathWildcard.ReplaceAllStringFunc(pattern, func(v string) string {
		if s, ok := values[v]; ok {
			return s
		}
		return "1"
	})
}

// selectionBodies are request bodies that the write routes would accept
// from a caller in reach, so that a write the guard let through would
// change something (the walk's "nothing changed" would see it).
var selectionBodies = map[string]string{
	"POST /repos/{owner}/{repo}/issues":                                            `{"title":"from outside"}`,
	"PATCH /repos/{owner}/{repo}/issues/{issue_number}":                            `{"title":"edited from outside","state":"closed"}`,
	"POST /repos/{owner}/{repo}/issues/{issue_number}/comments":                    `{"body":"from outside"}`,
	"PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}":                     `{"body":"edited from outside"}`,
	"POST /repos/{owner}/{repo}/issues/{issue_number}/labels":                      `{"labels":["bug"]}`,
	"PUT /repos/{owner}/{repo}/issues/{issue_number}/labels":                       `{"labels":["bug"]}`,
	"POST /repos/{owner}/{repo}/issues/{issue_number}/assignees":                   `{"assignees":["alice"]}`,
	"POST /repos/{owner}/{repo}/labels":                                            `{"name":"outside"}`,
	"POST /repos/{owner}/{repo}/milestones":                                        `{"title":"outside"}`,
	"POST /repos/{owner}/{repo}/pulls":                                             `{"title":"from outside","head":"topic","base":"main"}`,
	"PATCH /repos/{owner}/{repo}/pulls/{pull_number}":                              `{"title":"edited from outside"}`,
	"POST /repos/{owner}/{repo}/pulls/{pull_number}/reviews":                       `{"event":"COMMENT","body":"from outside"}`,
	"POST /repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies": `{"body":"from outside"}`,
	"PATCH /repos/{owner}/{repo}/pulls/comments/{comment_id}":                      `{"body":"edited from outside"}`,
	"POST /repos/{owner}/{repo}/statuses/{sha}":                                    `{"state":"success"}`,
	"POST /repos/{owner}/{repo}/check-runs":                                        `{"name":"outside","head_sha":"%s"}`,
	"POST /repos/{owner}/{repo}/check-suites":                                      `{"head_sha":"%s"}`,
	"PATCH /repos/{owner}/{repo}/check-suites/preferences":                         `{"auto_trigger_checks":[]}`,
	"POST /repos/{owner}/{repo}/git/refs":                                          `{"ref":"refs/heads/outside","sha":"%s"}`,
	"POST /repos/{owner}/{repo}/forks":                                             `{}`,
	"PUT /repos/{owner}/{repo}/contents/{path...}":                                 `{"message":"outside","content":"b3V0c2lkZQ==","branch":"topic"}`,
}

// TestScopedTokensWriteOnlyInsideTheirSelection walks the route table:
// every write route that names a repository, called on the public
// repository alice/pub by a fine-grained token of alice (its owner)
// selecting another repository, an installation token of an app installed
// on acme/priv only and an app user token restricted to that
// installation, all holding every permission at write, answers 403
// "Resource not accessible by ..." and changes nothing (database and
// git references alike), except the user actions named in userActions,
// which succeed for the token kinds the route accepts. Organization
// writes on an organization outside the tokens' reach are refused (404
// where the rule needs membership: a token of another account is no
// member; 403 otherwise), and so are the installation token's writes to
// a user's own resources. A GraphQL mutation of the public pull request
// is FORBIDDEN.
func TestScopedTokensWriteOnlyInsideTheirSelection(t *testing.T) {
	t.Parallel()
	w := newSelectionWorld(t)
	env := w.env
	tokens := []struct {
		kind  auth.Kind
		token string
	}{{auth.KindFineGrained, w.fpat}, {auth.KindInstallation, w.iat}, {auth.KindAppUser, w.uat}}

	before := stateOf(t, env)
	for _, table := range []string{"table issues", "table issue_comments", "table pull_requests", "table repositories"} {
		if _, ok := before[table]; !ok {
			t.Fatalf("the state digest lacks %s", table)
		}
	}
	var actions []string
	checked := 0
	for _, rt := range env.App.Routes() {
		key := rt.Method + " " + rt.Pattern
		if rt.Method == http.MethodGet || rt.Method == http.MethodHead {
			continue
		}
		userOnly := rt.Auth.Permissions.UserOnly()
		if _, named := userActions[key]; named != (userOnly && rt.Auth.Target == auth.TargetRepo) {
			t.Errorf("%s: permissions %s (user-only %v) disagree with userActions (named %v)", key, rt.Auth.Permissions, userOnly, named)
		}
		switch {
		case userOnly && rt.Auth.Target == auth.TargetRepo:
			actions = append(actions, key) // they change state: called after the comparison
			continue
		case rt.Auth.Target == auth.TargetRepo || rt.Auth.Target == auth.TargetOrg:
		case rt.Auth.Target == auth.TargetSelf || rt.Auth.Target == auth.TargetUser:
			// An installation acts on the account it is installed on,
			// never for a user.
			w.refused(t, key, w.path(rt.Pattern, "globex"), auth.KindInstallation, w.iat, http.StatusForbidden)
			checked++
			continue
		default:
			continue
		}
		for _, tok := range tokens {
			want := http.StatusForbidden
			if rt.Auth.Target == auth.TargetOrg && rt.Auth.TokenTypes.Allows(tok.kind) && rt.Auth.Role > auth.RoleNone {
				want = http.StatusNotFound
			}
			w.refused(t, key, w.path(rt.Pattern, "globex"), tok.kind, tok.token, want)
			checked++
		}
	}
	mutation, _ := json.Marshal(map[string]any{
		"query":     `mutation($id: ID!) { convertPullRequestToDraft(input: {pullRequestId: $id}) { clientMutationId } }`,
		"variables": map[string]any{"id": w.pullNodeID}})
	for _, tok := range tokens {
		resp, out := env.DoJSON("POST", "/api/graphql", tok.token, string(mutation))
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(out), `"type":"FORBIDDEN"`) {
			t.Errorf("%s: GraphQL mutation of a pull request outside the selection: %d %s, want FORBIDDEN", tok.kind, resp.StatusCode, out)
		}
	}
	if checked < 200 {
		t.Fatalf("only %d calls checked", checked)
	}
	after := stateOf(t, env)
	for name, sum := range before {
		if after[name] != sum {
			t.Errorf("refused writes changed %s", name)
		}
	}

	// The user actions: the token's user stars and watches the public
	// repository; installation tokens act for no user.
	slices.Sort(actions)
	if len(actions) != len(userActions) {
		t.Errorf("user actions in the route table: %v, want those of userActions", actions)
	}
	for _, key := range actions {
		method, pattern, _ := strings.Cut(key, " ")
		for _, tok := range tokens {
			resp, out := env.DoJSON(method, w.path(pattern, "globex"), tok.token, "")
			switch {
			case tok.kind == auth.KindInstallation:
				wantNotAccessible(t, key, tok.kind, resp, out)
			case resp.StatusCode/100 != 2:
				t.Errorf("%s with a %s token outside its selection: %d %s, want the user's action done (%s)",
					key, tok.kind, resp.StatusCode, out, userActions[key])
			}
		}
	}
}

// refused sends the route's request with the token and checks the
// refusal: want, and for a 403 the platform's message for the token.
func (w *selectionWorld) refused(t *testing.T, key, path string, kind auth.Kind, token string, want int) {
	t.Helper()
	method, _, _ := strings.Cut(key, " ")
	body := selectionBodies[key]
	if strings.Contains(body, "%s") {
		body = fmt.Sprintf(body, w.head)
	}
	resp, out := w.env.DoJSON(method, path, token, body)
	if resp.StatusCode != want {
		t.Errorf("%s (%s) with a %s token outside its selection: %d %s, want %d", key, path, kind, resp.StatusCode, out, want)
		return
	}
	if want == http.StatusForbidden {
		wantNotAccessible(t, key, kind, resp, out)
	}
}

// wantNotAccessible checks a 403 with the platform's message for a
// permission-based token of the kind.
func wantNotAccessible(t *testing.T, what string, kind auth.Kind, resp *http.Response, out []byte) {
	t.Helper()
	var e errorBody
	if resp.StatusCode != http.StatusForbidden || json.Unmarshal(out, &e) != nil || e.Message != httpapi.NotAccessibleMessage(kind) {
		t.Errorf("%s with a %s token: %d %s, want 403 %q", what, kind, resp.StatusCode, out, httpapi.NotAccessibleMessage(kind))
	}
}

// stateOf digests what a write could change: every table's rows and
// every repository's git references, by name.
func stateOf(t *testing.T, env *apptest.Env) map[string]string {
	t.Helper()
	ctx := context.Background()
	list := `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`
	if env.App.DB.Dialect == store.Postgres {
		list = `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()`
	}
	var tables []string
	rows, err := env.Q().QueryContext(ctx, list)
	apptest.Must(t, "list tables", err)
	for rows.Next() {
		var name string
		apptest.Must(t, "table name", rows.Scan(&name))
		tables = append(tables, name)
	}
	apptest.Must(t, "tables", rows.Err())
	rows.Close()
	out := map[string]string{}
	for _, table := range tables {
		out["table "+table] = tableDigest(t, env, table)
	}
	var ids []int64
	rows, err = env.Q().QueryContext(ctx, `SELECT id FROM repositories`)
	apptest.Must(t, "repositories", err)
	for rows.Next() {
		var id int64
		apptest.Must(t, "repository id", rows.Scan(&id))
		ids = append(ids, id)
	}
	apptest.Must(t, "repositories", rows.Err())
	rows.Close()
	for _, id := range ids {
		refs := apptest.Git(t, ".", "--git-dir", env.App.Repos.GitDir(id), "for-each-ref", "--format=%(objectname) %(refname)")
		out["git refs of repository "+strconv.FormatInt(id, 10)] = refs
	}
	return out
}

// tableDigest is a digest of the table's rows in a fixed order.
func tableDigest(t *testing.T, env *apptest.Env, table string) string {
	t.Helper()
	rows, err := env.Q().QueryContext(context.Background(), `SELECT * FROM `+table)
	apptest.Must(t, "read "+table, err)
	defer rows.Close()
	cols, err := rows.Columns()
	apptest.Must(t, "columns of "+table, err)
	var lines []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		apptest.Must(t, "row of "+table, rows.Scan(ptrs...))
		lines = append(lines, fmt.Sprintf("%v", vals))
	}
	apptest.Must(t, "rows of "+table, rows.Err())
	slices.Sort(lines)
	sum := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return hex.EncodeToString(sum[:])
}

// TestInstallationTokenOpensNoIssueOutsideItsInstallation is the issue's
// example through go-github and ghinstallation: an app installed on
// acme/priv only mints its token as the platform's clients do; opening an
// issue on alice/pub, a public repository of an account where the app is
// not installed, is a 403 "Resource not accessible by integration" that
// opens nothing, while reading the repository and its issues works and
// the installation's own repository takes the issue.
func TestInstallationTokenOpensNoIssueOutsideItsInstallation(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	alice, octo := env.User("alice"), env.User("octo")
	acme := env.Org("acme", octo)
	env.Repo(alice, "pub")
	priv := env.Repo(acme, "priv", apptest.RepoOpts{Private: true})
	_, _, err := env.Client(env.Token(alice, "repo")).Issues.Create(ctx, "alice", "pub", github.CreateIssueRequest{Title: "first"})
	apptest.Must(t, "alice opens an issue", err)
	app := env.RegisterApp(acme, "Triage Bot", "issues:write,pull_requests:write,contents:write")
	inst := env.Install(app, acme, priv)
	itr, err := ghinstallation.New(env.Transport(), app.ID, inst.ID, app.PrivateKeyPEM)
	apptest.Must(t, "installation transport", err)
	itr.BaseURL = env.APIBase()
	bot := env.ClientWith(itr)

	_, resp, err := bot.Issues.Create(ctx, "alice", "pub", github.CreateIssueRequest{Title: "from outside"})
	wantGitHubNotAccessible(t, "open an issue outside the installation", resp, err, "Resource not accessible by integration")
	_, resp, err = bot.Issues.CreateComment(ctx, "alice", "pub", 1, github.IssueCommentRequest{Body: "from outside"})
	wantGitHubNotAccessible(t, "comment outside the installation", resp, err, "Resource not accessible by integration")
	if _, resp, err := bot.Repositories.Get(ctx, "alice", "pub"); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("read the public repository: %v", err)
	}
	issues, _, err := bot.Issues.ListByRepo(ctx, "alice", "pub", nil)
	apptest.Must(t, "list its issues", err)
	if len(issues) != 1 || issues[0].GetTitle() != "first" {
		t.Fatalf("alice/pub's issues: %d, want only the first", len(issues))
	}
	is, resp, err := bot.Issues.Create(ctx, "acme", "priv", github.CreateIssueRequest{Title: "inside"})
	apptest.Must(t, "open an issue in the installation's repository", err)
	if resp.StatusCode != http.StatusCreated || is.GetUser().GetLogin() != "triage-bot[bot]" {
		t.Fatalf("issue inside: %d by %s", resp.StatusCode, is.GetUser().GetLogin())
	}
}

// TestFineGrainedTokenWritesOnlyItsSelection: alice's fine-grained token
// selecting alice/other, holding Issues and Pull requests write, reads
// her public repository alice/pub (200) but cannot comment there or open
// a pull request (403 "Resource not accessible by personal access
// token"), though alice owns it; in alice/other it does both.
func TestFineGrainedTokenWritesOnlyItsSelection(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	alice := env.User("alice")
	env.Repo(alice, "pub")
	other := env.Repo(alice, "other")
	classic := env.Token(alice, "repo")
	for _, repo := range []string{"pub", "other"} {
		dir := apptest.WorkTree(t, map[string]string{"README.md": "# " + repo + "\n"})
		remote := env.GitURL("alice", repo, "alice", classic)
		apptest.Git(t, dir, "push", "-q", remote, "main")
		apptest.Git(t, dir, "checkout", "-q", "-b", "feature")
		apptest.Commit(t, dir, "Add a feature", map[string]string{"feature.txt": "new\n"})
		apptest.Git(t, dir, "push", "-q", remote, "feature")
		_, _, err := env.Client(classic).Issues.Create(ctx, "alice", repo, github.CreateIssueRequest{Title: "first"})
		apptest.Must(t, "alice opens an issue", err)
	}
	fg := env.Client(env.FineGrainedToken(alice, alice, []*repos.Repository{other}, "issues:write,pull_requests:write"))
	newPull := github.CreatePullRequest{Title: github.Ptr("feature"), Head: "feature", Base: "main"}
	const refused = "Resource not accessible by personal access token"

	_, resp, err := fg.Issues.CreateComment(ctx, "alice", "pub", 1, github.IssueCommentRequest{Body: "from outside"})
	wantGitHubNotAccessible(t, "comment outside the selection", resp, err, refused)
	_, resp, err = fg.PullRequests.Create(ctx, "alice", "pub", newPull)
	wantGitHubNotAccessible(t, "open a pull request outside the selection", resp, err, refused)
	_, resp, err = fg.Repositories.Get(ctx, "alice", "pub")
	apptest.Must(t, "read the repository outside the selection", err)
	wantStatus(t, "read the repository outside the selection", resp.Response, nil, http.StatusOK)
	issue, resp, err := fg.Issues.Get(ctx, "alice", "pub", 1)
	apptest.Must(t, "read an issue outside the selection", err)
	if resp.StatusCode != http.StatusOK || issue.GetTitle() != "first" {
		t.Fatalf("alice/pub#1: %d %q", resp.StatusCode, issue.GetTitle())
	}
	comments, _, err := fg.Issues.ListComments(ctx, "alice", "pub", 1, nil)
	apptest.Must(t, "read the comments outside the selection", err)
	pulls, _, err := fg.PullRequests.List(ctx, "alice", "pub", nil)
	apptest.Must(t, "read the pull requests outside the selection", err)
	if len(comments) != 0 || len(pulls) != 0 {
		t.Fatalf("alice/pub changed: %d comments, %d pull requests", len(comments), len(pulls))
	}

	_, resp, err = fg.Issues.CreateComment(ctx, "alice", "other", 1, github.IssueCommentRequest{Body: "inside"})
	apptest.Must(t, "comment inside the selection", err)
	wantStatus(t, "comment inside the selection", resp.Response, nil, http.StatusCreated)
	_, resp, err = fg.PullRequests.Create(ctx, "alice", "other", newPull)
	apptest.Must(t, "open a pull request inside the selection", err)
	wantStatus(t, "pull request inside the selection", resp.Response, nil, http.StatusCreated)
}

// wantGitHubNotAccessible checks a go-github call's 403 with the
// platform's message for a permission-based token.
func wantGitHubNotAccessible(t *testing.T, what string, resp *github.Response, err error, message string) {
	t.Helper()
	e, ok := errors.AsType[*github.ErrorResponse](err)
	if !ok || apptest.ResponseStatus(resp) != http.StatusForbidden || e.Message != message {
		t.Fatalf("%s: %d %v, want 403 %q", what, apptest.ResponseStatus(resp), err, message)
	}
}

package issues_test

import (
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/webhooks"
)

// TestIssueAccess: a stranger cannot see a private repository's issues;
// anyone reads a public repository's issues without credentials;
// fine-grained tokens open issues with Issues write and are refused
// without it; a collaborator with triage labels while one with pull
// cannot; the lists across repositories show what the caller may read.
func TestIssueAccess(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo, eve, carol, dave := env.User("octo"), env.User("eve"), env.User("carol"), env.User("dave")
	secret := env.Repo(octo, "secret", apptest.RepoOpts{Private: true})
	env.Repo(octo, "hello")
	owner := env.Client(env.Token(octo, "repo"))
	_, _, err := owner.Issues.Create(ctx, "octo", "secret", github.CreateIssueRequest{Title: "hidden", Assignees: []string{"octo"}})
	apptest.Must(t, "private issue", err)
	_, _, err = owner.Issues.Create(ctx, "octo", "hello", github.CreateIssueRequest{Title: "public"})
	apptest.Must(t, "public issue", err)

	stranger := env.Client(env.Token(eve, "repo"))
	_, resp, _ := stranger.Issues.Get(ctx, "octo", "secret", 1)
	status(t, "stranger gets", resp, http.StatusNotFound)
	_, resp, _ = stranger.Issues.ListByRepo(ctx, "octo", "secret", nil)
	status(t, "stranger lists", resp, http.StatusNotFound)
	_, resp, _ = stranger.Issues.Create(ctx, "octo", "secret", github.CreateIssueRequest{Title: "let me in"})
	status(t, "stranger opens", resp, http.StatusNotFound)
	if resp, body := env.Do("GET", "/repos/octo/hello/issues", "", nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("anonymous list of a public repository: %d %s", resp.StatusCode, body)
	}
	if resp, _ := env.Do("GET", "/repos/octo/secret/issues/1", "", nil); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("anonymous get of a private issue: %d", resp.StatusCode)
	}
	// A user the owner blocks can neither open issues nor comment on its
	// repositories.
	troll := env.User("troll")
	if resp, body := env.DoJSON("PUT", "/user/blocks/troll", env.Token(octo, "user"), ``); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("block: %d %s", resp.StatusCode, body)
	}
	blocked := env.Client(env.Token(troll, "repo"))
	_, resp, _ = blocked.Issues.Create(ctx, "octo", "hello", github.CreateIssueRequest{Title: "spam"})
	status(t, "a blocked user opens", resp, http.StatusForbidden)
	_, resp, _ = blocked.Issues.CreateComment(ctx, "octo", "hello", 1, github.IssueCommentRequest{Body: "spam"})
	status(t, "a blocked user comments", resp, http.StatusForbidden)

	withIssues := env.Client(env.FineGrainedToken(octo, octo, apptest.AllRepos, "issues:write"))
	_, resp, err = withIssues.Issues.Create(ctx, "octo", "secret", github.CreateIssueRequest{Title: "from a fine-grained token"})
	apptest.Must(t, "fine-grained with issues", err)
	status(t, "fine-grained with issues", resp, http.StatusCreated)
	withoutIssues := env.Client(env.FineGrainedToken(octo, octo, apptest.AllRepos, "contents:read"))
	_, resp, _ = withoutIssues.Issues.Create(ctx, "octo", "secret", github.CreateIssueRequest{Title: "refused"})
	status(t, "fine-grained without issues opens", resp, http.StatusForbidden)
	_, resp, _ = withoutIssues.Issues.ListByRepo(ctx, "octo", "secret", nil)
	status(t, "fine-grained without issues lists", resp, http.StatusForbidden)

	for login, perm := range map[string]string{"carol": "triage", "dave": "pull"} {
		user := map[string]int64{"carol": carol.ID, "dave": dave.ID}[login]
		if _, err := env.Q().ExecContext(ctx, `INSERT INTO repo_collaborators (repository_id, user_id, permission, created_at)
			VALUES ($1, $2, $3, $4)`, secret.ID, user, perm, store.Now()); err != nil {
			t.Fatal(err)
		}
	}
	_, _, err = env.Client(env.Token(carol, "repo")).Issues.AddLabelsToIssue(ctx, "octo", "secret", 1, []string{"triaged"})
	apptest.Must(t, "triage collaborator labels", err)
	_, resp, _ = env.Client(env.Token(dave, "repo")).Issues.AddLabelsToIssue(ctx, "octo", "secret", 1, []string{"nope"})
	status(t, "pull collaborator labels", resp, http.StatusForbidden)
	_, resp, _ = env.Client(env.Token(dave, "repo")).Issues.Update(ctx, "octo", "secret", 1, github.UpdateIssueRequest{State: github.Ptr("closed")})
	status(t, "pull collaborator closes another's issue", resp, http.StatusForbidden)

	for what, call := range map[string]func() (*github.Response, error){
		"bad state": func() (*github.Response, error) {
			_, resp, err := owner.Issues.Update(ctx, "octo", "secret", 1, github.UpdateIssueRequest{State: github.Ptr("done")})
			return resp, err
		},
		"bad state_reason": func() (*github.Response, error) {
			_, resp, err := owner.Issues.Update(ctx, "octo", "secret", 1, github.UpdateIssueRequest{StateReason: github.Ptr("bored")})
			return resp, err
		},
		"unknown milestone": func() (*github.Response, error) {
			_, resp, err := owner.Issues.Update(ctx, "octo", "secret", 1, github.UpdateIssueRequest{Milestone: github.Ptr(9)})
			return resp, err
		},
		"bad lock reason": func() (*github.Response, error) {
			return owner.Issues.Lock(ctx, "octo", "secret", 1, &github.LockIssueOptions{LockReason: "bored"})
		},
		"bad list state": func() (*github.Response, error) {
			_, resp, err := owner.Issues.ListByRepo(ctx, "octo", "secret", &github.IssueListByRepoOptions{State: "done"})
			return resp, err
		},
		"bad list sort": func() (*github.Response, error) {
			_, resp, err := owner.Issues.ListByRepo(ctx, "octo", "secret", &github.IssueListByRepoOptions{Sort: "votes"})
			return resp, err
		},
		"title too long": func() (*github.Response, error) {
			_, resp, err := owner.Issues.Create(ctx, "octo", "secret", github.CreateIssueRequest{Title: strings.Repeat("t", 257)})
			return resp, err
		},
	} {
		resp, err := call()
		if err == nil || apptest.ResponseStatus(resp) != http.StatusUnprocessableEntity {
			t.Errorf("%s: status %d (%v), want 422", what, apptest.ResponseStatus(resp), err)
		}
	}
	_, resp, _ = owner.Issues.Get(ctx, "octo", "secret", 99)
	status(t, "missing issue", resp, http.StatusNotFound)

	mine, _, err := owner.Issues.ListUserIssues(ctx, nil)
	apptest.Must(t, "user issues", err)
	everything, _, err := owner.Issues.ListUserIssues(ctx, &github.ListUserIssuesOptions{Filter: "all"})
	apptest.Must(t, "all user issues", err)
	theirs, _, err := stranger.Issues.ListUserIssues(ctx, &github.ListUserIssuesOptions{Filter: "all"})
	apptest.Must(t, "stranger's issues", err)
	viaIssues, _, err := owner.Issues.ListAllIssues(ctx, &github.ListAllIssuesOptions{Filter: "created"})
	apptest.Must(t, "GET /issues", err)
	if len(viaIssues) != 3 {
		t.Fatalf("created by octo: %d", len(viaIssues))
	}
	if len(mine) != 1 || mine[0].GetTitle() != "hidden" || mine[0].GetRepository().GetFullName() != "octo/secret" || len(everything) != 3 || len(theirs) != 0 {
		t.Fatalf("user issues: assigned %d, all %d, stranger %d", len(mine), len(everything), len(theirs))
	}
}

// TestConcurrentNumbers: issues created at once get distinct numbers
// 1..n.
func TestConcurrentNumbers(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo")
	env.Repo(octo, "busy")
	client := env.Client(env.Token(octo, "repo"))
	const n = 16
	var mu sync.Mutex
	var got []int
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			is, _, err := client.Issues.Create(ctx, "octo", "busy", github.CreateIssueRequest{Title: "at once"})
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			got = append(got, is.GetNumber())
			mu.Unlock()
		}()
	}
	wg.Wait()
	slices.Sort(got)
	for i, num := range got {
		if num != i+1 {
			t.Fatalf("numbers %v", got)
		}
	}
	if len(got) != n {
		t.Fatalf("%d issues created", len(got))
	}
}

// TestAppReceivesIssues: an app subscribed to issues and issue_comment
// with the Issues permission receives both from a repository it is
// installed on, and acts on them with its installation token.
func TestAppReceivesIssues(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	ctx := apptest.Ctx()
	octo := env.User("octo")
	org := env.Org("acme", octo)
	tracker := env.Repo(org, "tracker")
	rc := apptest.NewReceiver(t, "s")
	a := env.RegisterApp(org, "Triage Bot", "issues:write", apptest.AppOpts{Events: []string{"issues", "issue_comment"},
		WebhookURL: rc.URL, WebhookSecret: "s"})
	env.Install(a, org, tracker)
	owner := env.Client(env.Token(octo, "repo"))
	_, _, err := owner.Issues.Create(ctx, "acme", "tracker", github.CreateIssueRequest{Title: "for the bot"})
	apptest.Must(t, "open", err)
	bot := env.Client(env.InstallationToken(org, []*repos.Repository{tracker}, "issues:write"))
	_, _, err = bot.Issues.CreateComment(ctx, "acme", "tracker", 1, github.IssueCommentRequest{Body: "thanks"})
	apptest.Must(t, "bot comments", err)
	rc.WaitFor(t, apptest.EventAction, "issues opened", "issue_comment created")
	inOrg, _, err := owner.Issues.ListByOrg(ctx, "acme", &github.IssueListByOrgOptions{Filter: "all"})
	apptest.Must(t, "organization issues", err)
	if len(inOrg) != 1 || inOrg[0].GetComments() != 1 || inOrg[0].GetRepository().GetFullName() != "acme/tracker" {
		t.Fatalf("organization issues: %+v", inOrg)
	}
}

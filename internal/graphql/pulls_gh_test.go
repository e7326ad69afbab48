package graphql_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// TestGitHubCLIPullRequests runs gh's pull request commands against a
// server on --tls: create, list, view, checks, review, comment, close,
// reopen and merge, and checks what they print and what REST shows
// after.
func TestGitHubCLIPullRequests(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithTLS())
	octo, bob := env.User("octo"), env.User("bob")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo", "read:org")
	run, host := ghCLI(t, env, token)
	bobToken := env.Token(bob, "repo", "read:org")
	runBob, _ := ghCLI(t, env, bobToken)
	repoArg := host + "/octo/hello"

	dir := apptest.WorkTree(t, map[string]string{"README.md": "# hello\n"})
	remote := env.GitURL("octo", "hello", "octo", token)
	ca := "http.sslCAInfo=" + env.Main.CAFile()
	apptest.Git(t, dir, "-c", ca, "push", "-q", remote, "main")
	apptest.Git(t, dir, "checkout", "-q", "-b", "feature")
	apptest.Commit(t, dir, "Add a feature\n\nWith a body.", map[string]string{"feature.txt": "new\n"})
	apptest.Git(t, dir, "-c", ca, "push", "-q", remote, "feature")

	pull := func() *github.PullRequest {
		pr, _, err := env.Client(token).PullRequests.Get(apptest.Ctx(), "octo", "hello", 1)
		apptest.Must(t, "REST get", err)
		return pr
	}

	if out := run("pr", "create", "--repo", repoArg, "--head", "feature", "--base", "main", "--title", "Add a feature", "--body", "Adds it."); strings.TrimSpace(out) != env.URL+"/octo/hello/pull/1" {
		t.Errorf("gh pr create:\n%s", out)
	}
	if pr := pull(); pr.GetTitle() != "Add a feature" || pr.GetBody() != "Adds it." || pr.GetHead().GetRef() != "feature" || pr.GetUser().GetLogin() != "octo" {
		t.Errorf("created: %+v", pr)
	}
	if out := run("pr", "list", "--repo", repoArg); !strings.HasPrefix(out, "1\tAdd a feature\tfeature\tOPEN\t") || strings.Count(out, "\n") != 1 {
		t.Errorf("gh pr list:\n%s", out)
	}
	if out := run("pr", "list", "--repo", repoArg, "--state", "merged"); out != "" {
		t.Errorf("gh pr list --state merged before the merge:\n%s", out)
	}

	head := strings.TrimSpace(apptest.Git(t, dir, "rev-parse", "HEAD"))
	_, _, err := env.Client(token).Repositories.CreateStatus(apptest.Ctx(), "octo", "hello", head, github.RepoStatus{
		State: github.Ptr("success"), Context: github.Ptr("ci/build"), Description: github.Ptr("Built"), TargetURL: github.Ptr("https://ci.example/1")})
	apptest.Must(t, "status", err)
	if out := run("pr", "checks", "1", "--repo", repoArg); !strings.HasPrefix(out, "ci/build\tpass\t0\thttps://ci.example/1") {
		t.Errorf("gh pr checks:\n%s", out)
	}

	inv, _, err := env.Client(token).Repositories.AddCollaborator(apptest.Ctx(), "octo", "hello", "bob", &github.RepositoryAddCollaboratorOptions{Permission: "pull"})
	apptest.Must(t, "invite bob", err)
	_, err = env.Client(bobToken).Users.AcceptInvitation(apptest.Ctx(), inv.GetID())
	apptest.Must(t, "bob accepts", err)
	_, _, err = env.Client(token).PullRequests.RequestReviewers(apptest.Ctx(), "octo", "hello", 1, github.ReviewersRequest{Reviewers: []string{"bob"}})
	apptest.Must(t, "request bob's review", err)
	if out := run("pr", "status", "--repo", repoArg); !strings.Contains(out, "Created by you\n  #1  Add a feature [feature]\n  ✓ Checks passing") ||
		!strings.Contains(out, "Requesting a code review from you\n  You have no pull requests to review") {
		t.Errorf("gh pr status, the author:\n%s", out)
	}
	if out := runBob("pr", "status", "--repo", repoArg); !strings.Contains(out, "Created by you\n  You have no open pull requests") ||
		!strings.Contains(out, "Requesting a code review from you\n  #1  Add a feature [feature]\n  ✓ Checks passing") {
		t.Errorf("gh pr status, the reviewer asked:\n%s", out)
	}

	runBob("pr", "review", "1", "--approve", "--body", "Looks good.", "--repo", repoArg)
	reviews, _, err := env.Client(token).PullRequests.ListReviews(apptest.Ctx(), "octo", "hello", 1, nil)
	apptest.Must(t, "REST reviews", err)
	if len(reviews) != 1 || reviews[0].GetState() != "APPROVED" || reviews[0].GetBody() != "Looks good." || reviews[0].GetUser().GetLogin() != "bob" {
		t.Errorf("gh pr review --approve: %+v", reviews)
	}
	if out := run("pr", "status", "--repo", repoArg); !strings.Contains(out, "#1  Add a feature [feature]\n  ✓ Checks passing ✓ 1 Approved") {
		t.Errorf("gh pr status after the approval:\n%s", out)
	}
	out := run("pr", "view", "1", "--repo", repoArg)
	for _, want := range []string{"title:\tAdd a feature\n", "state:\tOPEN\n", "author:\tocto\n", "reviewers:\tbob (Approved)\n",
		"number:\t1\n", "url:\t" + env.URL + "/octo/hello/pull/1\n", "additions:\t1\n", "deletions:\t0\n", "--\nAdds it."} {
		if !strings.Contains(out, want) {
			t.Errorf("gh pr view: no %q in\n%s", want, out)
		}
	}

	out = runBob("pr", "comment", "1", "--body", "Nice one.", "--repo", repoArg)
	comments, _, err := env.Client(token).Issues.ListComments(apptest.Ctx(), "octo", "hello", 1, nil)
	apptest.Must(t, "REST comments", err)
	if len(comments) != 1 || comments[0].GetBody() != "Nice one." || comments[0].GetUser().GetLogin() != "bob" ||
		strings.TrimSpace(out) != comments[0].GetHTMLURL() {
		t.Errorf("gh pr comment printed %q; REST comments %+v", out, comments)
	}
	if out := run("pr", "view", "1", "--comments", "--repo", repoArg); !strings.Contains(out, "author:\tbob\n") || !strings.Contains(out, "Nice one.") {
		t.Errorf("gh pr view --comments:\n%s", out)
	}
	fields := "additions,assignees,author,baseRefName,body,changedFiles,closed,closedAt,comments,commits,createdAt,deletions,files," +
		"headRefName,headRefOid,headRepository,headRepositoryOwner,id,isCrossRepository,isDraft,labels,latestReviews," +
		"maintainerCanModify,mergeCommit,mergeStateStatus,mergeable,mergedAt,mergedBy,milestone,number,potentialMergeCommit," +
		"projectCards,reactionGroups,reviewDecision,reviewRequests,reviews,state,statusCheckRollup,title,updatedAt,url"
	var viewed struct {
		Author            struct{ Login string }
		HeadRefOid        string
		Commits           []struct{ MessageHeadline, MessageBody, Oid string }
		Files             []struct{ Path string }
		Comments          []struct{ Body string }
		Reviews           []struct{ State string }
		ReviewDecision    string
		StatusCheckRollup []struct{ Context, State string }
	}
	out = run("pr", "view", "1", "--repo", repoArg, "--json", fields)
	if err := json.Unmarshal([]byte(out), &viewed); err != nil || viewed.Author.Login != "octo" || viewed.HeadRefOid != head ||
		len(viewed.Commits) != 1 || viewed.Commits[0].MessageHeadline != "Add a feature" || viewed.Commits[0].MessageBody != "With a body." ||
		len(viewed.Files) != 1 || viewed.Files[0].Path != "feature.txt" || len(viewed.Comments) != 1 || viewed.Comments[0].Body != "Nice one." ||
		len(viewed.Reviews) != 1 || viewed.ReviewDecision != "APPROVED" || len(viewed.StatusCheckRollup) != 1 || viewed.StatusCheckRollup[0].State != "SUCCESS" {
		t.Errorf("gh pr view --json: %v\n%s", err, out)
	}

	if out := run("pr", "close", "1", "--repo", repoArg); !strings.Contains(out, "Closed pull request #1 (Add a feature)") || pull().GetState() != "closed" {
		t.Errorf("gh pr close:\n%s", out)
	}
	if out := run("pr", "reopen", "1", "--repo", repoArg); !strings.Contains(out, "Reopened pull request #1 (Add a feature)") || pull().GetState() != "open" {
		t.Errorf("gh pr reopen:\n%s", out)
	}
	run("pr", "merge", "1", "--squash", "--repo", repoArg)
	if pr := pull(); !pr.GetMerged() || pr.GetMergedBy().GetLogin() != "octo" {
		t.Errorf("gh pr merge: %+v", pr)
	}
	if out := run("pr", "list", "--repo", repoArg, "--state", "merged"); !strings.HasPrefix(out, "1\tAdd a feature\tfeature\tMERGED\t") {
		t.Errorf("gh pr list --state merged:\n%s", out)
	}
	if out := run("pr", "view", "1", "--repo", repoArg); !strings.Contains(out, "state:\tMERGED\n") {
		t.Errorf("gh pr view after the merge:\n%s", out)
	}
}

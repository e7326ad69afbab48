package actions_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/testwait"
)

// forkWorkflow runs on pull requests and reports what its GITHUB_TOKEN
// may do (creating an issue) in its log.
const forkWorkflow = `on: pull_request
jobs:
  check:
    runs-on: ubuntu-latest
    steps:
      - run: |
          curl -s -o /dev/null -w "issue %{http_code}\n" -X POST -H "Authorization: Bearer ${{ secrets.GITHUB_TOKEN }}" -d '{"title":"from a fork"}' API/repos/octo/hello/issues
`

// TestForkPullRequestRunWaitsForApproval: a first-time contributor's pull
// request from a fork into a public repository creates a run completed
// with conclusion action_required and no jobs (the default policy,
// first_time_contributors, as GET .../fork-pr-contributor-approval
// says); a write token cannot approve it for the contributor, the
// owner's POST .../approve (201) runs it, with a read-only GITHUB_TOKEN
// (its issue is refused), and a second approve is a 403.
func TestForkPullRequestRunWaitsForApproval(t *testing.T) {
	apptest.SkipJobsUnderRace(t)
	f := start(t)
	ctx := apptest.Ctx()
	api := strings.TrimSuffix(f.env.URL, "/") + "/api/v3"
	f.push(t, map[string]string{".github/workflows/pr.yml": strings.ReplaceAll(forkWorkflow, "API", api), "README": "hello\n"})
	resp, body := f.env.Do("GET", "/repos/octo/hello/actions/permissions/fork-pr-contributor-approval", f.token, nil)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"approval_policy":"first_time_contributors"`) {
		t.Fatalf("approval policy: %d %s", resp.StatusCode, body)
	}
	eve := f.env.User("eve")
	eveToken := f.env.Token(eve, "repo", "workflow")
	ec := f.env.Client(eveToken)
	_, _, err := ec.Repositories.CreateFork(ctx, "octo", "hello", nil)
	if _, ok := err.(*github.AcceptedError); err != nil && !ok {
		t.Fatalf("fork: %v", err)
	}
	work := apptest.WorkTree(t, nil)
	apptest.Git(t, work, "remote", "add", "origin", f.env.GitURL("eve", "hello", "eve", eveToken))
	apptest.Git(t, work, "fetch", "-q", "origin", "main")
	apptest.Git(t, work, "checkout", "-q", "-b", "feature", "FETCH_HEAD")
	apptest.Commit(t, work, "a fix", map[string]string{"README": "hello from eve\n"})
	apptest.Git(t, work, "push", "-q", "origin", "HEAD:refs/heads/feature")
	_, _, err = ec.PullRequests.Create(ctx, "octo", "hello", github.CreatePullRequest{Title: github.Ptr("fix"),
		Head: "eve:feature", Base: "main"})
	apptest.Must(t, "open the pull request", err)
	run := f.completedRun(t, "pr.yml", 1)
	if run.GetConclusion() != "action_required" || run.GetEvent() != "pull_request" {
		t.Fatalf("the fork's run: %s %s", run.GetStatus(), run.GetConclusion())
	}
	if jobs := jobsByName(t, f, run.GetID(), ""); len(jobs) != 0 {
		t.Fatalf("a waiting run has jobs: %v", jobs)
	}
	resp, body = f.env.Do("POST", fmt.Sprintf("/repos/octo/hello/actions/runs/%d/approve", run.GetID()), eveToken, nil)
	if resp.StatusCode != 403 && resp.StatusCode != 404 {
		t.Fatalf("the contributor approves: %d %s", resp.StatusCode, body)
	}
	resp, body = f.env.Do("POST", fmt.Sprintf("/repos/octo/hello/actions/runs/%d/approve", run.GetID()), f.token, nil)
	if resp.StatusCode != 201 {
		t.Fatalf("approve: %d %s", resp.StatusCode, body)
	}
	testwait.For(t, "the approved run completed", func() error {
		r, _, err := f.c.Actions.GetWorkflowRunByID(ctx, "octo", "hello", run.GetID())
		if err != nil {
			return err
		}
		if r.GetStatus() != "completed" || r.GetConclusion() == "action_required" {
			return fmt.Errorf("run %s %s", r.GetStatus(), r.GetConclusion())
		}
		run = r
		return nil
	})
	jobs := jobsByName(t, f, run.GetID(), "")
	if run.GetConclusion() != "success" || len(jobs) != 1 {
		t.Fatalf("approved run %s with %d jobs", run.GetConclusion(), len(jobs))
	}
	if log := f.jobLog(t, jobs["check"].GetID()); !strings.Contains(log, "issue 403") {
		t.Errorf("the fork's token wrote (want read-only):\n%s", log)
	}
	resp, _ = f.env.Do("POST", fmt.Sprintf("/repos/octo/hello/actions/runs/%d/approve", run.GetID()), f.token, nil)
	if resp.StatusCode != 403 {
		t.Errorf("a second approve: %d", resp.StatusCode)
	}
}

// privateForkWorkflow reports its token's issue creation and a variable.
const privateForkWorkflow = `on: pull_request
permissions:
  contents: read
  issues: write
jobs:
  check:
    runs-on: ubuntu-latest
    steps:
      - run: |
          curl -s -o /dev/null -w "issue %{http_code}\n" -X POST -H "Authorization: Bearer ${{ secrets.GITHUB_TOKEN }}" -d '{"title":"from a fork"}' API/repos/acme/app/issues
          echo "var=[${{ vars.COLOR }}]"
`

// TestForkPullRequestsIntoAPrivateRepository: a member's pull request
// from a fork into a private repository starts no run until the
// organization and the repository enable fork pull requests' workflows;
// then its next push runs with a read-only token and no variables; once
// both send write tokens and variables, the next push's run creates its
// issue and sees the variable.
func TestForkPullRequestsIntoAPrivateRepository(t *testing.T) {
	apptest.SkipJobsUnderRace(t)
	t.Parallel()
	env := apptest.Start(t, withRunner)
	ctx := apptest.Ctx()
	owner, eve := env.User("octo"), env.User("eve")
	acme := env.Org("acme", owner, eve)
	env.Repo(acme, "app", apptest.RepoOpts{Private: true})
	token := env.Token(owner, "repo", "workflow", "admin:org")
	c := env.Client(token)
	do := func(method, path, body string, want int) {
		t.Helper()
		resp, b := env.Do(method, path, token, strings.NewReader(body))
		if resp.StatusCode != want {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
		}
	}
	do("POST", "/repos/acme/app/actions/variables", `{"name":"COLOR","value":"teal"}`, 201)
	api := strings.TrimSuffix(env.URL, "/") + "/api/v3"
	work := apptest.WorkTree(t, nil)
	apptest.Git(t, work, "remote", "add", "origin", env.GitURL("acme", "app", "octo", token))
	apptest.Commit(t, work, "ci", map[string]string{".github/workflows/pr.yml": strings.ReplaceAll(privateForkWorkflow, "API", api)})
	apptest.Git(t, work, "push", "-q", "origin", "HEAD:refs/heads/main")
	eveToken := env.Token(eve, "repo", "workflow")
	ec := env.Client(eveToken)
	_, _, err := ec.Repositories.CreateFork(ctx, "acme", "app", nil)
	if _, ok := err.(*github.AcceptedError); err != nil && !ok {
		t.Fatalf("fork: %v", err)
	}
	fork := apptest.WorkTree(t, nil)
	apptest.Git(t, fork, "remote", "add", "origin", env.GitURL("eve", "app", "eve", eveToken))
	apptest.Git(t, fork, "fetch", "-q", "origin", "main")
	apptest.Git(t, fork, "checkout", "-q", "-b", "feature", "FETCH_HEAD")
	pushFork := func(n int) {
		apptest.Commit(t, fork, "change", map[string]string{"N": fmt.Sprint(n)})
		apptest.Git(t, fork, "push", "-q", "origin", "HEAD:refs/heads/feature")
	}
	pushFork(1)
	_, _, err = ec.PullRequests.Create(ctx, "acme", "app", github.CreatePullRequest{Title: github.Ptr("fix"), Head: "eve:feature", Base: "main"})
	apptest.Must(t, "open the pull request", err)
	runs := func(n int) *github.WorkflowRun {
		t.Helper()
		var run *github.WorkflowRun
		testwait.For(t, fmt.Sprintf("%d completed runs", n), func() error {
			list, _, err := c.Actions.ListRepositoryWorkflowRuns(ctx, "acme", "app", nil)
			if err != nil {
				return err
			}
			if len(list.WorkflowRuns) != n || list.WorkflowRuns[0].GetStatus() != "completed" {
				return fmt.Errorf("%d runs", len(list.WorkflowRuns))
			}
			run = list.WorkflowRuns[0]
			return nil
		})
		return run
	}
	logOf := func(run *github.WorkflowRun) string {
		t.Helper()
		jobs, _, err := c.Actions.ListWorkflowJobs(ctx, "acme", "app", run.GetID(), nil)
		apptest.Must(t, "jobs", err)
		if run.GetConclusion() != "success" || len(jobs.Jobs) != 1 {
			t.Fatalf("run %s with %d jobs", run.GetConclusion(), len(jobs.Jobs))
		}
		u, _, err := c.Actions.GetWorkflowJobLogs(ctx, "acme", "app", jobs.Jobs[0].GetID(), 0)
		apptest.Must(t, "log", err)
		return get(t, u.String())
	}
	do("PUT", "/orgs/acme/actions/permissions/fork-pr-workflows-private-repos", `{"run_workflows_from_fork_pull_requests":true,
		"send_write_tokens_to_workflows":true,"send_secrets_and_variables":true}`, 204)
	do("PUT", "/repos/acme/app/actions/permissions/fork-pr-workflows-private-repos", `{"run_workflows_from_fork_pull_requests":true}`, 204)
	pushFork(2)
	log := logOf(runs(1)) // the pull request's opening, before, started none
	if !strings.Contains(log, "issue 403") || !strings.Contains(log, "var=[]") {
		t.Fatalf("a fork's run without write tokens and variables:\n%s", log)
	}
	do("PUT", "/repos/acme/app/actions/permissions/fork-pr-workflows-private-repos", `{"run_workflows_from_fork_pull_requests":true,
		"send_write_tokens_to_workflows":true,"send_secrets_and_variables":true}`, 204)
	pushFork(3)
	log = logOf(runs(2))
	if !strings.Contains(log, "issue 201") || !strings.Contains(log, "var=[teal]") {
		t.Fatalf("a fork's run with write tokens and variables:\n%s", log)
	}
}

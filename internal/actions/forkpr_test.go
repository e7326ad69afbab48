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

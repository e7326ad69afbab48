package actions_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/testwait"
)

// TestGHWorkflowAndRun drives the Actions API with the real gh CLI
// through the validating proxy: gh workflow list, gh workflow run with an
// input, gh run list and gh run view.
func TestGHWorkflowAndRun(t *testing.T) {
	t.Parallel()
	apptest.SkipJobsUnderRace(t)
	env := apptest.Start(t, withRunner, apptest.WithTLS())
	owner := env.User("octo", apptest.UserOpts{Email: "octo@example.com"})
	env.Repo(owner, "hello")
	token := env.Token(owner, "repo", "workflow", "read:org")
	c := env.Client(token)
	ctx := apptest.Ctx()
	_, _, err := c.Repositories.CreateFile(ctx, "octo", "hello", ".github/workflows/manual.yml", &github.RepositoryContentFileOptions{
		Message: github.Ptr("add a workflow"), Branch: github.Ptr("main"),
		Content: []byte("name: Manual\non:\n  workflow_dispatch:\n    inputs:\n      who:\n        required: true\njobs:\n  greet:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo \"hello ${{ inputs.who }}\"\n")})
	apptest.Must(t, "add the workflow", err)
	gh := apptest.GH(t, env, token, true)
	repo := gh.Host + "/octo/hello"
	testwait.Until(t, "the workflow listed", func() bool {
		return strings.Contains(gh.Run(t, "workflow", "list", "-R", repo), "Manual")
	})
	gh.Run(t, "workflow", "run", "manual.yml", "-R", repo, "--ref", "main", "-f", "who=gh")
	var id string
	testwait.For(t, "the run completed", func() error {
		out := gh.Stdout(t, "run", "list", "-R", repo, "--json", "databaseId,status,conclusion,event,workflowName",
			"--jq", `.[] | "\(.databaseId) \(.status) \(.conclusion) \(.event) \(.workflowName)"`)
		f := strings.Fields(out)
		if len(f) != 5 || f[1] != "completed" {
			return fmt.Errorf("gh run list: %q", out)
		}
		if f[2] != "success" || f[3] != "workflow_dispatch" || f[4] != "Manual" {
			t.Fatalf("gh run list: %q", out)
		}
		id = f[0]
		return nil
	})
	out := gh.Run(t, "run", "view", id, "-R", repo)
	if !strings.Contains(out, "greet") || !strings.Contains(out, "Manual") {
		t.Fatalf("gh run view:\n%s", out)
	}
	if out := gh.Run(t, "run", "view", id, "-R", repo, "--log"); !strings.Contains(out, "hello gh") {
		t.Fatalf("gh run view --log:\n%s", out)
	}
	gh.Run(t, "run", "rerun", id, "-R", repo)
	runID, _ := strconv.ParseInt(id, 10, 64)
	testwait.For(t, "attempt 2 completed", func() error {
		r, _, err := c.Actions.GetWorkflowRunByID(ctx, "octo", "hello", runID)
		if err != nil || r.GetRunAttempt() != 2 || r.GetStatus() != "completed" || r.GetConclusion() != "success" {
			return fmt.Errorf("run: attempt %d %s %v", r.GetRunAttempt(), r.GetStatus(), err)
		}
		return nil
	})
}

// TestGHRunCancel cancels a running run with gh run cancel.
func TestGHRunCancel(t *testing.T) {
	t.Parallel()
	apptest.SkipJobsUnderRace(t)
	env := apptest.Start(t, withRunner, apptest.WithTLS())
	owner := env.User("octo", apptest.UserOpts{Email: "octo@example.com"})
	env.Repo(owner, "hello")
	token := env.Token(owner, "repo", "workflow", "read:org")
	c := env.Client(token)
	ctx := apptest.Ctx()
	_, _, err := c.Repositories.CreateFile(ctx, "octo", "hello", ".github/workflows/slow.yml", &github.RepositoryContentFileOptions{
		Message: github.Ptr("add a slow workflow"), Branch: github.Ptr("main"),
		Content: []byte("on: push\njobs:\n  wait:\n    runs-on: ubuntu-latest\n    steps:\n      - run: sleep 600\n")})
	apptest.Must(t, "add the workflow", err)
	gh := apptest.GH(t, env, token, true)
	repo := gh.Host + "/octo/hello"
	var runID int64
	testwait.For(t, "the job running", func() error {
		runs, _, err := c.Actions.ListRepositoryWorkflowRuns(ctx, "octo", "hello", nil)
		if err != nil || len(runs.WorkflowRuns) == 0 || runs.WorkflowRuns[0].GetStatus() != "in_progress" {
			return fmt.Errorf("runs %v %v", runs, err)
		}
		runID = runs.WorkflowRuns[0].GetID()
		return nil
	})
	gh.Run(t, "run", "cancel", strconv.FormatInt(runID, 10), "-R", repo)
	testwait.For(t, "the run cancelled", func() error {
		r, _, err := c.Actions.GetWorkflowRunByID(ctx, "octo", "hello", runID)
		if err != nil || r.GetConclusion() != "cancelled" {
			return fmt.Errorf("run %s %s %v", r.GetStatus(), r.GetConclusion(), err)
		}
		return nil
	})
}

// TestGHRunDownload downloads an artifact a job uploaded with
// @actions/artifact, with the real gh (gh run download over TLS).
func TestGHRunDownload(t *testing.T) {
	t.Parallel()
	apptest.SkipJobsUnderRace(t)
	node := apptest.NodeModules(t, "@actions/artifact")
	env := apptest.Start(t, withRunner, apptest.WithTLS())
	owner := env.User("octo", apptest.UserOpts{Email: "octo@example.com"})
	env.Repo(owner, "hello")
	token := env.Token(owner, "repo", "workflow", "read:org")
	c := env.Client(token)
	ctx := apptest.Ctx()
	wf := "name: Build\non: push\njobs:\n  build:\n    runs-on: ubuntu-latest\n    steps:\n      - run: |\n" +
		"          mkdir -p out && echo built > out/app.txt\n" +
		"          GITHUB_SERVER_URL=http://forgeapi.localhost NODE_EXTRA_CA_CERTS=" + env.Main.CAFile() + " node " +
		filepath.Join(node, "actions-runtime.mjs") + " upload dist out\n"
	_, _, err := c.Repositories.CreateFile(ctx, "octo", "hello", ".github/workflows/build.yml", &github.RepositoryContentFileOptions{
		Message: github.Ptr("add a workflow"), Branch: github.Ptr("main"), Content: []byte(wf)})
	apptest.Must(t, "add the workflow", err)
	var run *github.WorkflowRun
	testwait.For(t, "the run completed", func() error {
		runs, _, err := c.Actions.ListRepositoryWorkflowRuns(ctx, "octo", "hello", nil)
		if err != nil || len(runs.WorkflowRuns) == 0 || runs.WorkflowRuns[0].GetStatus() != "completed" {
			return fmt.Errorf("runs: %v", err)
		}
		run = runs.WorkflowRuns[0]
		return nil
	})
	if run.GetConclusion() != "success" {
		t.Fatalf("run %s", run.GetConclusion())
	}
	gh := apptest.GH(t, env, token, true)
	dir := t.TempDir()
	gh.Run(t, "run", "download", strconv.FormatInt(run.GetID(), 10), "-R", gh.Host+"/octo/hello", "-n", "dist", "-D", dir)
	b, err := os.ReadFile(filepath.Join(dir, "app.txt"))
	if err != nil || string(b) != "built\n" {
		t.Fatalf("gh run download: %q %v", b, err)
	}
}

package actions_test

import (
	"fmt"
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
	skipUnderRace(t)
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
}

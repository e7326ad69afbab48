package cli_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// TestCLIRunnerRegisterAndRemove registers a runner with `forgeapi runner
// register` and a registration token (its credential kept in a 0600
// file), sees it with its labels in the API, and removes it with `forgeapi
// runner remove` and a remove token; a bad token is refused.
func TestCLIRunnerRegisterAndRemove(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	owner := env.User("octo")
	env.Repo(owner, "hello")
	c := env.Client(env.Token(owner, "repo"))
	config := filepath.Join(t.TempDir(), "runner.json")
	if code, _, errOut := cliRun(t, "runner", "register", "--config", config, "--url", env.URL, "--token", "NOPE"); code == 0 ||
		!strings.Contains(errOut, "401") {
		t.Fatalf("a bad token: exit %d, %q", code, errOut)
	}
	reg, _, err := c.Actions.CreateRegistrationToken(apptest.Ctx(), "octo", "hello")
	apptest.Must(t, "registration token", err)
	out := cliOK(t, "runner", "register", "--config", config, "--url", env.URL+"/api/v3", "--token", reg.GetToken(),
		"--name", "cli-box", "--labels", "gpu, cuda")
	if !strings.Contains(out, "registered runner cli-box") {
		t.Fatalf("register: %q", out)
	}
	info, err := os.Stat(config)
	apptest.Must(t, "stat config", err)
	if info.Mode().Perm() != 0o600 {
		t.Fatalf("config mode %v", info.Mode())
	}
	list, _, err := c.Actions.ListRunners(apptest.Ctx(), "octo", "hello", nil)
	apptest.Must(t, "list runners", err)
	if list.TotalCount != 1 || list.Runners[0].GetName() != "cli-box" {
		t.Fatalf("runners %+v", list)
	}
	var labels []string
	for _, l := range list.Runners[0].Labels {
		labels = append(labels, l.GetName())
	}
	if got := strings.Join(labels, ","); got != "self-hosted,Linux,X64,gpu,cuda" && !strings.HasSuffix(got, ",gpu,cuda") {
		t.Fatalf("labels %s", got)
	}
	rm, _, err := c.Actions.CreateRemoveToken(apptest.Ctx(), "octo", "hello")
	apptest.Must(t, "remove token", err)
	cliOK(t, "runner", "remove", "--config", config, "--token", rm.GetToken())
	list, _, err = c.Actions.ListRunners(apptest.Ctx(), "octo", "hello", nil)
	apptest.Must(t, "list runners", err)
	if list.TotalCount != 0 {
		t.Fatalf("%d runners after remove", list.TotalCount)
	}
	if _, err := os.Stat(config); !os.IsNotExist(err) {
		t.Fatalf("config after remove: %v", err)
	}
}

// TestCLIRunnerJITConfigRunsOneJob generates a just-in-time runner's
// configuration (REST, 201 with the runner, ephemeral and offline) and
// runs `forgeapi runner run --jitconfig`: it takes one job of its labels,
// runs it to success and exits, the runner is gone from the list, the
// second job stays queued, and the same configuration again is refused.
func TestCLIRunnerJITConfigRunsOneJob(t *testing.T) {
	apptest.SkipJobsUnderRace(t)
	t.Parallel()
	env := apptest.Start(t)
	owner := env.User("octo")
	env.Repo(owner, "hello")
	token := env.Token(owner, "repo", "workflow")
	c := env.Client(token)
	bad := github.CreateJITConfigRequest{Name: "jit-box", RunnerGroupID: 1}
	if _, resp, err := c.Actions.CreateRepoJITConfig(apptest.Ctx(), "octo", "hello", bad); resp == nil || resp.StatusCode != 422 {
		t.Fatalf("no labels: %v", err)
	}
	req := github.CreateJITConfigRequest{Name: "jit-box", RunnerGroupID: 1, Labels: []string{"self-hosted", "Linux", "jit"}}
	jit, resp, err := c.Actions.CreateRepoJITConfig(apptest.Ctx(), "octo", "hello", req)
	apptest.Must(t, "generate-jitconfig", err)
	if resp.StatusCode != 201 || jit.GetEncodedJITConfig() == "" || !jit.Runner.GetEphemeral() || jit.Runner.GetName() != "jit-box" ||
		jit.Runner.GetStatus() != "offline" {
		t.Fatalf("jitconfig %d %+v", resp.StatusCode, jit.Runner)
	}
	if _, resp, _ := c.Actions.CreateRepoJITConfig(apptest.Ctx(), "octo", "hello", req); resp == nil || resp.StatusCode != 409 {
		t.Fatalf("the same name again: %v", resp)
	}
	work := apptest.WorkTree(t, nil)
	apptest.Git(t, work, "remote", "add", "origin", env.GitURL("octo", "hello", "octo", token))
	job := func(n string) string {
		return "  j" + n + ":\n    runs-on: [self-hosted, jit]\n    steps:\n      - run: echo job " + n + "\n"
	}
	apptest.Commit(t, work, "ci", map[string]string{".github/workflows/ci.yml": "on: push\njobs:\n" + job("1") + job("2")})
	apptest.Git(t, work, "push", "-q", "origin", "HEAD:refs/heads/main")
	dir := t.TempDir()
	done := make(chan string, 1)
	go func() {
		code, _, errOut := cliRun(t, "runner", "run", "--jitconfig", jit.GetEncodedJITConfig(), "--work", dir)
		done <- fmt.Sprintf("%d %s", code, errOut)
	}()
	select {
	case got := <-done:
		if !strings.HasPrefix(got, "0 ") {
			t.Fatalf("runner run --jitconfig: %s", got)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the just-in-time runner did not exit after its job")
	}
	runs, _, err := c.Actions.ListRepositoryWorkflowRuns(apptest.Ctx(), "octo", "hello", nil)
	apptest.Must(t, "list runs", err)
	if len(runs.WorkflowRuns) != 1 {
		t.Fatalf("%d runs", len(runs.WorkflowRuns))
	}
	jobs, _, err := c.Actions.ListWorkflowJobs(apptest.Ctx(), "octo", "hello", runs.WorkflowRuns[0].GetID(), nil)
	apptest.Must(t, "list jobs", err)
	var ran, queued int
	for _, j := range jobs.Jobs {
		switch {
		case j.GetConclusion() == "success" && j.GetRunnerName() == "jit-box":
			ran++
		case j.GetStatus() == "queued":
			queued++
		}
	}
	if ran != 1 || queued != 1 {
		t.Fatalf("%d jobs ran on the runner, %d queued", ran, queued)
	}
	list, _, err := c.Actions.ListRunners(apptest.Ctx(), "octo", "hello", nil)
	apptest.Must(t, "list runners", err)
	if list.TotalCount != 0 {
		t.Fatalf("%d runners after the just-in-time runner's job", list.TotalCount)
	}
	if code, _, errOut := cliRun(t, "runner", "run", "--jitconfig", jit.GetEncodedJITConfig(), "--work", dir); code == 0 ||
		!strings.Contains(errOut, "does not know this runner") {
		t.Fatalf("the configuration used twice: exit %d, %q", code, errOut)
	}
}

package actions_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/testwait"
	"forgeapi/internal/webhooks"
)

// gated fails unless the repository variable PASS is "yes".
const gated = `name: Gate
on: [pull_request]
jobs:
  verify:
    runs-on: ubuntu-latest
    steps:
      - run: test "${{ vars.PASS }}" = yes
`

// TestRunsAreChecks opens a pull request whose workflow fails: its job is
// a failing check run of the github-actions app (gh pr checks shows it,
// the commit's check runs list it with the job's page as details), the
// workflow_run payload names the run's check suite, and a protected
// branch requiring the job's name refuses the merge until a rerun passes.
func TestRunsAreChecks(t *testing.T) {
	t.Parallel()
	apptest.SkipJobsUnderRace(t)
	env := apptest.Start(t, withRunner, apptest.WithTLS(), apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	owner := env.User("octo", apptest.UserOpts{Email: "octo@example.com"})
	env.Repo(owner, "hello")
	token := env.Token(owner, "repo", "workflow", "read:org", "admin:repo_hook")
	c := env.Client(token)
	ctx := apptest.Ctx()
	rc := apptest.NewReceiver(t, "s")
	_, _, err := c.Repositories.CreateHook(ctx, "octo", "hello", &github.Hook{Events: []string{"workflow_run", "check_run", "check_suite"},
		Config: &github.HookConfig{URL: github.Ptr(rc.URL), ContentType: github.Ptr("json"), Secret: github.Ptr("s")}})
	apptest.Must(t, "create hook", err)
	_, _, err = c.Repositories.CreateFile(ctx, "octo", "hello", "README.md", &github.RepositoryContentFileOptions{
		Message: github.Ptr("readme"), Branch: github.Ptr("main"), Content: []byte("hello\n")})
	apptest.Must(t, "first commit", err)
	_, _, err = c.Repositories.UpdateBranchProtection(ctx, "octo", "hello", "main", &github.ProtectionRequest{
		EnforceAdmins: true, RequiredStatusChecks: &github.RequiredStatusChecks{Strict: false, Contexts: &[]string{"verify"}}})
	apptest.Must(t, "protect main", err)
	ref, _, err := c.Git.GetRef(ctx, "octo", "hello", "refs/heads/main")
	apptest.Must(t, "main", err)
	_, _, err = c.Git.CreateRef(ctx, "octo", "hello", github.CreateRef{Ref: "refs/heads/topic", SHA: ref.GetObject().GetSHA()})
	apptest.Must(t, "branch", err)
	_, _, err = c.Repositories.CreateFile(ctx, "octo", "hello", ".github/workflows/gate.yml", &github.RepositoryContentFileOptions{
		Message: github.Ptr("add the gate"), Branch: github.Ptr("topic"), Content: []byte(gated)})
	apptest.Must(t, "add the workflow", err)
	pr, _, err := c.PullRequests.Create(ctx, "octo", "hello", github.CreatePullRequest{Title: github.Ptr("gate"),
		Head: "topic", Base: "main"})
	apptest.Must(t, "open the pull request", err)
	sha := pr.GetHead().GetSHA()

	var run *github.WorkflowRun
	testwait.For(t, "the run failed", func() error {
		runs, _, err := c.Actions.ListRepositoryWorkflowRuns(ctx, "octo", "hello", nil)
		if err != nil || len(runs.WorkflowRuns) == 0 || runs.WorkflowRuns[0].GetStatus() != "completed" {
			return fmt.Errorf("runs %v %v", runs, err)
		}
		run = runs.WorkflowRuns[0]
		return nil
	})
	if run.GetConclusion() != "failure" || run.GetCheckSuiteID() == 0 {
		t.Fatalf("run: %s suite %d", run.GetConclusion(), run.GetCheckSuiteID())
	}
	apptest.Step(t, "the job is a failing check run of github-actions on the head", func(t *testing.T) {
		list, _, err := c.Checks.ListCheckRunsForRef(ctx, "octo", "hello", sha, nil)
		apptest.Must(t, "check runs", err)
		if list.GetTotal() != 1 {
			t.Fatalf("check runs: %d", list.GetTotal())
		}
		cr := list.CheckRuns[0]
		jobs, _, err := c.Actions.ListWorkflowJobs(ctx, "octo", "hello", run.GetID(), nil)
		apptest.Must(t, "jobs", err)
		j := jobs.Jobs[0]
		if cr.GetName() != "verify" || cr.GetStatus() != "completed" || cr.GetConclusion() != "failure" ||
			cr.GetApp().GetSlug() != "github-actions" || cr.GetCheckSuite().GetID() != run.GetCheckSuiteID() ||
			cr.GetDetailsURL() != j.GetHTMLURL() || !strings.HasSuffix(j.GetCheckRunURL(), fmt.Sprintf("/check-runs/%d", cr.GetID())) {
			t.Fatalf("check run %s %s %s app %s suite %d (run's %d) details %s (job %s) check_run_url %s", cr.GetName(),
				cr.GetStatus(), cr.GetConclusion(), cr.GetApp().GetSlug(), cr.GetCheckSuite().GetID(), run.GetCheckSuiteID(),
				cr.GetDetailsURL(), j.GetHTMLURL(), j.GetCheckRunURL())
		}
		suite, _, err := c.Checks.GetCheckSuite(ctx, "octo", "hello", run.GetCheckSuiteID())
		apptest.Must(t, "suite", err)
		if suite.GetConclusion() != "failure" || suite.GetHeadSHA() != sha {
			t.Fatalf("suite %s %s", suite.GetConclusion(), suite.GetHeadSHA())
		}
	})
	apptest.Step(t, "workflow_run carries the run's check suite", func(t *testing.T) {
		rc.WaitFor(t, describeActions, "run requested", "run in_progress", "run completed")
		var d apptest.Delivery
		for _, x := range rc.Deliveries() {
			if x.Event == "workflow_run" && describeActions(x) == "run completed" {
				d = x
			}
		}
		var p struct {
			Run struct {
				CheckSuiteID  int64  `json:"check_suite_id"`
				CheckSuiteURL string `json:"check_suite_url"`
			} `json:"workflow_run"`
		}
		apptest.Must(t, "payload", json.Unmarshal(d.Body, &p))
		if p.Run.CheckSuiteID != run.GetCheckSuiteID() || !strings.HasSuffix(p.Run.CheckSuiteURL, fmt.Sprintf("/check-suites/%d", run.GetCheckSuiteID())) {
			t.Fatalf("payload suite %d %s, run's %d", p.Run.CheckSuiteID, p.Run.CheckSuiteURL, run.GetCheckSuiteID())
		}
	})
	apptest.Step(t, "check_run and check_suite events of github-actions", func(t *testing.T) {
		describe := func(d apptest.Delivery) string {
			var p struct {
				Action string `json:"action"`
				Run    struct {
					Name string `json:"name"`
					App  struct {
						Slug string `json:"slug"`
					} `json:"app"`
				} `json:"check_run"`
				Suite struct {
					Conclusion string `json:"conclusion"`
					App        struct {
						Slug string `json:"slug"`
					} `json:"app"`
				} `json:"check_suite"`
			}
			_ = json.Unmarshal(d.Body, &p)
			switch d.Event {
			case "check_run":
				return "check_run " + p.Run.Name + " " + p.Action + " " + p.Run.App.Slug
			case "check_suite":
				return "check_suite " + p.Action + " " + p.Suite.Conclusion + " " + p.Suite.App.Slug
			}
			return d.Event
		}
		rc.WaitFor(t, describe, "check_run verify created github-actions", "check_run verify completed github-actions",
			"check_suite completed failure github-actions")
	})
	gh := apptest.GH(t, env, token, true)
	apptest.Step(t, "gh pr checks shows the failing check", func(t *testing.T) {
		out, code := ghChecks(t, env, gh, token, pr.GetNumber())
		if code != 1 || !regexp.MustCompile(`(?m)^verify\s+fail\s`).MatchString(out) {
			t.Fatalf("gh pr checks: exit %d\n%s", code, out)
		}
	})
	apptest.Step(t, "the protected branch refuses the merge", func(t *testing.T) {
		_, resp, err := c.PullRequests.Merge(ctx, "octo", "hello", pr.GetNumber(), "", nil)
		if err == nil || resp == nil || resp.StatusCode != http.StatusMethodNotAllowed {
			t.Fatalf("merge with a failing check: %v %v", resp, err)
		}
	})
	_, err = c.Actions.CreateRepoVariable(ctx, "octo", "hello", github.ActionsCreateVariableRequest{Name: "PASS", Value: "yes"})
	apptest.Must(t, "set PASS", err)
	_, err = c.Actions.RerunFailedJobsByID(ctx, "octo", "hello", run.GetID())
	apptest.Must(t, "rerun", err)
	testwait.For(t, "attempt 2 passed", func() error {
		r, _, err := c.Actions.GetWorkflowRunByID(ctx, "octo", "hello", run.GetID())
		if err != nil || r.GetRunAttempt() != 2 || r.GetStatus() != "completed" {
			return fmt.Errorf("run: attempt %d %s %v", r.GetRunAttempt(), r.GetStatus(), err)
		}
		if r.GetConclusion() != "success" || r.GetCheckSuiteID() != run.GetCheckSuiteID() {
			t.Fatalf("attempt 2: %s suite %d", r.GetConclusion(), r.GetCheckSuiteID())
		}
		return nil
	})
	apptest.Step(t, "the rerun's check run is the latest, and passing", func(t *testing.T) {
		list, _, err := c.Checks.ListCheckRunsForRef(ctx, "octo", "hello", sha, &github.ListCheckRunsOptions{Filter: github.Ptr("latest")})
		apptest.Must(t, "check runs", err)
		if list.GetTotal() != 1 || list.CheckRuns[0].GetConclusion() != "success" {
			t.Fatalf("latest check runs: %d %v", list.GetTotal(), list.CheckRuns)
		}
		out, code := ghChecks(t, env, gh, token, pr.GetNumber())
		if code != 0 || !regexp.MustCompile(`(?m)^verify\s+pass\s`).MatchString(out) {
			t.Fatalf("gh pr checks: exit %d\n%s", code, out)
		}
	})
	apptest.Step(t, "the merge goes through", func(t *testing.T) {
		_, _, err := c.PullRequests.Merge(ctx, "octo", "hello", pr.GetNumber(), "", nil)
		apptest.Must(t, "merge", err)
	})
}

// ghChecks runs gh pr checks on the pull request and returns its output
// and exit code (1 when a check failed, 8 while one is pending).
func ghChecks(t *testing.T, env *apptest.Env, gh *apptest.GHCLI, token string, number int) (string, int) {
	t.Helper()
	path, err := exec.LookPath("gh")
	apptest.Must(t, "gh", err)
	cmd := exec.Command(path, "pr", "checks", strconv.Itoa(number), "-R", gh.Host+"/octo/hello")
	cmd.Env = []string{"HOME=" + gh.Dir, "GH_CONFIG_DIR=" + filepath.Join(gh.Dir, "gh"), "GH_PROMPT_DISABLED=1",
		"GH_NO_UPDATE_NOTIFIER=1", "NO_COLOR=1", "GH_HOST=" + gh.Host, "GH_ENTERPRISE_TOKEN=" + token,
		"SSL_CERT_FILE=" + env.Main.CAFile(), "PATH=" + os.Getenv("PATH")}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("gh pr checks: %v", err)
	}
	return string(out), cmd.ProcessState.ExitCode()
}

// annotationsOf are the annotations of the job's check run, checked
// against its output.annotations_count.
func annotationsOf(t *testing.T, f *fixture, j *github.WorkflowJob) []*github.CheckRunAnnotation {
	t.Helper()
	u := j.GetCheckRunURL()
	id, err := strconv.ParseInt(u[strings.LastIndex(u, "/")+1:], 10, 64)
	apptest.Must(t, "check run id of "+u, err)
	list, _, err := f.c.Checks.ListCheckRunAnnotations(apptest.Ctx(), "octo", "hello", id, nil)
	apptest.Must(t, "annotations", err)
	cr, _, err := f.c.Checks.GetCheckRun(apptest.Ctx(), "octo", "hello", id)
	apptest.Must(t, "check run", err)
	if cr.GetOutput().GetAnnotationsCount() != len(list) {
		t.Fatalf("annotations_count %d, %d listed", cr.GetOutput().GetAnnotationsCount(), len(list))
	}
	return list
}

// annotationLine is an annotation as "level path:line:col-col title: message".
func annotationLine(a *github.CheckRunAnnotation) string {
	s := fmt.Sprintf("%s %s:%d-%d", a.GetAnnotationLevel(), a.GetPath(), a.GetStartLine(), a.GetEndLine())
	if a.StartColumn != nil {
		s += fmt.Sprintf(":%d-%d", a.GetStartColumn(), a.GetEndColumn())
	}
	return s + " " + a.GetTitle() + ": " + a.GetMessage()
}

// TestWorkflowCommandsAreCheckRunAnnotations: the ::error::, ::warning::
// and ::notice:: workflow commands a step prints become annotations of
// the job's check run (failure, warning, notice), with their file, lines,
// columns and title, counted in output.annotations_count; a secret in a
// message is masked; a job without commands has none.
func TestWorkflowCommandsAreCheckRunAnnotations(t *testing.T) {
	t.Parallel()
	apptest.SkipJobsUnderRace(t)
	f := start(t)
	setSecretAndVariable(t, f.c, "octo", "hello")
	f.push(t, map[string]string{".github/workflows/lint.yml": `on: push
jobs:
  lint:
    runs-on: ubuntu-latest
    steps:
      - run: |
          echo "::error file=main.go,line=3,col=5,endColumn=9,title=Bad thing::it broke"
          echo "::warning file=README.md,line=7,endLine=9::careful with ${{ secrets.DEPLOY_KEY }}"
          echo "::notice::just so you know"
          echo "plain output"
  quiet:
    runs-on: ubuntu-latest
    steps:
      - run: echo nothing to say
`})
	run := f.completedRun(t, "lint.yml", 1)
	jobs := jobsByName(t, f, run.GetID(), "")
	var got []string
	for _, a := range annotationsOf(t, f, jobs["lint"]) {
		got = append(got, annotationLine(a))
	}
	want := []string{"failure main.go:3-3:5-9 Bad thing: it broke", "warning README.md:7-9 : careful with ***",
		"notice .github:1-1 : just so you know"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("annotations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if list := annotationsOf(t, f, jobs["quiet"]); len(list) != 0 {
		t.Fatalf("quiet job's annotations %v", list)
	}
}

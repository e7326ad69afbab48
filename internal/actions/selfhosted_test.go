package actions_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/actions/runnerclient"
	"forgeapi/internal/apptest"
	"forgeapi/internal/testwait"
)

// TestSelfHostedRunnersOnlyForSelectedRepositories: an organization lets
// only selected repositories use its self-hosted runners: its runner
// passes over the job of a repository not selected (pushed first) and
// runs the selected one's; once the other is added to the selection
// (PUT .../repositories/{id}), its job runs too.
func TestSelfHostedRunnersOnlyForSelectedRepositories(t *testing.T) {
	apptest.SkipJobsUnderRace(t)
	t.Parallel()
	env := apptest.Start(t, shortLease)
	owner := env.User("octo")
	org := env.Org("acme", owner)
	env.Repo(org, "denied", apptest.RepoOpts{Private: true})
	allowed := env.Repo(org, "allowed", apptest.RepoOpts{Private: true})
	token := env.Token(owner, "repo", "workflow", "admin:org")
	c := env.Client(token)
	do := func(method, path, body string, want int) string {
		t.Helper()
		resp, b := env.Do(method, path, token, strings.NewReader(body))
		if resp.StatusCode != want {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
		}
		return string(b)
	}
	do("PUT", "/orgs/acme/actions/permissions/self-hosted-runners", `{"enabled_repositories":"selected"}`, 204)
	do("PUT", "/orgs/acme/actions/permissions/self-hosted-runners", `{"enabled_repositories":"some"}`, 422)
	do("PUT", "/orgs/acme/actions/permissions/self-hosted-runners/repositories",
		fmt.Sprintf(`{"selected_repository_ids":[%d]}`, allowed.ID), 204)
	if got := do("GET", "/orgs/acme/actions/permissions/self-hosted-runners", "", 200); !strings.Contains(got, `"selected_repositories_url"`) {
		t.Fatalf("settings %s", got)
	}
	if got := do("GET", "/orgs/acme/actions/permissions/self-hosted-runners/repositories", "", 200); !strings.Contains(got, `"total_count":1`) {
		t.Fatalf("selection %s", got)
	}
	wf := "on: push\njobs:\n  go:\n    runs-on: self-hosted\n    steps:\n      - run: echo go\n"
	for _, repo := range []string{"denied", "allowed"} {
		work := apptest.WorkTree(t, nil)
		apptest.Git(t, work, "remote", "add", "origin", env.GitURL("acme", repo, "octo", token))
		apptest.Commit(t, work, "ci", map[string]string{".github/workflows/ci.yml": wf})
		apptest.Git(t, work, "push", "-q", "origin", "HEAD:refs/heads/main")
	}
	jobOf := func(repo string) (*github.WorkflowJob, error) {
		runs, _, err := c.Actions.ListRepositoryWorkflowRuns(apptest.Ctx(), "acme", repo, nil)
		if err != nil || len(runs.WorkflowRuns) != 1 {
			return nil, fmt.Errorf("runs: %v", err)
		}
		jobs, _, err := c.Actions.ListWorkflowJobs(apptest.Ctx(), "acme", repo, runs.WorkflowRuns[0].GetID(), nil)
		if err != nil || len(jobs.Jobs) != 1 {
			return nil, fmt.Errorf("jobs: %v", err)
		}
		return jobs.Jobs[0], nil
	}
	for _, repo := range []string{"denied", "allowed"} {
		testwait.For(t, "the job of "+repo+" queued", func() error { _, err := jobOf(repo); return err })
	}
	runOrgRunner(t, env, c, "acme", "box", "")
	succeeded := func(repo string) func() error {
		return func() error {
			j, err := jobOf(repo)
			if err == nil && j.GetConclusion() != "success" {
				err = fmt.Errorf("job %s %s", j.GetStatus(), j.GetConclusion())
			}
			return err
		}
	}
	testwait.For(t, "the selected repository's job succeeded", succeeded("allowed"))
	if j, _ := jobOf("denied"); j.GetStatus() != "queued" {
		t.Fatalf("the job of the repository not selected: %s on %s", j.GetStatus(), j.GetRunnerName())
	}
	denied, _, err := c.Repositories.Get(apptest.Ctx(), "acme", "denied")
	apptest.Must(t, "get repo", err)
	do("PUT", fmt.Sprintf("/orgs/acme/actions/permissions/self-hosted-runners/repositories/%d", denied.GetID()), "", 204)
	testwait.For(t, "the newly selected repository's job succeeded", succeeded("denied"))
}

// TestEnterpriseJITRunnerRunsAnOrganizationsJob: an enterprise owner's
// POST /enterprises/{enterprise}/actions/runners/generate-jitconfig makes
// an ephemeral runner of the enterprise (201); run from its encoded
// configuration, it takes the job of a repository of one of the
// enterprise's organizations, runs it to success and stops. A repository
// of an organization outside the enterprise keeps its job queued.
func TestEnterpriseJITRunnerRunsAnOrganizationsJob(t *testing.T) {
	apptest.SkipJobsUnderRace(t)
	t.Parallel()
	env := apptest.Start(t, shortLease)
	owner := env.User("octo")
	acme, other := env.Org("acme", owner), env.Org("other", owner)
	env.Enterprise("corp", owner, acme)
	env.Repo(other, "outside", apptest.RepoOpts{Private: true})
	env.Repo(acme, "app", apptest.RepoOpts{Private: true})
	token := env.Token(owner, "repo", "workflow", "admin:org", "admin:enterprise")
	c := env.Client(token)
	wf := "on: push\njobs:\n  go:\n    runs-on: [self-hosted, corp]\n    steps:\n      - run: echo on the enterprise runner\n"
	for _, at := range [][2]string{{"other", "outside"}, {"acme", "app"}} {
		work := apptest.WorkTree(t, nil)
		apptest.Git(t, work, "remote", "add", "origin", env.GitURL(at[0], at[1], "octo", token))
		apptest.Commit(t, work, "ci", map[string]string{".github/workflows/ci.yml": wf})
		apptest.Git(t, work, "push", "-q", "origin", "HEAD:refs/heads/main")
	}
	resp, body := env.Do("POST", "/enterprises/corp/actions/runners/generate-jitconfig", token,
		strings.NewReader(`{"name":"corp-1","runner_group_id":1,"labels":["self-hosted","corp"]}`))
	if resp.StatusCode != 201 {
		t.Fatalf("generate-jitconfig: %d %s", resp.StatusCode, body)
	}
	var jit struct {
		Runner  struct{ Ephemeral bool }
		Encoded string `json:"encoded_jit_config"`
	}
	apptest.Must(t, "decode", json.Unmarshal(body, &jit))
	cfg, _, err := runnerclient.FromJIT(jit.Encoded)
	apptest.Must(t, "jit config", err)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	done := make(chan error, 1)
	go func() {
		done <- (&runnerclient.Runner{Config: cfg, Dir: t.TempDir(), Wait: 2 * time.Second, Logger: quiet}).Run(ctx)
	}()
	jobOf := func(owner, repo string) (*github.WorkflowJob, error) {
		runs, _, err := c.Actions.ListRepositoryWorkflowRuns(apptest.Ctx(), owner, repo, nil)
		if err != nil || len(runs.WorkflowRuns) != 1 {
			return nil, fmt.Errorf("runs: %v", err)
		}
		jobs, _, err := c.Actions.ListWorkflowJobs(apptest.Ctx(), owner, repo, runs.WorkflowRuns[0].GetID(), nil)
		if err != nil || len(jobs.Jobs) != 1 {
			return nil, fmt.Errorf("jobs: %v", err)
		}
		return jobs.Jobs[0], nil
	}
	testwait.For(t, "the enterprise organization's job succeeded", func() error {
		j, err := jobOf("acme", "app")
		if err == nil && (j.GetConclusion() != "success" || j.GetRunnerName() != "corp-1") {
			err = fmt.Errorf("job %s %s on %s", j.GetStatus(), j.GetConclusion(), j.GetRunnerName())
		}
		return err
	})
	if err := <-done; err != nil {
		t.Fatalf("the just-in-time runner: %v", err)
	}
	if j, err := jobOf("other", "outside"); err != nil || j.GetStatus() != "queued" {
		t.Fatalf("the outside organization's job: %v %v", j.GetStatus(), err)
	}
}

package actions_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// TestJobsDeployToTheirEnvironments: a job that names an environment
// gets a deployment of the run's commit to it (created with the
// environment when the repository has none), in_progress while the job
// runs and success after it, and the environment's variables; an
// environment whose branch policy does not let the run's branch deploy
// fails its job with the platform's message and makes no deployment,
// while the run's other jobs run.
func TestJobsDeployToTheirEnvironments(t *testing.T) {
	apptest.SkipJobsUnderRace(t)
	t.Parallel()
	f := start(t)
	ctx := apptest.Ctx()
	_, _, err := f.c.Repositories.CreateUpdateEnvironment(ctx, "octo", "hello", "production", &github.CreateUpdateEnvironment{
		DeploymentBranchPolicy: &github.BranchPolicy{ProtectedBranches: github.Ptr(false), CustomBranchPolicies: github.Ptr(true)}})
	apptest.Must(t, "production, for release branches", err)
	_, _, err = f.c.Repositories.CreateDeploymentBranchPolicy(ctx, "octo", "hello", "production", github.CreateDeploymentBranchPolicyRequest{Name: "release/*"})
	apptest.Must(t, "the release/* policy", err)
	_, _, err = f.c.Repositories.CreateUpdateEnvironment(ctx, "octo", "hello", "staging", &github.CreateUpdateEnvironment{})
	apptest.Must(t, "staging", err)
	_, err = f.c.Actions.CreateEnvVariable(ctx, "octo", "hello", "staging", github.ActionsCreateVariableRequest{Name: "TARGET", Value: "staging-host"})
	apptest.Must(t, "staging's variable", err)

	sha := f.push(t, map[string]string{".github/workflows/deploy.yml": `name: Deploy
on: push
jobs:
  staging:
    runs-on: ubuntu-latest
    environment: staging
    steps:
      - run: echo "deploying to $TARGET"
        env:
          TARGET: ${{ vars.TARGET }}
  production:
    runs-on: ubuntu-latest
    environment:
      name: production
      url: https://hello.example
    steps:
      - run: echo never
  review:
    runs-on: ubuntu-latest
    environment: review-apps
    steps:
      - run: echo review
`})
	run := f.completedRun(t, "deploy.yml", 1)
	jobs := jobsByName(t, f, run.GetID(), "")
	if run.GetConclusion() != "failure" || jobs["staging"].GetConclusion() != "success" || jobs["production"].GetConclusion() != "failure" ||
		jobs["review"].GetConclusion() != "success" {
		t.Fatalf("run %s; jobs staging %s, production %s, review %s", run.GetConclusion(), jobs["staging"].GetConclusion(),
			jobs["production"].GetConclusion(), jobs["review"].GetConclusion())
	}
	if log := f.jobLog(t, jobs["production"].GetID()); !strings.Contains(log, `Branch "main" is not allowed to deploy to production due to environment protection rules.`) {
		t.Fatalf("production's log:\n%s", log)
	}
	if log := f.jobLog(t, jobs["staging"].GetID()); !strings.Contains(log, "deploying to staging-host") {
		t.Fatalf("staging's log lacks the environment's variable:\n%s", log)
	}
	for env, want := range map[string]int{"staging": 1, "review-apps": 1, "production": 0} {
		list, _, err := f.c.Repositories.ListDeployments(ctx, "octo", "hello", &github.DeploymentsListOptions{Environment: env})
		apptest.Must(t, "deployments of "+env, err)
		if len(list) != want {
			t.Fatalf("%d deployments to %s, want %d", len(list), env, want)
		}
		if want == 0 {
			continue
		}
		d := list[0]
		if d.GetSHA() != sha || d.GetRef() != "main" || d.GetCreator().GetLogin() != "octo" {
			t.Fatalf("deployment to %s: %+v", env, d)
		}
		statuses, _, err := f.c.Repositories.ListDeploymentStatuses(ctx, "octo", "hello", d.GetID(), nil)
		apptest.Must(t, "statuses", err)
		if len(statuses) != 2 || statuses[0].GetState() != "success" || statuses[1].GetState() != "in_progress" ||
			!strings.HasSuffix(statuses[0].GetLogURL(), "/octo/hello/actions/runs/"+strconv.FormatInt(run.GetID(), 10)) {
			t.Fatalf("statuses of the deployment to %s: %+v", env, statuses)
		}
	}
	if _, _, err := f.c.Repositories.GetEnvironment(ctx, "octo", "hello", "review-apps"); err != nil {
		t.Fatalf("the environment a job named was not made: %v", err)
	}
}

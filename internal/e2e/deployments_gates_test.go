package e2e_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/google/go-github/v92/github"

	"forgeapi/internal/accounts"
	"forgeapi/internal/app"
	"forgeapi/internal/apptest"
	"forgeapi/internal/repos"
	"forgeapi/internal/testwait"
	"forgeapi/internal/webhooks"
)

// gated is a server with the built-in runner (polling often, for the
// wait timer's release), a moving clock, an organization acme whose
// public repository svc octo pushes to, and a reviewer rev.
type gated struct {
	env       *apptest.Env
	offset    *atomic.Int64
	octo, rev *accounts.Account
	org       *accounts.Account
	repo      *repos.Repository
	octoC     *github.Client
	revC      *github.Client
	octoToken string
	work      string
}

func startGated(t *testing.T) *gated {
	t.Helper()
	if raceDetector {
		t.Skip("act v0.2.89's host executor races on its pty writer (host_environment.go:342)")
	}
	g := &gated{offset: &atomic.Int64{}}
	clock := func() time.Time { return time.Now().Add(time.Duration(g.offset.Load())) }
	g.env = apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}), apptest.WithClock(clock),
		func(c *app.Config) {
			c.BuiltinRunner = true
			c.ActionsRunner.PollInterval = 100 * time.Millisecond
		})
	g.octo = g.env.User("octo", apptest.UserOpts{Email: "octo@example.com"})
	g.rev = g.env.User("rev")
	g.org = g.env.Org("acme", g.octo, g.rev)
	g.repo = g.env.Repo(g.org, "svc")
	g.octoToken = g.env.Token(g.octo, "repo", "admin:repo_hook", "workflow")
	g.octoC, g.revC = g.env.Client(g.octoToken), g.env.Client(g.env.Token(g.rev, "repo"))
	g.work = apptest.WorkTree(t, nil)
	apptest.Git(t, g.work, "remote", "add", "origin", g.env.GitURL("acme", "svc", "octo", g.octoToken))
	return g
}

// push commits the files and pushes main.
func (g *gated) push(t *testing.T, files map[string]string) {
	t.Helper()
	apptest.Commit(t, g.work, "change", files)
	apptest.Git(t, g.work, "push", "-q", "origin", "HEAD:refs/heads/main")
}

// runIn waits for the repository's latest run to have the status and
// returns it.
func (g *gated) runIn(t *testing.T, status string) *github.WorkflowRun {
	t.Helper()
	var run *github.WorkflowRun
	testwait.For(t, "a run "+status, func() error {
		runs, _, err := g.octoC.Actions.ListRepositoryWorkflowRuns(apptest.Ctx(), "acme", "svc", nil)
		if err != nil {
			return err
		}
		if len(runs.WorkflowRuns) == 0 {
			return fmt.Errorf("no run")
		}
		run = runs.WorkflowRuns[0]
		if run.GetStatus() != status {
			return fmt.Errorf("run status %s", run.GetStatus())
		}
		return nil
	})
	return run
}

// jobs returns the run's jobs by name.
func (g *gated) jobs(t *testing.T, runID int64) map[string]*github.WorkflowJob {
	t.Helper()
	list, _, err := g.octoC.Actions.ListWorkflowJobs(apptest.Ctx(), "acme", "svc", runID, nil)
	apptest.Must(t, "jobs", err)
	out := map[string]*github.WorkflowJob{}
	for _, j := range list.Jobs {
		out[j.GetName()] = j
	}
	return out
}

// jobLog reads a job's log through its redirect.
func (g *gated) jobLog(t *testing.T, jobID int64) string {
	t.Helper()
	u, _, err := g.octoC.Actions.GetWorkflowJobLogs(apptest.Ctx(), "acme", "svc", jobID, 0)
	apptest.Must(t, "job log URL", err)
	resp, err := http.Get(u.String())
	apptest.Must(t, "job log", err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	apptest.Must(t, "read the job log", err)
	return string(b)
}

// statesOf lists the states of the latest deployment to the environment,
// newest first.
func (g *gated) statesOf(t *testing.T, env string) []string {
	t.Helper()
	ctx := apptest.Ctx()
	list, _, err := g.octoC.Repositories.ListDeployments(ctx, "acme", "svc", &github.DeploymentsListOptions{Environment: env})
	apptest.Must(t, "deployments of "+env, err)
	if len(list) != 1 {
		t.Fatalf("%d deployments to %s", len(list), env)
	}
	statuses, _, err := g.octoC.Repositories.ListDeploymentStatuses(ctx, "acme", "svc", list[0].GetID(), nil)
	apptest.Must(t, "statuses", err)
	var out []string
	for _, s := range statuses {
		out = append(out, s.GetState())
	}
	return out
}

// reviewEvents names the deployment_review and workflow_job waiting
// deliveries.
func reviewEvents(d apptest.Delivery) string {
	switch d.Event {
	case "deployment_review":
		return apptest.EventAction(d)
	case "workflow_job":
		if a := apptest.EventAction(d); a == "workflow_job waiting" {
			return a
		}
	}
	return ""
}

const reviewedWorkflow = `name: Release
on: push
jobs:
  prod:
    runs-on: ubuntu-latest
    environment: production
    steps:
      - run: echo shipped to production
  stage:
    runs-on: ubuntu-latest
    environment: staging
    steps:
      - run: echo never
`

// TestRequiredReviewersHoldJobs: jobs whose environments have required
// reviewers (users; a team whose member reviews) wait (the run and the jobs are waiting, the pending
// deployments list them with their reviewers, deployment_review
// requested reaches the hook); under prevent_self_review the run's own
// actor cannot approve (422) though a reviewer; the other reviewer
// rejects staging (its job fails, its deployment gets a failure status)
// and approves production, whose job then runs and deploys; the run's
// approvals list both reviews.
func TestRequiredReviewersHoldJobs(t *testing.T) {
	t.Parallel()
	g := startGated(t)
	ctx := apptest.Ctx()
	rc := apptest.NewReceiver(t, "s")
	_, _, err := g.octoC.Repositories.CreateHook(ctx, "acme", "svc", &github.Hook{Events: []string{"deployment_review", "workflow_job"},
		Config: &github.HookConfig{URL: github.Ptr(rc.URL), ContentType: github.Ptr("json"), Secret: github.Ptr("s")}})
	apptest.Must(t, "hook", err)
	users := func(list ...*accounts.Account) []*github.EnvReviewers {
		var out []*github.EnvReviewers
		for _, a := range list {
			out = append(out, &github.EnvReviewers{Type: github.Ptr("User"), ID: github.Ptr(a.ID)})
		}
		return out
	}
	prod, _, err := g.octoC.Repositories.CreateUpdateEnvironment(ctx, "acme", "svc", "production", &github.CreateUpdateEnvironment{
		Reviewers: users(g.octo, g.rev), PreventSelfReview: github.Ptr(true)})
	apptest.Must(t, "production", err)
	admin := g.env.Client(g.env.Token(g.octo, "repo", "admin:org"))
	team, _, err := admin.Teams.CreateTeam(ctx, "acme", github.CreateTeamRequest{Name: "Deployers"})
	apptest.Must(t, "team", err)
	_, _ = admin.Teams.RemoveTeamMembershipBySlug(ctx, "acme", "deployers", "octo") // its maker, if it was made a member
	_, _, err = admin.Teams.AddTeamMembershipBySlug(ctx, "acme", "deployers", "rev", nil)
	apptest.Must(t, "rev in the team", err)
	staging, _, err := g.octoC.Repositories.CreateUpdateEnvironment(ctx, "acme", "svc", "staging", &github.CreateUpdateEnvironment{
		Reviewers: []*github.EnvReviewers{{Type: github.Ptr("Team"), ID: github.Ptr(team.GetID())}}})
	apptest.Must(t, "staging", err)

	g.push(t, map[string]string{".github/workflows/release.yml": reviewedWorkflow})
	run := g.runIn(t, "waiting")
	testwait.For(t, "both jobs waiting", func() error {
		for name, j := range g.jobs(t, run.GetID()) {
			if j.GetStatus() != "waiting" {
				return fmt.Errorf("%s is %s", name, j.GetStatus())
			}
		}
		return nil
	})
	rc.WaitFor(t, reviewEvents, "deployment_review requested", "deployment_review requested", "workflow_job waiting", "workflow_job waiting")

	pending, _, err := g.octoC.Actions.GetPendingDeployments(ctx, "acme", "svc", run.GetID())
	apptest.Must(t, "pending deployments", err)
	if len(pending) != 2 || pending[0].GetEnvironment().GetName() != "production" || len(pending[0].Reviewers) != 2 ||
		pending[0].GetCurrentUserCanApprove() || pending[1].GetCurrentUserCanApprove() || pending[0].WaitTimerStartedAt != nil {
		t.Fatalf("pending deployments as octo: %s", github.Stringify(pending))
	}
	pending, _, err = g.revC.Actions.GetPendingDeployments(ctx, "acme", "svc", run.GetID())
	apptest.Must(t, "pending deployments as rev", err)
	if len(pending) != 2 || !pending[0].GetCurrentUserCanApprove() || !pending[1].GetCurrentUserCanApprove() {
		t.Fatalf("pending deployments as rev: %s", github.Stringify(pending))
	}

	_, resp, err := g.octoC.Actions.PendingDeployments(ctx, "acme", "svc", run.GetID(), github.PendingDeploymentsRequest{
		EnvironmentIDs: []int64{prod.GetID()}, State: "approved", Comment: "mine"})
	if err == nil || resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("self-review: %v", err)
	}
	resp2, body := g.env.DoJSON("POST", fmt.Sprintf("/repos/acme/svc/actions/runs/%d/pending_deployments", run.GetID()),
		g.octoToken, `{"environment_ids":[1],"state":"maybe"}`)
	apptest.WantError(t, "a bad state", resp2, body, http.StatusUnprocessableEntity)

	rejected, _, err := g.revC.Actions.PendingDeployments(ctx, "acme", "svc", run.GetID(), github.PendingDeploymentsRequest{
		EnvironmentIDs: []int64{staging.GetID()}, State: "rejected", Comment: "not today"})
	apptest.Must(t, "reject staging", err)
	if len(rejected) != 1 || rejected[0].GetEnvironment() != "staging" {
		t.Fatalf("rejected: %s", github.Stringify(rejected))
	}
	rc.WaitFor(t, reviewEvents, "deployment_review rejected")
	approved, _, err := g.revC.Actions.PendingDeployments(ctx, "acme", "svc", run.GetID(), github.PendingDeploymentsRequest{
		EnvironmentIDs: []int64{prod.GetID()}, State: "approved", Comment: "ship it"})
	apptest.Must(t, "approve production", err)
	if len(approved) != 1 || approved[0].GetEnvironment() != "production" {
		t.Fatalf("approved: %s", github.Stringify(approved))
	}

	run = g.runIn(t, "completed")
	jobs := g.jobs(t, run.GetID())
	if run.GetConclusion() != "failure" || jobs["prod"].GetConclusion() != "success" || jobs["stage"].GetConclusion() != "failure" {
		t.Fatalf("run %s, prod %s, stage %s", run.GetConclusion(), jobs["prod"].GetConclusion(), jobs["stage"].GetConclusion())
	}
	if log := g.jobLog(t, jobs["prod"].GetID()); !strings.Contains(log, "shipped to production") {
		t.Fatalf("prod's log:\n%s", log)
	}
	if log := g.jobLog(t, jobs["stage"].GetID()); !strings.Contains(log, "The deployment to staging was rejected") {
		t.Fatalf("stage's log:\n%s", log)
	}
	if got := g.statesOf(t, "production"); strings.Join(got, ",") != "success,in_progress" {
		t.Fatalf("production's statuses %v", got)
	}
	if got := g.statesOf(t, "staging"); strings.Join(got, ",") != "failure" {
		t.Fatalf("staging's statuses %v", got)
	}
	pending, _, err = g.octoC.Actions.GetPendingDeployments(ctx, "acme", "svc", run.GetID())
	apptest.Must(t, "pending deployments once done", err)
	if len(pending) != 0 {
		t.Fatalf("pending deployments of a completed run: %s", github.Stringify(pending))
	}
	resp2, body = g.env.Do("GET", fmt.Sprintf("/repos/acme/svc/actions/runs/%d/approvals", run.GetID()), g.octoToken, nil)
	apptest.WantStatus(t, "approvals", resp2, body, http.StatusOK)
	for _, want := range []string{`"state":"rejected"`, `"comment":"not today"`, `"state":"approved"`, `"comment":"ship it"`, `"login":"rev"`, `"name":"staging"`} {
		if !strings.Contains(string(body), want) {
			t.Fatalf("approvals lack %s: %s", want, body)
		}
	}
	rc.WaitFor(t, reviewEvents, "deployment_review approved")
}

// TestWaitTimerAndProtectionRuleApp: an environment with a one-minute
// wait timer and a custom protection rule app holds its job; the app
// receives deployment_protection_rule requested on its webhook (signed,
// with the deployment and the callback URL), approves through the
// callback with its installation token (ghinstallation), and the job
// still waits for the timer until the clock passes it; then it runs.
// Other callers of the callback are refused.
func TestWaitTimerAndProtectionRuleApp(t *testing.T) {
	t.Parallel()
	g := startGated(t)
	ctx := apptest.Ctx()
	org, repo := g.org, g.repo
	appHook := apptest.NewReceiver(t, "gate-s3cret")
	gate := g.env.RegisterApp(org, "Gate", "deployments:read", apptest.AppOpts{Events: []string{"deployment_protection_rule"},
		WebhookURL: appHook.URL, WebhookSecret: "gate-s3cret"})
	inst := g.env.Install(gate, org, repo)
	atr, err := ghinstallation.NewAppsTransport(g.env.Transport(), gate.ID, gate.PrivateKeyPEM)
	apptest.Must(t, "app transport", err)
	atr.BaseURL = g.env.APIBase()
	gateC := g.env.ClientWith(ghinstallation.NewFromAppsTransport(atr, inst.ID))

	_, _, err = g.octoC.Repositories.CreateUpdateEnvironment(ctx, "acme", "svc", "prod", &github.CreateUpdateEnvironment{WaitTimer: github.Ptr(1)})
	apptest.Must(t, "prod", err)
	_, _, err = g.octoC.Repositories.CreateCustomDeploymentProtectionRule(ctx, "acme", "svc", "prod",
		&github.CustomDeploymentProtectionRuleRequest{IntegrationID: github.Ptr(gate.ID)})
	apptest.Must(t, "enable the gate", err)

	g.push(t, map[string]string{".github/workflows/deploy.yml": "name: Deploy\non: push\njobs:\n  ship:\n    runs-on: ubuntu-latest\n" +
		"    environment: prod\n    steps:\n      - run: echo deployed after the wait\n"})
	run := g.runIn(t, "waiting")
	appHook.WaitFor(t, apptest.EventAction, "deployment_protection_rule requested")
	var ev *github.DeploymentProtectionRuleEvent
	for _, d := range appHook.Deliveries() {
		if e, ok := d.Parsed.(*github.DeploymentProtectionRuleEvent); ok {
			ev = e
		}
	}
	wantURL := fmt.Sprintf("%s/repos/acme/svc/actions/runs/%d/deployment_protection_rule", g.env.APIBase(), run.GetID())
	if ev == nil || ev.GetEnvironment() != "prod" || ev.GetEvent() != "push" || ev.GetDeploymentCallbackURL() != wantURL ||
		ev.GetDeployment().GetEnvironment() != "prod" || ev.GetInstallation().GetID() != inst.ID {
		t.Fatalf("deployment_protection_rule: %s", github.Stringify(ev))
	}
	pending, _, err := g.octoC.Actions.GetPendingDeployments(ctx, "acme", "svc", run.GetID())
	apptest.Must(t, "pending deployments", err)
	if len(pending) != 1 || pending[0].GetWaitTimer() != 1 || pending[0].WaitTimerStartedAt == nil || pending[0].GetCurrentUserCanApprove() {
		t.Fatalf("pending deployments: %s", github.Stringify(pending))
	}

	review := github.ReviewCustomDeploymentProtectionRuleRequest{EnvironmentName: "prod", State: "approved", Comment: "checks passed"}
	_, err = g.octoC.Actions.ReviewCustomDeploymentProtectionRule(ctx, "acme", "svc", run.GetID(), review)
	if e, ok := err.(*github.ErrorResponse); !ok || e.Response.StatusCode != http.StatusForbidden {
		t.Fatalf("a user's answer: %v", err)
	}
	_, err = gateC.Actions.ReviewCustomDeploymentProtectionRule(ctx, "acme", "svc", run.GetID(),
		github.ReviewCustomDeploymentProtectionRuleRequest{EnvironmentName: "staging", State: "approved"})
	if e, ok := err.(*github.ErrorResponse); !ok || e.Response.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("an answer for an environment that waits for nothing: %v", err)
	}
	resp, err := gateC.Actions.ReviewCustomDeploymentProtectionRule(ctx, "acme", "svc", run.GetID(), review)
	apptest.Must(t, "the app approves", err)
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("the app's answer: %d", resp.StatusCode)
	}
	// The timer has not run out: a pass of the runner (which runs what it
	// claims before it returns) leaves the job waiting.
	g.env.App.ActionsRunner.RunOnce(ctx)
	if jobs := g.jobs(t, run.GetID()); jobs["ship"].GetStatus() != "waiting" {
		t.Fatalf("the job before the timer ran out: %s", jobs["ship"].GetStatus())
	}
	g.offset.Store(int64(61 * time.Second))
	run = g.runIn(t, "completed")
	jobs := g.jobs(t, run.GetID())
	if run.GetConclusion() != "success" || !strings.Contains(g.jobLog(t, jobs["ship"].GetID()), "deployed after the wait") {
		t.Fatalf("run %s", run.GetConclusion())
	}
	if got := g.statesOf(t, "prod"); strings.Join(got, ",") != "success,in_progress" {
		t.Fatalf("prod's statuses %v", got)
	}
	_, err = gateC.Actions.ReviewCustomDeploymentProtectionRule(ctx, "acme", "svc", run.GetID(), review)
	if e, ok := err.(*github.ErrorResponse); !ok || e.Response.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("an answer once the run is done: %v", err)
	}
}

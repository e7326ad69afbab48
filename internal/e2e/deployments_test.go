package e2e_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/deployments"
	"forgeapi/internal/repos"
	"forgeapi/internal/webhooks"
)

// TestADeployToolsFlow plays a deploy tool on go-github: it deploys
// branches, posts statuses as the rollout goes, meets required statuses,
// auto_merge and an environment's branch policy, and its hook receives
// the deployment and deployment_status events signed.
func TestADeployToolsFlow(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	ctx := apptest.Ctx()
	octo := env.User("octo", apptest.UserOpts{Email: "octo@example.com"})
	repo := env.Repo(octo, "app")
	token := env.Token(octo, "repo", "admin:repo_hook")
	c := env.Client(token)
	rc := apptest.NewReceiver(t, "deploy-secret")
	_, _, err := c.Repositories.CreateHook(ctx, "octo", "app", &github.Hook{Events: []string{"deployment", "deployment_status"},
		Config: &github.HookConfig{URL: github.Ptr(rc.URL), ContentType: github.Ptr("json"), Secret: github.Ptr("deploy-secret")}})
	apptest.Must(t, "hook", err)
	work := apptest.WorkTree(t, map[string]string{"a.txt": "1\n"})
	push := func(refspec string) {
		t.Helper()
		apptest.Git(t, work, "push", "-q", "-f", env.GitURL("octo", "app", "octo", token), refspec)
	}
	first := strings.TrimSpace(apptest.Git(t, work, "rev-parse", "HEAD"))
	push("HEAD:refs/heads/main")
	push("HEAD:refs/heads/topic")
	main := apptest.Commit(t, work, "second", map[string]string{"b.txt": "2\n"})
	push("HEAD:refs/heads/main")

	var staging1 *github.Deployment
	apptest.Step(t, "the tool deploys main to staging, which creates the environment", func(t *testing.T) {
		d, resp, err := c.Repositories.CreateDeployment(ctx, "octo", "app", github.DeploymentRequest{Ref: "main",
			Environment: github.Ptr("staging"), Payload: map[string]any{"version": "1.0"}, Description: github.Ptr("first")})
		apptest.Must(t, "create", err)
		if resp.StatusCode != http.StatusCreated || d.GetSHA() != main || d.GetRef() != "main" || d.GetTask() != "deploy" ||
			d.GetEnvironment() != "staging" || d.GetCreator().GetLogin() != "octo" ||
			string(d.Payload) != `{"version":"1.0"}` || resp.Header.Get("Location") != d.GetURL() {
			t.Fatalf("created %d %+v payload %s", resp.StatusCode, d, d.Payload)
		}
		staging1 = d
		e, _, err := c.Repositories.GetEnvironment(ctx, "octo", "app", "staging")
		apptest.Must(t, "environment", err)
		if e.GetName() != "staging" || len(e.ProtectionRules) != 0 {
			t.Fatalf("environment %+v", e)
		}
	})
	apptest.Step(t, "statuses follow the rollout", func(t *testing.T) {
		for _, state := range []string{"queued", "in_progress", "success"} {
			st, resp, err := c.Repositories.CreateDeploymentStatus(ctx, "octo", "app", staging1.GetID(), github.DeploymentStatusRequest{
				State: state, LogURL: github.Ptr("https://ci.example/run/1"), EnvironmentURL: github.Ptr("https://staging.example"),
				Description: github.Ptr(state)})
			apptest.Must(t, "status "+state, err)
			if resp.StatusCode != http.StatusCreated || st.GetState() != state || st.GetTargetURL() != "https://ci.example/run/1" ||
				st.GetEnvironment() != "staging" || st.GetEnvironmentURL() != "https://staging.example" {
				t.Fatalf("status %d %+v", resp.StatusCode, st)
			}
		}
		list, _, err := env.Client("").Repositories.ListDeploymentStatuses(ctx, "octo", "app", staging1.GetID(), nil)
		apptest.Must(t, "list anonymously", err)
		if len(list) != 3 || list[0].GetState() != "success" || list[2].GetState() != "queued" {
			t.Fatalf("statuses %d", len(list))
		}
		one, _, err := c.Repositories.GetDeploymentStatus(ctx, "octo", "app", staging1.GetID(), list[1].GetID())
		apptest.Must(t, "get status", err)
		if one.GetState() != "in_progress" {
			t.Fatalf("status %+v", one)
		}
	})
	apptest.Step(t, "a new success marks the earlier deployment inactive", func(t *testing.T) {
		d, _, err := c.Repositories.CreateDeployment(ctx, "octo", "app", github.DeploymentRequest{Ref: main,
			Environment: github.Ptr("staging"), AutoMerge: github.Ptr(false)})
		apptest.Must(t, "second deployment", err)
		_, _, err = c.Repositories.CreateDeploymentStatus(ctx, "octo", "app", d.GetID(), github.DeploymentStatusRequest{State: "success"})
		apptest.Must(t, "success", err)
		list, _, err := c.Repositories.ListDeploymentStatuses(ctx, "octo", "app", staging1.GetID(), nil)
		apptest.Must(t, "statuses", err)
		if len(list) != 4 || list[0].GetState() != "inactive" {
			t.Fatalf("the first deployment's latest status: %s of %d", list[0].GetState(), len(list))
		}
		resp, body := env.Do("DELETE", "/repos/octo/app/deployments/"+itoa(d.GetID()), token, nil)
		if e := apptest.WantError(t, "delete active", resp, body, http.StatusUnprocessableEntity); !strings.Contains(e.Message, "active deployment") {
			t.Fatalf("delete active: %s", body)
		}
		_, err = c.Repositories.DeleteDeployment(ctx, "octo", "app", staging1.GetID())
		apptest.Must(t, "delete inactive", err)
		if _, resp, err := c.Repositories.GetDeployment(ctx, "octo", "app", staging1.GetID()); err == nil || resp.StatusCode != http.StatusNotFound {
			t.Fatalf("deleted deployment: %v", err)
		}
		list2, _, err := c.Repositories.ListDeployments(ctx, "octo", "app", &github.DeploymentsListOptions{SHA: main, Environment: "staging"})
		apptest.Must(t, "list", err)
		if len(list2) != 1 || list2[0].GetID() != d.GetID() {
			t.Fatalf("deployments %d", len(list2))
		}
	})
	apptest.Step(t, "required statuses refuse, then let the deployment through", func(t *testing.T) {
		_, _, err := c.Repositories.CreateStatus(ctx, "octo", "app", main, github.RepoStatus{State: github.Ptr("pending"), Context: github.Ptr("ci")})
		apptest.Must(t, "pending status", err)
		resp, body := env.DoJSON("POST", "/repos/octo/app/deployments", token, `{"ref":"main","environment":"qa"}`)
		if resp.StatusCode != http.StatusConflict || !strings.Contains(string(body), `"message":"Conflict: Commit status checks failed for main."`) ||
			!strings.Contains(string(body), `{"context":"ci","state":"pending"}`) {
			t.Fatalf("pending ci: %d %s", resp.StatusCode, body)
		}
		resp, body = env.DoJSON("POST", "/repos/octo/app/deployments", token, `{"ref":"main","environment":"qa","required_contexts":["lint"]}`)
		if resp.StatusCode != http.StatusConflict || !strings.Contains(string(body), `{"context":"lint","state":"missing"}`) {
			t.Fatalf("missing lint: %d %s", resp.StatusCode, body)
		}
		_, resp2, err := c.Repositories.CreateDeployment(ctx, "octo", "app", github.DeploymentRequest{Ref: "main",
			Environment: github.Ptr("qa"), RequiredContexts: []string{}})
		if err != nil || resp2.StatusCode != http.StatusCreated {
			t.Fatalf("no required contexts: %v", err)
		}
		_, _, err = c.Repositories.CreateStatus(ctx, "octo", "app", main, github.RepoStatus{State: github.Ptr("success"), Context: github.Ptr("ci")})
		apptest.Must(t, "success status", err)
		_, _, err = c.Repositories.CreateDeployment(ctx, "octo", "app", github.DeploymentRequest{Ref: "main", Environment: github.Ptr("qa")})
		apptest.Must(t, "every context success", err)
	})
	apptest.Step(t, "auto_merge merges main into a branch behind it, or refuses a conflict", func(t *testing.T) {
		resp, body := env.DoJSON("POST", "/repos/octo/app/deployments", token, `{"ref":"topic","environment":"review","required_contexts":[]}`)
		if resp.StatusCode != http.StatusAccepted || !strings.Contains(string(body), `"message":"Auto-merged main into topic on deployment."`) {
			t.Fatalf("auto merge: %d %s", resp.StatusCode, body)
		}
		b, _, err := c.Repositories.GetBranch(ctx, "octo", "app", "topic", 0)
		apptest.Must(t, "topic", err)
		if b.GetCommit().GetSHA() == first || len(b.GetCommit().Parents) != 2 {
			t.Fatalf("topic after the merge: %+v", b.GetCommit())
		}
		d, resp2, err := c.Repositories.CreateDeployment(ctx, "octo", "app", github.DeploymentRequest{Ref: "topic",
			Environment: github.Ptr("review"), RequiredContexts: []string{}})
		if err != nil || resp2.StatusCode != http.StatusCreated || d.GetSHA() != b.GetCommit().GetSHA() {
			t.Fatalf("deploy merged topic: %v", err)
		}
		apptest.Git(t, work, "checkout", "-q", "-b", "clash", first)
		apptest.Commit(t, work, "clash", map[string]string{"b.txt": "other\n"})
		push("HEAD:refs/heads/clash")
		resp, body = env.DoJSON("POST", "/repos/octo/app/deployments", token, `{"ref":"clash","required_contexts":[]}`)
		if e := apptest.WantError(t, "conflict", resp, body, http.StatusConflict); e.Message != "Conflict merging main into clash." {
			t.Fatalf("conflict: %s", body)
		}
		_, resp2, err = c.Repositories.CreateDeployment(ctx, "octo", "app", github.DeploymentRequest{Ref: "clash",
			AutoMerge: github.Ptr(false), RequiredContexts: []string{}, Environment: github.Ptr("review")})
		if err != nil || resp2.StatusCode != http.StatusCreated {
			t.Fatalf("without auto_merge: %v", err)
		}
	})
	apptest.Step(t, "an environment's branch policy refuses other branches", func(t *testing.T) {
		e, _, err := c.Repositories.CreateUpdateEnvironment(ctx, "octo", "app", "production", &github.CreateUpdateEnvironment{
			WaitTimer: github.Ptr(30), Reviewers: []*github.EnvReviewers{{Type: github.Ptr("User"), ID: github.Ptr(octo.ID)}},
			DeploymentBranchPolicy: &github.BranchPolicy{ProtectedBranches: github.Ptr(false), CustomBranchPolicies: github.Ptr(true)}})
		apptest.Must(t, "put production", err)
		if len(e.ProtectionRules) != 3 || e.GetDeploymentBranchPolicy().GetCustomBranchPolicies() != true ||
			e.ProtectionRules[0].GetWaitTimer() != 30 || e.ProtectionRules[1].Reviewers[0].GetType() != "User" {
			t.Fatalf("production %+v", e)
		}
		p, _, err := c.Repositories.CreateDeploymentBranchPolicy(ctx, "octo", "app", "production",
			github.CreateDeploymentBranchPolicyRequest{Name: "release/*", Type: github.Ptr("branch")})
		apptest.Must(t, "policy", err)
		resp, body := env.DoJSON("POST", "/repos/octo/app/deployments", token, `{"ref":"main","required_contexts":[]}`)
		if e := apptest.WantError(t, "main to production", resp, body, http.StatusUnprocessableEntity); !strings.Contains(e.Message, `Branch "main" is not allowed to deploy to production`) {
			t.Fatalf("refusal: %s", body)
		}
		push("refs/heads/main:refs/heads/release/1")
		d, _, err := c.Repositories.CreateDeployment(ctx, "octo", "app", github.DeploymentRequest{Ref: "release/1", RequiredContexts: []string{}})
		apptest.Must(t, "release/1 to production", err)
		if d.GetEnvironment() != "production" {
			t.Fatalf("production deployment %+v", d)
		}
		// The client follows the 303 to the pattern there is.
		resp, _ = env.DoJSON("POST", "/repos/octo/app/environments/production/deployment-branch-policies", token, `{"name":"release/*"}`)
		if resp.Request.Method != "GET" || !strings.HasSuffix(resp.Request.URL.Path, "/deployment-branch-policies/"+itoa(p.GetID())) {
			t.Fatalf("same pattern again: %d %s %s", resp.StatusCode, resp.Request.Method, resp.Request.URL)
		}
		list, _, err := c.Repositories.ListDeploymentBranchPolicies(ctx, "octo", "app", "production", nil)
		apptest.Must(t, "list policies", err)
		if list.GetTotalCount() != 1 || list.BranchPolicies[0].GetID() != p.GetID() {
			t.Fatalf("policies %+v", list)
		}
		p, _, err = c.Repositories.UpdateDeploymentBranchPolicy(ctx, "octo", "app", "production", p.GetID(),
			github.UpdateDeploymentBranchPolicyRequest{Name: "main"})
		apptest.Must(t, "rename", err)
		hotfix, _, err := c.Repositories.CreateDeploymentBranchPolicy(ctx, "octo", "app", "production",
			github.CreateDeploymentBranchPolicyRequest{Name: "hotfix/*"})
		apptest.Must(t, "second policy", err)
		resp, body = env.DoJSON("PUT", "/repos/octo/app/environments/production/deployment-branch-policies/"+itoa(hotfix.GetID()), token, `{"name":"main"}`)
		apptest.WantError(t, "rename onto another pattern", resp, body, http.StatusUnprocessableEntity)
		_, _, err = c.Repositories.CreateDeployment(ctx, "octo", "app", github.DeploymentRequest{Ref: "main", RequiredContexts: []string{}})
		apptest.Must(t, "main once allowed", err)
		_, err = c.Repositories.DeleteDeploymentBranchPolicy(ctx, "octo", "app", "production", p.GetID())
		apptest.Must(t, "delete policy", err)
	})
	apptest.Step(t, "environments are listed, read and deleted", func(t *testing.T) {
		list, _, err := c.Repositories.ListEnvironments(ctx, "octo", "app", nil)
		apptest.Must(t, "list", err)
		var names []string
		for _, e := range list.Environments {
			names = append(names, e.GetName())
		}
		if list.GetTotalCount() != 4 || strings.Join(names, ",") != "production,qa,review,staging" {
			t.Fatalf("environments %d %v", list.GetTotalCount(), names)
		}
		_, err = c.Repositories.DeleteEnvironment(ctx, "octo", "app", "qa")
		apptest.Must(t, "delete", err)
		if _, resp, err := c.Repositories.GetEnvironment(ctx, "octo", "app", "qa"); err == nil || resp.StatusCode != http.StatusNotFound {
			t.Fatalf("deleted environment: %v", err)
		}
		if deps, _, err := c.Repositories.ListDeployments(ctx, "octo", "app", &github.DeploymentsListOptions{Environment: "qa"}); err != nil || len(deps) != 2 {
			t.Fatalf("qa's deployments stay: %d %v", len(deps), err)
		}
	})
	apptest.Step(t, "bad input is refused", func(t *testing.T) {
		for _, tc := range []struct{ path, body string }{
			{"/repos/octo/app/deployments", `{}`},
			{"/repos/octo/app/deployments", `{"ref":"nope"}`},
			{"/repos/octo/app/deployments", `{"ref":"main","payload":[1]}`},
			{"/repos/octo/app/deployments/" + itoa(staging1.GetID()+1000) + "/statuses", `{"state":"success"}`},
		} {
			if resp, body := env.DoJSON("POST", tc.path, token, tc.body); resp.StatusCode != http.StatusUnprocessableEntity && resp.StatusCode != http.StatusNotFound {
				t.Errorf("POST %s %s: %d %s", tc.path, tc.body, resp.StatusCode, body)
			}
		}
		deps, _, err := c.Repositories.ListDeployments(ctx, "octo", "app", nil)
		apptest.Must(t, "list", err)
		id := itoa(deps[0].GetID())
		for _, body := range []string{`{"state":"great"}`, `{}`, `{"state":"success","log_url":"not a url"}`} {
			resp, b := env.DoJSON("POST", "/repos/octo/app/deployments/"+id+"/statuses", token, body)
			apptest.WantError(t, body, resp, b, http.StatusUnprocessableEntity)
		}
		resp, b := env.DoJSON("PUT", "/repos/octo/app/environments/x", token, `{"wait_timer":50000}`)
		apptest.WantError(t, "wait timer", resp, b, http.StatusUnprocessableEntity)
		resp, b = env.DoJSON("PUT", "/repos/octo/app/environments/x", token,
			`{"deployment_branch_policy":{"protected_branches":true,"custom_branch_policies":true}}`)
		apptest.WantError(t, "both policies", resp, b, http.StatusUnprocessableEntity)
	})
	apptest.Step(t, "the hook receives every creation, signed and as the platform's schemas", func(t *testing.T) {
		describe := func(d apptest.Delivery) string { return d.Event }
		rc.WaitCount(t, describe, 13) // and the ping
		var deps, statuses int
		for _, d := range rc.Deliveries() {
			switch e := d.Parsed.(type) {
			case *github.DeploymentEvent:
				deps++
				if e.GetDeployment().GetID() == 0 || e.GetRepo().GetFullName() != "octo/app" || e.GetSender().GetLogin() != "octo" {
					t.Fatalf("deployment event %+v", e)
				}
			case *github.DeploymentStatusEvent:
				statuses++
				if e.GetDeploymentStatus().GetState() == "" || e.GetDeployment().GetID() == 0 {
					t.Fatalf("deployment_status event %+v", e)
				}
			}
		}
		if deps != 8 || statuses != 4 {
			t.Fatalf("received %d deployment and %d deployment_status events", deps, statuses)
		}
		_ = repo
	})
}

// TestDeploymentPermissions checks who may deploy: a reader and a
// Deployments read token may not, a Deployments write token may; only
// Administration write changes environments.
func TestDeploymentPermissions(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo := env.User("octo")
	reader := env.User("reader")
	repo := env.Repo(octo, "app")
	token := env.Token(octo, "repo")
	work := apptest.WorkTree(t, map[string]string{"a.txt": "1\n"})
	apptest.Git(t, work, "push", "-q", env.GitURL("octo", "app", "octo", token), "HEAD:refs/heads/main")
	body := `{"ref":"main","required_contexts":[]}`
	for _, tc := range []struct {
		what, method, path, token string
		want                      int
	}{
		{"a reader's classic token", "POST", "/repos/octo/app/deployments", env.Token(reader, "repo"), http.StatusForbidden},
		{"Deployments read", "POST", "/repos/octo/app/deployments", env.FineGrainedToken(octo, octo, []*repos.Repository{repo}, "deployments:read"), http.StatusForbidden},
		{"Deployments write", "POST", "/repos/octo/app/deployments", env.FineGrainedToken(octo, octo, []*repos.Repository{repo}, "deployments:write"), http.StatusCreated},
		{"repo_deployment", "POST", "/repos/octo/app/deployments", env.Token(octo, "repo_deployment"), http.StatusCreated},
		{"Deployments write on environments", "PUT", "/repos/octo/app/environments/prod", env.FineGrainedToken(octo, octo, []*repos.Repository{repo}, "deployments:write"), http.StatusForbidden},
		{"Administration write", "PUT", "/repos/octo/app/environments/prod", env.FineGrainedToken(octo, octo, []*repos.Repository{repo}, "administration:write"), http.StatusOK},
		{"a reader on environments", "PUT", "/repos/octo/app/environments/prod", env.Token(reader, "repo"), http.StatusForbidden},
		{"anonymous reads", "GET", "/repos/octo/app/environments", "", http.StatusOK},
	} {
		resp, got := env.DoJSON(tc.method, tc.path, tc.token, body)
		if tc.method == "PUT" {
			resp, got = env.DoJSON(tc.method, tc.path, tc.token, `{"wait_timer":1}`)
		}
		if resp.StatusCode != tc.want {
			t.Errorf("%s: %d %s, want %d", tc.what, resp.StatusCode, got, tc.want)
		}
	}
}

// TestBranchPolicyPatterns pins the name patterns' matching.
func TestBranchPolicyPatterns(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pattern, name string
		want          bool
	}{
		{"main", "main", true}, {"release/*", "release/1", true}, {"release/*", "release/1/a", false},
		{"release/**", "release/1/a", true}, {"v?", "v1", true}, {"v[0-9]*", "v2.0", true}, {"v[!0-9]*", "v2", false},
		{"feat*", "feature", true}, {"a.b", "axb", false},
	} {
		if got := deployments.MatchPattern(tc.pattern, tc.name); got != tc.want {
			t.Errorf("%q matches %q: %v, want %v", tc.pattern, tc.name, got, tc.want)
		}
	}
}

// TestTeamReviewers sets a team and a user as an environment's required
// reviewers, as Terraform's environment resource does, and reads them back.
func TestTeamReviewers(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	owner := env.User("owner")
	org := env.Org("acme", owner)
	env.Repo(org, "svc")
	c := env.Client(env.Token(owner, "repo", "admin:org"))
	team, _, err := c.Teams.CreateTeam(ctx, "acme", github.CreateTeamRequest{Name: "Deployers"})
	apptest.Must(t, "team", err)
	e, _, err := c.Repositories.CreateUpdateEnvironment(ctx, "acme", "svc", "prod", &github.CreateUpdateEnvironment{
		Reviewers:         []*github.EnvReviewers{{Type: github.Ptr("Team"), ID: github.Ptr(team.GetID())}, {Type: github.Ptr("User"), ID: github.Ptr(owner.ID)}},
		PreventSelfReview: github.Ptr(true)})
	apptest.Must(t, "put", err)
	got, _, err := c.Repositories.GetEnvironment(ctx, "acme", "svc", "prod")
	apptest.Must(t, "get", err)
	if len(got.ProtectionRules) != 1 || len(got.ProtectionRules[0].Reviewers) != 2 || got.ProtectionRules[0].GetPreventSelfReview() != true ||
		got.ProtectionRules[0].Reviewers[0].GetType() != "Team" || got.GetID() != e.GetID() {
		t.Fatalf("environment %+v", got)
	}
	resp, body := env.DoJSON("PUT", "/repos/acme/svc/environments/prod", env.Token(owner, "repo"), `{"reviewers":[{"type":"Team","id":999999}]}`)
	apptest.WantError(t, "unknown team", resp, body, http.StatusUnprocessableEntity)
}

// TestAppsReceiveDeploymentEvents: a CD app with Deployments read that
// subscribes to deployment_status receives it, signed, on its webhook;
// its installation token deploys with Deployments write.
func TestAppsReceiveDeploymentEvents(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	ctx := apptest.Ctx()
	owner := env.User("owner")
	org := env.Org("acme", owner)
	repo := env.Repo(org, "svc")
	work := apptest.WorkTree(t, map[string]string{"a.txt": "1\n"})
	apptest.Git(t, work, "push", "-q", env.GitURL("acme", "svc", "owner", env.Token(owner, "repo")), "HEAD:refs/heads/main")
	rc := apptest.NewReceiver(t, "app-secret")
	a := env.RegisterApp(org, "CD Bot", "deployments:write", apptest.AppOpts{Events: []string{"deployment", "deployment_status"},
		WebhookURL: rc.URL, WebhookSecret: "app-secret"})
	env.Install(a, org, repo)
	c := env.Client(env.InstallationToken(org, []*repos.Repository{repo}, "deployments:write"))
	d, _, err := c.Repositories.CreateDeployment(ctx, "acme", "svc", github.DeploymentRequest{Ref: "main", RequiredContexts: []string{}})
	apptest.Must(t, "deploy", err)
	_, _, err = c.Repositories.CreateDeploymentStatus(ctx, "acme", "svc", d.GetID(), github.DeploymentStatusRequest{State: "success"})
	apptest.Must(t, "status", err)
	rc.WaitFor(t, apptest.EventAction, "deployment created", "deployment_status created")
}

// TestCustomProtectionRules enables an installed gate app on an
// environment as a custom deployment protection rule, as Terraform's
// resource does, and disables it.
func TestCustomProtectionRules(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	owner := env.User("owner")
	org := env.Org("acme", owner)
	repo := env.Repo(org, "svc")
	gate := env.RegisterApp(org, "Gate", "deployments:write", apptest.AppOpts{Events: []string{"deployment_protection_rule"}})
	env.Install(gate, org, repo)
	other := env.RegisterApp(org, "Other", "deployments:write", apptest.AppOpts{Events: []string{"deployment"}})
	env.Install(other, org, repo)
	token := env.Token(owner, "repo")
	resp, body := env.DoJSON("PUT", "/repos/acme/svc/environments/prod", token, `{}`)
	apptest.WantStatus(t, "environment", resp, body, http.StatusOK)
	const rules = "/repos/acme/svc/environments/prod/deployment_protection_rules"
	resp, body = env.Do("GET", rules+"/apps", token, nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"total_count":1}`) || !strings.Contains(string(body), `"slug":"gate"`) {
		t.Fatalf("available apps: %d %s", resp.StatusCode, body)
	}
	resp, body = env.DoJSON("POST", rules, token, `{"integration_id":`+itoa(gate.App.ID)+`}`)
	var rule struct {
		ID  int64
		App struct{ Slug string }
	}
	if resp.StatusCode != http.StatusCreated || json.Unmarshal(body, &rule) != nil || rule.App.Slug != "gate" {
		t.Fatalf("enable: %d %s", resp.StatusCode, body)
	}
	resp, body = env.DoJSON("POST", rules, token, `{"integration_id":`+itoa(gate.App.ID)+`}`)
	apptest.WantError(t, "enabled twice", resp, body, http.StatusUnprocessableEntity)
	resp, body = env.DoJSON("POST", rules, token, `{"integration_id":`+itoa(other.App.ID)+`}`)
	apptest.WantError(t, "an app that gates nothing", resp, body, http.StatusUnprocessableEntity)
	resp, body = env.Do("GET", rules, token, nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"total_count":1}`) {
		t.Fatalf("rules: %d %s", resp.StatusCode, body)
	}
	resp, body = env.Do("GET", rules+"/"+itoa(rule.ID), token, nil)
	apptest.WantStatus(t, "get", resp, body, http.StatusOK)
	resp, body = env.Do("DELETE", rules+"/"+itoa(rule.ID), token, nil)
	apptest.WantStatus(t, "disable", resp, body, http.StatusNoContent)
	resp, body = env.Do("GET", rules+"/"+itoa(rule.ID), token, nil)
	apptest.WantError(t, "disabled", resp, body, http.StatusNotFound)
}

// TestDeploymentEdges: an empty repository, environment names that need
// escaping, a status that moves its deployment to another environment.
func TestDeploymentEdges(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo")
	env.Repo(octo, "empty")
	env.Repo(octo, "app")
	token := env.Token(octo, "repo")
	c := env.Client(token)
	resp, body := env.DoJSON("POST", "/repos/octo/empty/deployments", token, `{"ref":"main"}`)
	if e := apptest.WantError(t, "empty repository", resp, body, http.StatusUnprocessableEntity); e.Message != "No ref found for: main" {
		t.Fatalf("empty repository: %s", body)
	}
	work := apptest.WorkTree(t, map[string]string{"a.txt": "1\n"})
	apptest.Git(t, work, "push", "-q", env.GitURL("octo", "app", "octo", token), "HEAD:refs/heads/main")
	apptest.Git(t, work, "tag", "v1.0")
	apptest.Git(t, work, "push", "-q", env.GitURL("octo", "app", "octo", token), "v1.0")

	e, _, err := c.Repositories.CreateUpdateEnvironment(ctx, "octo", "app", "QA east/1", nil)
	apptest.Must(t, "a name with a space and a slash", err)
	if e.GetName() != "QA east/1" || !strings.HasSuffix(e.GetURL(), "/environments/QA%20east%2F1") {
		t.Fatalf("environment %s %s", e.GetName(), e.GetURL())
	}
	got, _, err := c.Repositories.GetEnvironment(ctx, "octo", "app", "qa EAST/1")
	apptest.Must(t, "another case", err)
	if got.GetID() != e.GetID() {
		t.Fatalf("got %d, want %d", got.GetID(), e.GetID())
	}

	d, _, err := c.Repositories.CreateDeployment(ctx, "octo", "app", github.DeploymentRequest{Ref: "v1.0", Environment: github.Ptr("QA east/1"),
		Payload: "not json", TransientEnvironment: github.Ptr(true)})
	apptest.Must(t, "deploy a tag", err)
	if string(d.Payload) != `"not json"` || d.GetEnvironment() != "QA east/1" {
		t.Fatalf("deployment %+v %s", d, d.Payload)
	}
	st, _, err := c.Repositories.CreateDeploymentStatus(ctx, "octo", "app", d.GetID(), github.DeploymentStatusRequest{State: "in_progress",
		Environment: github.Ptr("review-7")})
	apptest.Must(t, "move", err)
	moved, _, err := c.Repositories.GetDeployment(ctx, "octo", "app", d.GetID())
	apptest.Must(t, "get", err)
	if st.GetEnvironment() != "review-7" || moved.GetEnvironment() != "review-7" {
		t.Fatalf("moved: status %s, deployment %s", st.GetEnvironment(), moved.GetEnvironment())
	}
	if _, _, err := c.Repositories.GetEnvironment(ctx, "octo", "app", "review-7"); err != nil {
		t.Fatalf("the status's environment: %v", err)
	}
	list, resp2, err := c.Repositories.ListDeployments(ctx, "octo", "app", &github.DeploymentsListOptions{Ref: "v1.0", Task: "deploy",
		ListOptions: github.ListOptions{PerPage: 1}})
	apptest.Must(t, "list", err)
	if len(list) != 1 || resp2.NextPage != 0 {
		t.Fatalf("list %d next %d", len(list), resp2.NextPage)
	}
	_, err = c.Repositories.DeleteEnvironment(ctx, "octo", "app", "QA east/1")
	apptest.Must(t, "delete", err)
	resp, body = env.Do("DELETE", "/repos/octo/app/environments/QA%20east%2F1", token, nil)
	apptest.WantError(t, "deleted twice", resp, body, http.StatusNotFound)
}

// TestProtectedBranchesPolicy: an environment whose branch policy is
// protected_branches takes deployments of the branches branch protection
// protects, and refuses the others.
func TestProtectedBranchesPolicy(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo", apptest.UserOpts{Email: "octo@example.com"})
	env.Repo(octo, "app")
	token := env.Token(octo, "repo")
	c := env.Client(token)
	work := apptest.WorkTree(t, map[string]string{"a.txt": "1\n"})
	for _, branch := range []string{"main", "topic"} {
		apptest.Git(t, work, "push", "-q", env.GitURL("octo", "app", "octo", token), "HEAD:refs/heads/"+branch)
	}
	_, _, err := c.Repositories.CreateUpdateEnvironment(ctx, "octo", "app", "production", &github.CreateUpdateEnvironment{
		DeploymentBranchPolicy: &github.BranchPolicy{ProtectedBranches: github.Ptr(true), CustomBranchPolicies: github.Ptr(false)}})
	apptest.Must(t, "environment", err)
	_, _, err = c.Repositories.UpdateBranchProtection(ctx, "octo", "app", "main", &github.ProtectionRequest{})
	apptest.Must(t, "protect main", err)

	if _, _, err := c.Repositories.CreateDeployment(ctx, "octo", "app", github.DeploymentRequest{Ref: "main",
		Environment: github.Ptr("production"), RequiredContexts: []string{}}); err != nil {
		t.Errorf("deploy the protected main: %v", err)
	}
	_, resp, err := c.Repositories.CreateDeployment(ctx, "octo", "app", github.DeploymentRequest{Ref: "topic",
		Environment: github.Ptr("production"), RequiredContexts: []string{}})
	if err == nil || resp == nil || resp.StatusCode < 400 {
		t.Errorf("deploy the unprotected topic: %v", err)
	}
}

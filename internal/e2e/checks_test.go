package e2e_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/google/go-github/v92/github"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apps"
	"forgeapi/internal/apptest"
	"forgeapi/internal/checks"
	"forgeapi/internal/repos"
	"forgeapi/internal/webhooks"
)

// ciApp is an app registered and installed for a test, with a go-github
// client on its installation token (ghinstallation) and its webhook
// receiver (signatures checked, payloads validated against the
// platform's webhook schemas).
type ciApp struct {
	app    *apps.Created
	inst   *apps.Installation
	client *github.Client
	rc     *apptest.Receiver
}

func newCIApp(t *testing.T, env *apptest.Env, owner *accounts.Account, name string, events []string, repo *repos.Repository) *ciApp {
	t.Helper()
	secret := name + "-s3cret"
	rc := apptest.NewReceiver(t, secret)
	a := env.RegisterApp(owner, name, "checks:write,contents:read,statuses:write", apptest.AppOpts{
		Events: events, WebhookURL: rc.URL, WebhookSecret: secret})
	inst := env.Install(a, owner, repo)
	atr, err := ghinstallation.NewAppsTransport(env.Transport(), a.ID, a.PrivateKeyPEM)
	apptest.Must(t, "apps transport", err)
	atr.BaseURL = env.APIBase()
	return &ciApp{app: a, inst: inst, client: env.ClientWith(ghinstallation.NewFromAppsTransport(atr, inst.ID)), rc: rc}
}

// checkEvents names the check_run and check_suite deliveries "event
// action".
func checkEvents(d apptest.Delivery) string {
	if d.Event != "check_run" && d.Event != "check_suite" {
		return ""
	}
	return apptest.EventAction(d)
}

// TestCIAppChecks plays a CI app through the Checks API: a push requests
// a check suite from the app (its webhook, signed); the app reports a
// run in progress, then failed with an annotation; the runs of the ref,
// the suite and the annotations read back; a user rerequests the run and
// the suite; the repository's hook receives what the platform sends it
// and not what goes to the app alone.
func TestCIAppChecks(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	ctx := apptest.Ctx()
	octo := env.User("octo")
	org := env.Org("acme", octo)
	repo := env.Repo(org, "widget")
	token := env.Token(octo, "repo", "admin:repo_hook")
	user := env.Client(token)
	ci := newCIApp(t, env, org, "CI Bot", []string{"check_suite", "check_run"}, repo)
	hook := apptest.NewReceiver(t, "hook-s3cret")
	_, _, err := user.Repositories.CreateHook(ctx, "acme", "widget", &github.Hook{Events: []string{"check_run", "check_suite"},
		Config: &github.HookConfig{URL: github.Ptr(hook.URL), ContentType: github.Ptr("json"), Secret: github.Ptr("hook-s3cret")}})
	apptest.Must(t, "repository hook", err)

	work := apptest.WorkTree(t, map[string]string{"main.go": "package main\n"})
	sha := strings.TrimSpace(apptest.Git(t, work, "rev-parse", "HEAD"))
	var suiteID, runID int64

	apptest.Step(t, "a push requests a suite from the app", func(t *testing.T) {
		apptest.Git(t, work, "push", "-q", env.GitURL("acme", "widget", "octo", token), "HEAD:refs/heads/main")
		ci.rc.WaitFor(t, checkEvents, "check_suite requested")
		for _, d := range ci.rc.Deliveries() {
			e, ok := d.Parsed.(*github.CheckSuiteEvent)
			if !ok {
				continue
			}
			s := e.GetCheckSuite()
			if s.GetHeadSHA() != sha || s.GetHeadBranch() != "main" || s.GetStatus() != "queued" ||
				s.GetApp().GetID() != ci.app.ID || e.GetInstallation().GetID() != ci.inst.ID || e.GetSender().GetLogin() != "octo" {
				t.Fatalf("check_suite requested: %+v", e)
			}
			suiteID = s.GetID()
		}
	})

	apptest.Step(t, "the app reports a run in progress, then a failure with an annotation", func(t *testing.T) {
		run, resp, err := ci.client.Checks.CreateCheckRun(ctx, "acme", "widget", github.CreateCheckRunOptions{
			Name: "build", HeadSHA: sha, Status: github.Ptr("in_progress"), DetailsURL: github.Ptr("https://ci.example/1"),
			Actions: []*github.CheckRunAction{{Label: "Fix it", Description: "Let the bot fix it", Identifier: "fix"}}})
		apptest.Must(t, "create check run", err)
		if resp.StatusCode != http.StatusCreated || run.GetCheckSuite().GetID() != suiteID || run.GetApp().GetSlug() != "ci-bot" ||
			run.GetStatus() != "in_progress" || run.Conclusion != nil || run.StartedAt == nil || run.CompletedAt != nil {
			t.Fatalf("created %d %+v", resp.StatusCode, run)
		}
		runID = run.GetID()
		run, _, err = ci.client.Checks.UpdateCheckRun(ctx, "acme", "widget", runID, github.UpdateCheckRunOptions{
			Name: "build", Conclusion: github.Ptr("failure"), Output: &github.CheckRunOutput{
				Title: github.Ptr("1 error"), Summary: github.Ptr("The build failed"),
				Annotations: []*github.CheckRunAnnotation{{Path: github.Ptr("main.go"), StartLine: github.Ptr(1), EndLine: github.Ptr(1),
					AnnotationLevel: github.Ptr("failure"), Message: github.Ptr("missing func main")}}}})
		apptest.Must(t, "complete check run", err)
		if run.GetStatus() != "completed" || run.GetConclusion() != "failure" || run.CompletedAt == nil ||
			run.GetOutput().GetAnnotationsCount() != 1 || run.GetOutput().GetTitle() != "1 error" {
			t.Fatalf("completed %+v", run)
		}
		_, _, err = ci.client.Checks.UpdateCheckRun(ctx, "acme", "widget", runID, github.UpdateCheckRunOptions{
			Name: "build", Output: &github.CheckRunOutput{Title: github.Ptr("2 errors"), Summary: github.Ptr("The build failed"),
				Annotations: []*github.CheckRunAnnotation{{Path: github.Ptr("main.go"), StartLine: github.Ptr(1), EndLine: github.Ptr(1),
					StartColumn: github.Ptr(1), EndColumn: github.Ptr(4), AnnotationLevel: github.Ptr("warning"), Message: github.Ptr("package")}}}})
		apptest.Must(t, "append an annotation", err)
	})

	apptest.Step(t, "the runs, the suite and the annotations read back", func(t *testing.T) {
		list, _, err := user.Checks.ListCheckRunsForRef(ctx, "acme", "widget", "main", nil)
		apptest.Must(t, "runs for the ref", err)
		if list.GetTotal() != 1 || list.CheckRuns[0].GetID() != runID || list.CheckRuns[0].GetConclusion() != "failure" ||
			list.CheckRuns[0].GetOutput().GetAnnotationsCount() != 2 {
			t.Fatalf("runs for main: %+v", list)
		}
		anns, _, err := env.Client("").Checks.ListCheckRunAnnotations(ctx, "acme", "widget", runID, nil)
		apptest.Must(t, "annotations", err)
		if len(anns) != 2 || anns[0].GetMessage() != "missing func main" || anns[1].GetAnnotationLevel() != "warning" ||
			anns[1].GetStartColumn() != 1 {
			t.Fatalf("annotations: %+v", anns)
		}
		suite, _, err := user.Checks.GetCheckSuite(ctx, "acme", "widget", suiteID)
		apptest.Must(t, "suite", err)
		if suite.GetStatus() != "completed" || suite.GetConclusion() != "failure" || suite.GetHeadSHA() != sha ||
			suite.GetRepository().GetFullName() != "acme/widget" || suite.GetHeadCommit().GetMessage() == "" {
			t.Fatalf("suite %+v", suite)
		}
		suites, _, err := user.Checks.ListCheckSuitesForRef(ctx, "acme", "widget", sha, &github.ListCheckSuiteOptions{CheckName: github.Ptr("build")})
		apptest.Must(t, "suites for the ref", err)
		if suites.GetTotal() != 1 || suites.CheckSuites[0].GetID() != suiteID {
			t.Fatalf("suites for the commit: %+v", suites)
		}
		inSuite, _, err := user.Checks.ListCheckRunsCheckSuite(ctx, "acme", "widget", suiteID, &github.ListCheckRunsOptions{Filter: github.Ptr("all")})
		apptest.Must(t, "runs of the suite", err)
		if inSuite.GetTotal() != 1 {
			t.Fatalf("runs of the suite: %+v", inSuite)
		}
		out, err := checks.Outcomes(ctx, env.Q(), repo.ID, sha)
		apptest.Must(t, "outcomes", err)
		if out["build"] != (checks.Outcome{Name: "build", State: "failure", AppID: ci.app.ID}) {
			t.Fatalf("outcomes: %+v", out)
		}
	})

	apptest.Step(t, "a user rerequests the run and the suite; a button is pressed", func(t *testing.T) {
		resp, err := user.Checks.ReRequestCheckRun(ctx, "acme", "widget", runID)
		apptest.Must(t, "rerequest the run", err)
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("rerequest run: %d", resp.StatusCode)
		}
		suite, _, err := user.Checks.GetCheckSuite(ctx, "acme", "widget", suiteID)
		apptest.Must(t, "suite", err)
		if suite.GetStatus() != "queued" || suite.Conclusion != nil {
			t.Fatalf("suite after the rerequest: %s %v", suite.GetStatus(), suite.Conclusion)
		}
		_, err = user.Checks.ReRequestCheckSuite(ctx, "acme", "widget", suiteID)
		apptest.Must(t, "rerequest the suite", err)
		apptest.Must(t, "press the button", env.App.Checks.RequestAction(env.Context(), repo, octo, runID, "fix"))
		ci.rc.WaitFor(t, checkEvents, "check_run rerequested", "check_suite rerequested", "check_run requested_action")
		for _, d := range ci.rc.Deliveries() {
			if e, ok := d.Parsed.(*github.CheckRunEvent); ok && e.GetAction() == "requested_action" &&
				(e.GetRequestedAction().Identifier != "fix" || e.GetCheckRun().GetID() != runID || e.GetSender().GetLogin() != "octo") {
				t.Fatalf("requested_action: %+v", e)
			}
		}
	})

	apptest.Step(t, "the app and the repository hook received what the platform sends them", func(t *testing.T) {
		want := []string{"check_suite requested", "check_run created", "check_run completed", "check_suite completed",
			"check_run rerequested", "check_suite rerequested", "check_run requested_action"}
		got := ci.rc.WaitFor(t, checkEvents, want...)
		if len(got) != len(want) {
			t.Fatalf("the app received %q, want %q", got, want)
		}
		hookWant := []string{"check_run created", "check_run completed", "check_suite completed"}
		got = hook.WaitFor(t, checkEvents, hookWant...)
		if len(got) != len(hookWant) {
			t.Fatalf("the repository hook received %q, want %q", got, hookWant)
		}
	})
}

// TestChecksRefusals: only apps write checks (the platform's 403 for a
// user's token), an app updates only its own runs, and bad input gets a
// 422 that names the field.
func TestChecksRefusals(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	ctx := apptest.Ctx()
	octo := env.User("octo")
	org := env.Org("acme", octo)
	repo := env.Repo(org, "widget")
	token := env.Token(octo, "repo")
	ci := newCIApp(t, env, org, "CI Bot", nil, repo)
	other := newCIApp(t, env, org, "Other Bot", nil, repo)
	work := apptest.WorkTree(t, map[string]string{"a.txt": "1\n"})
	sha := strings.TrimSpace(apptest.Git(t, work, "rev-parse", "HEAD"))
	apptest.Git(t, work, "push", "-q", env.GitURL("acme", "widget", "octo", token), "HEAD:refs/heads/main")

	resp, body := env.DoJSON("POST", "/repos/acme/widget/check-runs", token, `{"name":"build","head_sha":"`+sha+`"}`)
	if e := apptest.WantError(t, "a user's token creates a run", resp, body, http.StatusForbidden); e.Message != "You must authenticate via a GitHub App." {
		t.Fatalf("message %q", e.Message)
	}
	run, _, err := ci.client.Checks.CreateCheckRun(ctx, "acme", "widget", github.CreateCheckRunOptions{Name: "build", HeadSHA: sha})
	apptest.Must(t, "create", err)
	if run.GetStatus() != "queued" {
		t.Fatalf("default status %q", run.GetStatus())
	}
	path := fmt.Sprintf("/repos/acme/widget/check-runs/%d", run.GetID())
	resp, body = env.DoJSON("PATCH", path, token, `{"status":"in_progress"}`)
	apptest.WantError(t, "a user's token updates a run", resp, body, http.StatusForbidden)
	_, resp2, err := other.client.Checks.UpdateCheckRun(ctx, "acme", "widget", run.GetID(), github.UpdateCheckRunOptions{Name: "build", Status: github.Ptr("completed"), Conclusion: github.Ptr("success")})
	if err == nil || resp2.StatusCode != http.StatusForbidden {
		t.Fatalf("another app updates the run: %v", err)
	}

	tooMany := make([]map[string]any, checks.MaxAnnotationsPerRequest+1)
	for i := range tooMany {
		tooMany[i] = map[string]any{"path": "a.txt", "start_line": 1, "end_line": 1, "annotation_level": "notice", "message": "m"}
	}
	many, _ := json.Marshal(map[string]any{"output": map[string]any{"title": "t", "summary": "s", "annotations": tooMany}})
	for _, c := range []struct{ what, method, path, body, field string }{
		{"completed without a conclusion", "PATCH", path, `{"status":"completed"}`, "conclusion"},
		{"a status Actions sets", "PATCH", path, `{"status":"waiting"}`, "status"},
		{"an unknown status", "PATCH", path, `{"status":"done"}`, "status"},
		{"an unknown conclusion", "PATCH", path, `{"conclusion":"great"}`, "conclusion"},
		{"completed_at without a conclusion", "PATCH", path, `{"completed_at":"2026-01-01T00:00:00Z"}`, "conclusion"},
		{"a bad started_at", "PATCH", path, `{"started_at":"yesterday"}`, "started_at"},
		{"an output without a summary", "PATCH", path, `{"output":{"title":"t"}}`, "output.summary"},
		{"51 annotations", "PATCH", path, string(many), "output.annotations"},
		{"an annotation without a level", "PATCH", path, `{"output":{"title":"t","summary":"s","annotations":[{"path":"a","start_line":1,"end_line":1,"message":"m"}]}}`, "output.annotations[0].annotation_level"},
		{"four actions", "PATCH", path, `{"actions":[{"label":"a","description":"d","identifier":"1"},{"label":"a","description":"d","identifier":"2"},{"label":"a","description":"d","identifier":"3"},{"label":"a","description":"d","identifier":"4"}]}`, "actions"},
		{"a run without a name", "POST", "/repos/acme/widget/check-runs", `{"head_sha":"` + sha + `"}`, "name"},
		{"a run without a head", "POST", "/repos/acme/widget/check-runs", `{"name":"x"}`, "head_sha"},
		{"a run of no commit", "POST", "/repos/acme/widget/check-runs", `{"name":"x","head_sha":"` + strings.Repeat("0", 40) + `"}`, "head_sha"},
	} {
		req, err := http.NewRequestWithContext(ctx, c.method, env.APIBase()+c.path, strings.NewReader(c.body))
		apptest.Must(t, "request", err)
		resp, err := ci.client.Client().Do(req)
		apptest.Must(t, c.what, err)
		var e apptest.ErrorBody
		_ = json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnprocessableEntity || len(e.Errors) == 0 || e.Errors[0].Field != c.field {
			t.Errorf("%s: %d %+v, want 422 on %s", c.what, resp.StatusCode, e, c.field)
		}
	}
	got, _, err := ci.client.Checks.GetCheckRun(ctx, "acme", "widget", run.GetID())
	apptest.Must(t, "get", err)
	if got.GetStatus() != "queued" || got.GetOutput().GetAnnotationsCount() != 0 {
		t.Fatalf("a refused update changed the run: %+v", got)
	}
	if resp, body := env.DoJSON("POST", path+"/rerequest", token, ""); resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("rerequest of a queued run: %d %s", resp.StatusCode, body)
	}
	if resp, _ := env.Do("GET", "/repos/acme/widget/check-runs/999999", token, nil); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown run: %d", resp.StatusCode)
	}
	for _, p := range []string{"/repos/acme/widget/commits/nope/check-runs", "/repos/acme/widget/commits/nope/check-suites"} {
		resp, body := env.Do("GET", p, token, nil)
		if e := apptest.WantError(t, p, resp, body, http.StatusUnprocessableEntity); e.Message != "No commit found for SHA: nope" {
			t.Fatalf("%s: %q", p, e.Message)
		}
	}
	for _, q := range []string{"?filter=some", "?status=done", "?app_id=x"} {
		resp, body := env.Do("GET", "/repos/acme/widget/commits/main/check-runs"+q, token, nil)
		apptest.WantError(t, "check runs "+q, resp, body, http.StatusUnprocessableEntity)
	}
}

// TestCheckSuitePreferences: with automatic suites off for an app, a push
// creates none for it; the app then creates its suite by hand (201, then
// 200 with the same suite).
func TestCheckSuitePreferences(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	ctx := apptest.Ctx()
	octo := env.User("octo")
	org := env.Org("acme", octo)
	repo := env.Repo(org, "widget")
	token := env.Token(octo, "repo")
	ci := newCIApp(t, env, org, "CI Bot", []string{"check_suite"}, repo)
	prefs, _, err := env.Client(token).Checks.SetCheckSuitePreferences(ctx, "acme", "widget", github.CheckSuitePreferenceOptions{
		AutoTriggerChecks: []*github.AutoTriggerCheck{{AppID: github.Ptr(ci.app.ID), Setting: github.Ptr(false)}}})
	apptest.Must(t, "preferences", err)
	if len(prefs.GetPreferences().AutoTriggerChecks) != 1 || prefs.GetRepository().GetFullName() != "acme/widget" {
		t.Fatalf("preferences: %+v", prefs)
	}
	work := apptest.WorkTree(t, map[string]string{"a.txt": "1\n"})
	sha := strings.TrimSpace(apptest.Git(t, work, "rev-parse", "HEAD"))
	apptest.Git(t, work, "push", "-q", env.GitURL("acme", "widget", "octo", token), "HEAD:refs/heads/main")
	suites, _, err := env.Client(token).Checks.ListCheckSuitesForRef(ctx, "acme", "widget", "main", nil)
	apptest.Must(t, "suites", err)
	if suites.GetTotal() != 0 {
		t.Fatalf("a push made suites with automatic suites off: %+v", suites)
	}
	suite, resp, err := ci.client.Checks.CreateCheckSuite(ctx, "acme", "widget", github.CreateCheckSuiteOptions{HeadSHA: sha})
	apptest.Must(t, "create suite", err)
	if resp.StatusCode != http.StatusCreated || suite.GetStatus() != "queued" || suite.GetHeadBranch() != "main" {
		t.Fatalf("created %d %+v", resp.StatusCode, suite)
	}
	again, resp, err := ci.client.Checks.CreateCheckSuite(ctx, "acme", "widget", github.CreateCheckSuiteOptions{HeadSHA: sha})
	apptest.Must(t, "create suite again", err)
	if resp.StatusCode != http.StatusOK || again.GetID() != suite.GetID() {
		t.Fatalf("again %d %+v", resp.StatusCode, again)
	}
	if resp, body := env.DoJSON("PATCH", "/repos/acme/widget/check-suites/preferences", token,
		`{"auto_trigger_checks":[{"app_id":999999,"setting":true}]}`); resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("an unknown app: %d %s", resp.StatusCode, body)
	}
}

// TestForkPullRequestRequestsSuite: a pull request from a fork requests
// a suite of its head in the base repository from the app installed
// there (no head branch, as the platform has it), and the app reports a
// run on that head.
func TestForkPullRequestRequestsSuite(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	ctx := apptest.Ctx()
	octo, bob := env.User("octo"), env.User("bob")
	base := env.Repo(octo, "hello")
	token := env.Token(octo, "repo")
	ci := newCIApp(t, env, octo, "CI Bot", []string{"check_suite"}, base)
	work := apptest.WorkTree(t, map[string]string{"a.txt": "1\n"})
	apptest.Git(t, work, "push", "-q", env.GitURL("octo", "hello", "octo", token), "HEAD:refs/heads/main")
	ci.rc.WaitFor(t, checkEvents, "check_suite requested")

	fork, err := env.App.Repos.Fork(ctx, base, bob, "hello", false, bob)
	apptest.Must(t, "fork", err)
	bobToken := env.Token(bob, "public_repo")
	apptest.Commit(t, work, "An idea", map[string]string{"idea.txt": "idea\n"})
	head := strings.TrimSpace(apptest.Git(t, work, "rev-parse", "HEAD"))
	apptest.Git(t, work, "push", "-q", env.GitURL("bob", fork.Name, "bob", bobToken), "HEAD:refs/heads/idea")
	_, _, err = env.Client(bobToken).PullRequests.Create(ctx, "octo", "hello", github.CreatePullRequest{Title: github.Ptr("Idea"),
		Head: "bob:idea", Base: "main"})
	apptest.Must(t, "open from the fork", err)
	ci.rc.WaitFor(t, checkEvents, "check_suite requested", "check_suite requested")
	var suite *github.CheckSuite
	for _, d := range ci.rc.Deliveries() {
		if e, ok := d.Parsed.(*github.CheckSuiteEvent); ok && e.GetCheckSuite().GetHeadSHA() == head {
			suite = e.GetCheckSuite()
		}
	}
	if suite == nil || suite.HeadBranch != nil || e2eRepo(t, env, token, suite.GetID()) != "octo/hello" {
		t.Fatalf("the fork head's suite: %+v", suite)
	}
	run, _, err := ci.client.Checks.CreateCheckRun(ctx, "octo", "hello", github.CreateCheckRunOptions{Name: "build", HeadSHA: head,
		Conclusion: github.Ptr("success")})
	apptest.Must(t, "a run on the fork's head", err)
	if run.GetCheckSuite().GetID() != suite.GetID() || run.GetStatus() != "completed" {
		t.Fatalf("run %+v", run)
	}
}

// e2eRepo is the full name of the repository of the suite, read back.
func e2eRepo(t *testing.T, env *apptest.Env, token string, suiteID int64) string {
	t.Helper()
	s, _, err := env.Client(token).Checks.GetCheckSuite(apptest.Ctx(), "octo", "hello", suiteID)
	apptest.Must(t, "suite", err)
	return s.GetRepository().GetFullName()
}

// TestOutcomes: what branch protection reads of a commit: each check
// run name's latest run (success for success, neutral and skipped;
// pending until completed) with its app, and each status context's
// latest status (error counts as failure), without an app.
func TestOutcomes(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo")
	repo := env.Repo(octo, "hello")
	token := env.Token(octo, "repo")
	ci := newCIApp(t, env, octo, "CI Bot", nil, repo)
	work := apptest.WorkTree(t, map[string]string{"a.txt": "1\n"})
	sha := strings.TrimSpace(apptest.Git(t, work, "rev-parse", "HEAD"))
	apptest.Git(t, work, "push", "-q", env.GitURL("octo", "hello", "octo", token), "HEAD:refs/heads/main")
	for name, conclusion := range map[string]string{"ok": "success", "meh": "neutral", "skip": "skipped", "bad": "failure", "slow": ""} {
		opts := github.CreateCheckRunOptions{Name: name, HeadSHA: sha, Status: github.Ptr("in_progress")}
		if conclusion != "" {
			opts.Conclusion = github.Ptr(conclusion)
		}
		_, _, err := ci.client.Checks.CreateCheckRun(ctx, "octo", "hello", opts)
		apptest.Must(t, "run "+name, err)
	}
	// A later run of a name replaces the earlier one.
	_, _, err := ci.client.Checks.CreateCheckRun(ctx, "octo", "hello", github.CreateCheckRunOptions{Name: "bad", HeadSHA: sha, Conclusion: github.Ptr("success")})
	apptest.Must(t, "run bad again", err)
	for ctxName, state := range map[string]string{"lint": "success", "e2e": "pending", "sec": "error"} {
		_, _, err := env.Client(token).Repositories.CreateStatus(ctx, "octo", "hello", sha, github.RepoStatus{State: github.Ptr(state), Context: github.Ptr(ctxName)})
		apptest.Must(t, "status "+ctxName, err)
	}
	got, err := checks.Outcomes(ctx, env.Q(), repo.ID, sha)
	apptest.Must(t, "outcomes", err)
	app := ci.app.ID
	want := map[string]checks.Outcome{
		"ok": {Name: "ok", State: "success", AppID: app}, "meh": {Name: "meh", State: "success", AppID: app}, "skip": {Name: "skip", State: "success", AppID: app},
		"bad": {Name: "bad", State: "success", AppID: app}, "slow": {Name: "slow", State: "pending", AppID: app},
		"lint": {Name: "lint", State: "success", AppID: 0}, "e2e": {Name: "e2e", State: "pending", AppID: 0}, "sec": {Name: "sec", State: "failure", AppID: 0},
	}
	if len(got) != len(want) {
		t.Fatalf("outcomes %+v, want %+v", got, want)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("outcome %s: %+v, want %+v", k, got[k], w)
		}
	}
}

// TestRunsCompletingTogetherCompleteTheirSuite has an app complete two
// runs of one suite at once, each held at its commit until both have
// done their reads (apptest.CommitGate): the suite completes with
// success. Each completion rolls the suite up; reading the suite's runs
// without its row locked first, each saw the other run in progress and
// the suite stayed in progress for good. PostgreSQL only.
func TestRunsCompletingTogetherCompleteTheirSuite(t *testing.T) {
	apptest.SkipUnlessPostgres(t, "concurrent transactions that overlap (CommitGate)")
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo")
	org := env.Org("acme", octo)
	repo := env.Repo(org, "widget")
	ci := newCIApp(t, env, org, "CI Bot", nil, repo)
	work := apptest.WorkTree(t, map[string]string{"main.go": "package main\n"})
	sha := strings.TrimSpace(apptest.Git(t, work, "rev-parse", "HEAD"))
	apptest.Git(t, work, "push", "-q", env.GitURL("acme", "widget", "octo", env.Token(octo, "repo")), "HEAD:refs/heads/main")
	names := []string{"build", "test"}
	var ids []int64
	var suiteID int64
	for _, name := range names {
		run, _, err := ci.client.Checks.CreateCheckRun(ctx, "acme", "widget", github.CreateCheckRunOptions{
			Name: name, HeadSHA: sha, Status: github.Ptr("in_progress")})
		apptest.Must(t, "create check run "+name, err)
		ids, suiteID = append(ids, run.GetID()), run.GetCheckSuite().GetID()
	}

	complete := func(i int) func() int {
		return func() int {
			_, resp, _ := ci.client.Checks.UpdateCheckRun(ctx, "acme", "widget", ids[i], github.UpdateCheckRunOptions{
				Name: names[i], Conclusion: github.Ptr("success")})
			return apptest.ResponseStatus(resp)
		}
	}
	gate := env.CommitGate(t, "UPDATE", "check_runs", "NEW.status = 'completed' AND OLD.status <> 'completed'")
	if got := gate.Run(complete(0), complete(1)); got[0] != http.StatusOK || got[1] != http.StatusOK {
		t.Fatalf("completing the runs answered %v", got)
	}
	suite, _, err := ci.client.Checks.GetCheckSuite(ctx, "acme", "widget", suiteID)
	apptest.Must(t, "get the suite", err)
	if suite.GetStatus() != "completed" || suite.GetConclusion() != "success" {
		t.Fatalf("suite %s %s, want completed success", suite.GetStatus(), suite.GetConclusion())
	}
}

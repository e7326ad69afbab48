package repository_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/testwait"
	"forgeapi/internal/webhooks"
)

// signedReceiver is a deploy tool's webhook endpoint written as one is
// written without go-github: it checks X-Hub-Signature-256 (HMAC-SHA256
// of the body with the secret) itself and keeps what verified.
type signedReceiver struct {
	URL    string
	secret []byte
	mu     sync.Mutex
	got    []map[string]any // the payloads, with "event" added
	bad    int              // deliveries whose signature did not verify
}

func newSignedReceiver(t *testing.T, secret string) *signedReceiver {
	rc := &signedReceiver{secret: []byte(secret)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		mac := hmac.New(sha256.New, rc.secret)
		mac.Write(body)
		want := "sha256=" + hex.EncodeToString(mac.Sum(nil))
		var payload map[string]any
		rc.mu.Lock()
		defer rc.mu.Unlock()
		if err != nil || !hmac.Equal([]byte(r.Header.Get("X-Hub-Signature-256")), []byte(want)) || json.Unmarshal(body, &payload) != nil {
			rc.bad++
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		apptest.CheckWebhook(t, r.Header.Get("X-GitHub-Event"), body)
		payload["event"] = r.Header.Get("X-GitHub-Event")
		rc.got = append(rc.got, payload)
	}))
	t.Cleanup(srv.Close)
	rc.URL = srv.URL
	return rc
}

// states are the deployment_status states received for the deployment.
func (rc *signedReceiver) states(id int64) (states []string, bad int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, p := range rc.got {
		d, _ := p["deployment"].(map[string]any)
		s, _ := p["deployment_status"].(map[string]any)
		if p["event"] == "deployment_status" && d != nil && s != nil && int64(d["id"].(float64)) == id {
			states = append(states, s["state"].(string))
		}
	}
	return states, rc.bad
}

// TestCIStory chains what a CI app, branch protection and a deploy tool
// do with one change, as the tests describe: a push requests a
// check suite from the CI app (ghinstallation + go-github, signed
// webhook); the app reports its run in progress, then failed with an
// annotation; the pull request's merge is refused while the check is
// required; the user's re-run request reaches the app, whose new run
// succeeds, and the merge goes through; a deployment of the merge commit
// gets statuses, and their deployment_status deliveries arrive signed
// (X-Hub-Signature-256 checked by hand) at the deploy tool's endpoint.
func TestCIStory(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	ctx := apptest.Ctx()
	octo := env.User("octo")
	repo := env.Repo(octo, "hello")
	token := env.Token(octo, "repo", "admin:repo_hook")
	owner := env.Client(token)
	appHook := apptest.NewReceiver(t, "ci-s3cret")
	a := env.RegisterApp(octo, "CI", "checks:write,contents:read", apptest.AppOpts{
		Events: []string{"check_suite", "check_run"}, WebhookURL: appHook.URL, WebhookSecret: "ci-s3cret"})
	inst := env.Install(a, octo, repo)
	atr, err := ghinstallation.NewAppsTransport(env.Transport(), a.ID, a.PrivateKeyPEM)
	apptest.Must(t, "app transport", err)
	atr.BaseURL = env.APIBase()
	ci := env.ClientWith(ghinstallation.NewFromAppsTransport(atr, inst.ID))
	deployHook := newSignedReceiver(t, "deploy-s3cret")
	_, _, err = owner.Repositories.CreateHook(ctx, "octo", "hello", &github.Hook{Events: []string{"deployment_status"},
		Config: &github.HookConfig{URL: github.Ptr(deployHook.URL), ContentType: github.Ptr("json"), Secret: github.Ptr("deploy-s3cret")}})
	apptest.Must(t, "the deploy tool's hook", err)

	dir := apptest.WorkTree(t, map[string]string{"README.md": "# hello\n"})
	apptest.Git(t, dir, "remote", "add", "origin", env.GitURL("octo", "hello", "octo", token))
	apptest.Git(t, dir, "push", "-q", "origin", "main")
	_, _, err = owner.Repositories.UpdateBranchProtection(ctx, "octo", "hello", "main", &github.ProtectionRequest{
		RequiredStatusChecks: &github.RequiredStatusChecks{Checks: &[]*github.RequiredStatusCheck{{Context: "ci", AppID: github.Ptr(a.ID)}}},
		EnforceAdmins:        true})
	apptest.Must(t, "protect main", err)
	suiteEvents := func(d apptest.Delivery) string {
		if e, ok := d.Parsed.(*github.CheckSuiteEvent); ok && e.GetCheckSuite().GetHeadBranch() == "feature" {
			return "check_suite " + e.GetAction()
		}
		if e, ok := d.Parsed.(*github.CheckRunEvent); ok && e.GetAction() == "rerequested" {
			return "check_run rerequested"
		}
		return ""
	}

	var head string
	var number int
	apptest.Step(t, "a push requests a suite from the CI app", func(t *testing.T) {
		apptest.Git(t, dir, "checkout", "-q", "-b", "feature")
		head = apptest.Commit(t, dir, "Add one", map[string]string{"one.go": "package one\n"})
		apptest.Git(t, dir, "push", "-q", "origin", "feature")
		appHook.WaitFor(t, suiteEvents, "check_suite requested")
		for _, d := range appHook.Deliveries() {
			if e, ok := d.Parsed.(*github.CheckSuiteEvent); ok && e.GetCheckSuite().GetHeadBranch() == "feature" &&
				(e.GetCheckSuite().GetHeadSHA() != head || e.GetInstallation().GetID() != inst.ID) {
				t.Fatalf("check_suite requested %+v", e)
			}
		}
		pr, _, err := owner.PullRequests.Create(ctx, "octo", "hello", github.CreatePullRequest{Title: github.Ptr("One"), Head: "feature", Base: "main"})
		apptest.Must(t, "open the pull request", err)
		number = pr.GetNumber()
	})
	var run *github.CheckRun
	apptest.Step(t, "the app reports the run in progress, then failed with an annotation", func(t *testing.T) {
		run, _, err = ci.Checks.CreateCheckRun(ctx, "octo", "hello", github.CreateCheckRunOptions{Name: "ci", HeadSHA: head,
			Status: github.Ptr("in_progress")})
		apptest.Must(t, "create the run", err)
		_, _, err = ci.Checks.UpdateCheckRun(ctx, "octo", "hello", run.GetID(), github.UpdateCheckRunOptions{Name: "ci",
			Conclusion: github.Ptr("failure"), Output: &github.CheckRunOutput{Title: github.Ptr("1 error"), Summary: github.Ptr("vet failed"),
				Annotations: []*github.CheckRunAnnotation{{Path: github.Ptr("one.go"), StartLine: github.Ptr(1), EndLine: github.Ptr(1),
					AnnotationLevel: github.Ptr("failure"), Message: github.Ptr("missing doc comment")}}}})
		apptest.Must(t, "fail the run", err)
		anns, _, err := owner.Checks.ListCheckRunAnnotations(ctx, "octo", "hello", run.GetID(), nil)
		apptest.Must(t, "annotations", err)
		if len(anns) != 1 || anns[0].GetMessage() != "missing doc comment" {
			t.Fatalf("annotations %+v", anns)
		}
	})
	apptest.Step(t, "the merge is refused while the required check fails", func(t *testing.T) {
		_, resp, err := owner.PullRequests.Merge(ctx, "octo", "hello", number, "", nil)
		if apptest.ResponseStatus(resp) != http.StatusMethodNotAllowed || err == nil || !strings.Contains(err.Error(), `Required status check "ci" is failing.`) {
			t.Fatalf("merge with a failing required check: %d %v", apptest.ResponseStatus(resp), err)
		}
		testwait.Until(t, "mergeable_state blocked", func() bool {
			pr, _, err := owner.PullRequests.Get(ctx, "octo", "hello", number)
			return err == nil && pr.GetMergeableState() == "blocked"
		})
	})
	apptest.Step(t, "a re-run reaches the app and succeeds; the merge goes through", func(t *testing.T) {
		_, err := ci.Checks.ReRequestCheckRun(ctx, "octo", "hello", run.GetID())
		apptest.Must(t, "re-run", err)
		appHook.WaitFor(t, suiteEvents, "check_suite requested", "check_run rerequested")
		_, _, err = ci.Checks.CreateCheckRun(ctx, "octo", "hello", github.CreateCheckRunOptions{Name: "ci", HeadSHA: head,
			Conclusion: github.Ptr("success")})
		apptest.Must(t, "the new run succeeds", err)
		res, _, err := owner.PullRequests.Merge(ctx, "octo", "hello", number, "", nil)
		apptest.Must(t, "merge", err)
		if !res.GetMerged() || res.GetSHA() == "" {
			t.Fatalf("merge %+v", res)
		}
		br, _, err := owner.Repositories.GetBranch(ctx, "octo", "hello", "main", 0)
		apptest.Must(t, "main", err)
		if br.GetCommit().GetSHA() != res.GetSHA() {
			t.Fatalf("main at %s, merged %s", br.GetCommit().GetSHA(), res.GetSHA())
		}
	})
	apptest.Step(t, "the merge commit is deployed; its statuses arrive signed", func(t *testing.T) {
		br, _, err := owner.Repositories.GetBranch(ctx, "octo", "hello", "main", 0)
		apptest.Must(t, "main", err)
		merged := br.GetCommit().GetSHA()
		d, _, err := owner.Repositories.CreateDeployment(ctx, "octo", "hello", github.DeploymentRequest{Ref: merged,
			Environment: github.Ptr("production"), AutoMerge: github.Ptr(false)})
		apptest.Must(t, "deploy the merge commit", err)
		if d.GetSHA() != merged {
			t.Fatalf("deployment %+v", d)
		}
		for _, state := range []string{"in_progress", "success"} {
			_, _, err := owner.Repositories.CreateDeploymentStatus(ctx, "octo", "hello", d.GetID(), github.DeploymentStatusRequest{
				State: state, EnvironmentURL: github.Ptr("https://hello.example")})
			apptest.Must(t, "status "+state, err)
		}
		testwait.For(t, "deployment_status in_progress and success, signed", func() error {
			got, bad := deployHook.states(d.GetID())
			slices.Sort(got) // deliveries may arrive in either order
			if strings.Join(got, ",") != "in_progress,success" {
				return fmt.Errorf("states %v, %d deliveries with a bad signature", got, bad)
			}
			return nil
		})
		if _, bad := deployHook.states(d.GetID()); bad != 0 {
			t.Fatalf("%d deliveries failed their X-Hub-Signature-256", bad)
		}
	})
}

package repository_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// TestRequiredCheckRun: a required check named by context and app is
// satisfied by that app's check run, not by a commit status of the same
// name: the merge is refused while the run is in progress and after it
// failed, and goes through once it succeeds.
func TestRequiredCheckRun(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo")
	repo := env.Repo(octo, "hello")
	token := env.Token(octo, "repo")
	owner := env.Client(token)
	a := env.RegisterApp(octo, "CI", "checks:write,contents:read")
	inst := env.Install(a, octo, repo)
	atr, err := ghinstallation.NewAppsTransport(env.Transport(), a.ID, a.PrivateKeyPEM)
	apptest.Must(t, "app transport", err)
	atr.BaseURL = env.APIBase()
	ci := env.ClientWith(ghinstallation.NewFromAppsTransport(atr, inst.ID))

	dir := apptest.WorkTree(t, map[string]string{"README.md": "# hello\n"})
	apptest.Git(t, dir, "remote", "add", "origin", env.GitURL("octo", "hello", "octo", token))
	apptest.Git(t, dir, "push", "-q", "origin", "main")
	_, _, err = owner.Repositories.UpdateBranchProtection(ctx, "octo", "hello", "main", &github.ProtectionRequest{
		RequiredStatusChecks: &github.RequiredStatusChecks{Checks: &[]*github.RequiredStatusCheck{{Context: "ci", AppID: github.Ptr(a.ID)}}},
		EnforceAdmins:        true})
	apptest.Must(t, "protect", err)
	apptest.Git(t, dir, "checkout", "-q", "-b", "feature")
	head := apptest.Commit(t, dir, "one", map[string]string{"one.txt": "1\n"})
	apptest.Git(t, dir, "push", "-q", "origin", "feature")
	pr, _, err := owner.PullRequests.Create(ctx, "octo", "hello", github.CreatePullRequest{Title: github.Ptr("One"), Head: "feature", Base: "main"})
	apptest.Must(t, "open", err)
	n := pr.GetNumber()
	refused := func(what, want string) {
		t.Helper()
		_, resp, err := owner.PullRequests.Merge(ctx, "octo", "hello", n, "", nil)
		if apptest.ResponseStatus(resp) != http.StatusMethodNotAllowed || err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("merge %s: %v, want 405 %q", what, err, want)
		}
	}

	_, _, err = owner.Repositories.CreateStatus(ctx, "octo", "hello", head, github.RepoStatus{State: github.Ptr("success"), Context: github.Ptr("ci")})
	apptest.Must(t, "a status named ci", err)
	refused("with a status of the name but no run of the app", `Required status check "ci" is expected.`)
	run, _, err := ci.Checks.CreateCheckRun(ctx, "octo", "hello", github.CreateCheckRunOptions{Name: "ci", HeadSHA: head, Status: github.Ptr("in_progress")})
	apptest.Must(t, "create run", err)
	refused("while the run is in progress", `Required status check "ci" is in progress.`)
	_, _, err = ci.Checks.UpdateCheckRun(ctx, "octo", "hello", run.GetID(), github.UpdateCheckRunOptions{Name: "ci", Conclusion: github.Ptr("failure")})
	apptest.Must(t, "fail run", err)
	refused("after the run failed", `Required status check "ci" is failing.`)
	_, err = ci.Checks.ReRequestCheckRun(ctx, "octo", "hello", run.GetID())
	apptest.Must(t, "rerequest", err)
	run2, _, err := ci.Checks.CreateCheckRun(ctx, "octo", "hello", github.CreateCheckRunOptions{Name: "ci", HeadSHA: head, Conclusion: github.Ptr("success")})
	apptest.Must(t, "a new run succeeds", err)
	if run2.GetStatus() != "completed" {
		t.Fatalf("run %+v", run2)
	}
	if _, _, err := owner.PullRequests.Merge(ctx, "octo", "hello", n, "", nil); err != nil {
		t.Fatalf("merge after the run succeeded: %v", err)
	}
}

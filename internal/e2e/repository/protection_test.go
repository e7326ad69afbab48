package repository_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/testwait"
	"forgeapi/internal/webhooks"
)

// push pushes refspec from dir and returns git's output and error.
func push(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	return apptest.TryGit(t, dir, append([]string{"push", "origin"}, args...)...)
}

// wantRefused fails unless the push was refused with the GH006 line and
// each reason line.
func wantRefused(t *testing.T, out string, err error, reasons ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("push accepted:\n%s", out)
	}
	for _, line := range append([]string{"remote: error: GH006: Protected branch update failed for refs/heads/main."}, reasons...) {
		if !strings.Contains(out, line) {
			t.Fatalf("push output lacks %q:\n%s", line, out)
		}
	}
}

// graphQL posts the query with the token and returns its data, failing
// on errors.
func graphQL(t *testing.T, env *apptest.Env, token, query string) map[string]any {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"query": query})
	resp, raw := env.DoJSON("POST", "/api/graphql", token, string(body))
	apptest.WantStatus(t, "graphql", resp, raw, http.StatusOK)
	var out struct {
		Data   map[string]any
		Errors []any
	}
	if err := json.Unmarshal(raw, &out); err != nil || len(out.Errors) > 0 {
		t.Fatalf("graphql: %v %s", err, raw)
	}
	return out.Data
}

// TestBranchProtectionStory sets a branch's protection as Terraform does
// and reads it back, then has it enforced on git pushes, the contents
// API and merges, for writers and administrators, and removes it; every
// branch_protection_rule delivery matches the platform's schema.
func TestBranchProtectionStory(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	ctx := apptest.Ctx()
	octo, bob := env.User("octo"), env.User("bob")
	env.Repo(octo, "hello")
	token, bobToken := env.Token(octo, "repo", "admin:repo_hook"), env.Token(bob, "repo")
	owner, writer := env.Client(token), env.Client(bobToken)
	inv, _, err := owner.Repositories.AddCollaborator(ctx, "octo", "hello", "bob", &github.RepositoryAddCollaboratorOptions{Permission: "push"})
	apptest.Must(t, "invite bob", err)
	_, err = writer.Users.AcceptInvitation(ctx, inv.GetID())
	apptest.Must(t, "accept", err)
	rc := apptest.NewReceiver(t, "s")
	_, _, err = owner.Repositories.CreateHook(ctx, "octo", "hello", &github.Hook{Events: []string{"branch_protection_rule", "pull_request_review"},
		Config: &github.HookConfig{URL: github.Ptr(rc.URL), ContentType: github.Ptr("json"), Secret: github.Ptr("s")}})
	apptest.Must(t, "hook", err)
	dir := apptest.WorkTree(t, map[string]string{"README.md": "# hello\n"})
	apptest.Git(t, dir, "remote", "add", "origin", env.GitURL("octo", "hello", "bob", bobToken))
	apptest.Git(t, dir, "push", "-q", "origin", "main")
	adminDir := t.TempDir()
	apptest.Git(t, adminDir, "clone", "-q", env.GitURL("octo", "hello", "octo", token), ".")

	apptest.Step(t, "an unprotected branch has no protection", func(t *testing.T) {
		_, resp, err := owner.Repositories.GetBranchProtection(ctx, "octo", "hello", "main")
		if apptest.ResponseStatus(resp) != http.StatusNotFound || !errors.Is(err, github.ErrBranchNotProtected) {
			t.Fatalf("GET protection of an unprotected branch: %v", err)
		}
		_, resp, _ = owner.Repositories.GetBranchProtection(ctx, "octo", "hello", "nope")
		if apptest.ResponseStatus(resp) != http.StatusNotFound {
			t.Fatalf("GET protection of a missing branch: %d", apptest.ResponseStatus(resp))
		}
	})

	apptest.Step(t, "the protection is set and read back equal, with its sub-resources", func(t *testing.T) {
		set, _, err := owner.Repositories.UpdateBranchProtection(ctx, "octo", "hello", "main", &github.ProtectionRequest{
			RequiredStatusChecks:           &github.RequiredStatusChecks{Strict: true, Contexts: &[]string{"ci"}},
			RequiredPullRequestReviews:     &github.PullRequestReviewsEnforcementRequest{RequiredApprovingReviewCount: 1, DismissStaleReviews: true},
			EnforceAdmins:                  false,
			AllowForcePushes:               github.Ptr(false),
			RequiredConversationResolution: github.Ptr(true),
		})
		apptest.Must(t, "PUT protection", err)
		got, _, err := owner.Repositories.GetBranchProtection(ctx, "octo", "hello", "main")
		apptest.Must(t, "GET protection", err)
		a, _ := json.Marshal(set)
		b, _ := json.Marshal(got)
		if string(a) != string(b) {
			t.Fatalf("read back differs:\nPUT %s\nGET %s", a, b)
		}
		if c := got.GetRequiredStatusChecks(); !c.Strict || !slices.Equal(*c.Contexts, []string{"ci"}) ||
			got.GetRequiredPullRequestReviews().RequiredApprovingReviewCount != 1 || !got.GetRequiredConversationResolution().Enabled ||
			got.GetEnforceAdmins().Enabled || got.GetAllowForcePushes().Enabled {
			t.Fatalf("protection: %s", b)
		}
		contexts, _, err := owner.Repositories.ListRequiredStatusChecksContexts(ctx, "octo", "hello", "main")
		apptest.Must(t, "contexts", err)
		if !slices.Equal(contexts, []string{"ci"}) {
			t.Fatalf("contexts: %v", contexts)
		}
		checks, _, err := owner.Repositories.UpdateRequiredStatusChecks(ctx, "octo", "hello", "main",
			&github.RequiredStatusChecksRequest{Strict: github.Ptr(false), Checks: []*github.RequiredStatusCheck{{Context: "ci"}, {Context: "lint"}}})
		apptest.Must(t, "PATCH checks", err)
		if checks.Strict || !slices.Equal(*checks.Contexts, []string{"ci", "lint"}) {
			t.Fatalf("patched checks: %+v", checks)
		}
		resp, body := env.DoJSON("DELETE", "/repos/octo/hello/branches/main/protection/required_status_checks/contexts", token, `["lint"]`)
		apptest.WantStatus(t, "remove lint", resp, body, http.StatusOK)
		if string(body) != `["ci"]`+"\n" && string(body) != `["ci"]` {
			t.Fatalf("contexts after removing lint: %s", body)
		}
		sig, _, err := owner.Repositories.RequireSignaturesOnProtectedBranch(ctx, "octo", "hello", "main")
		apptest.Must(t, "require signatures", err)
		if !sig.GetEnabled() {
			t.Fatal("signatures not required")
		}
		_, err = owner.Repositories.OptionalSignaturesOnProtectedBranch(ctx, "octo", "hello", "main")
		apptest.Must(t, "signatures optional", err)
		rv, _, err := owner.Repositories.GetPullRequestReviewEnforcement(ctx, "octo", "hello", "main")
		apptest.Must(t, "reviews", err)
		if rv.RequiredApprovingReviewCount != 1 || !rv.DismissStaleReviews {
			t.Fatalf("reviews: %+v", rv)
		}
		branch, _, err := owner.Repositories.GetBranch(ctx, "octo", "hello", "main", 0)
		apptest.Must(t, "branch", err)
		if !branch.GetProtected() || !slices.Equal(branch.GetProtection().GetRequiredStatusChecks().GetContexts(), []string{"ci"}) {
			t.Fatalf("branch protected %v, contexts %v", branch.GetProtected(), branch.GetProtection().GetRequiredStatusChecks().GetContexts())
		}
		resp, body = env.Get("/repos/octo/hello/branches/main/protection", "token "+bobToken)
		apptest.WantStatus(t, "a writer reads the protection", resp, body, http.StatusForbidden)
		rc.WaitFor(t, apptest.EventAction, "branch_protection_rule created", "branch_protection_rule edited")
	})

	apptest.Step(t, "GraphQL shows the rule on the repository and on the branch", func(t *testing.T) {
		data := graphQL(t, env, token, `{ repository(owner: "octo", name: "hello") {
			branchProtectionRules(first: 10) { totalCount nodes { pattern requiresApprovingReviews requiredApprovingReviewCount
				requiresStatusChecks requiredStatusCheckContexts requiresStrictStatusChecks isAdminEnforced allowsForcePushes
				dismissesStaleReviews requiresConversationResolution } }
			ref(qualifiedName: "refs/heads/main") { branchProtectionRule { pattern } } } }`)
		got, _ := json.Marshal(data["repository"])
		want := `{"branchProtectionRules":{"nodes":[{"allowsForcePushes":false,"dismissesStaleReviews":true,"isAdminEnforced":false,` +
			`"pattern":"main","requiredApprovingReviewCount":1,"requiredStatusCheckContexts":["ci"],"requiresApprovingReviews":true,` +
			`"requiresConversationResolution":true,"requiresStatusChecks":true,"requiresStrictStatusChecks":false}],"totalCount":1},` +
			`"ref":{"branchProtectionRule":{"pattern":"main"}}}`
		if string(got) != want {
			t.Fatalf("GraphQL rules:\n got %s\nwant %s", got, want)
		}
	})

	apptest.Step(t, "a writer's direct push and contents write are refused", func(t *testing.T) {
		apptest.Commit(t, dir, "direct", map[string]string{"direct.txt": "x\n"})
		out, err := push(t, dir, "main")
		wantRefused(t, out, err, "remote: - Changes must be made through a pull request.", `remote: - Required status check "ci" is expected.`)
		apptest.Git(t, dir, "reset", "-q", "--hard", "origin/main")
		_, resp, err := writer.Repositories.CreateFile(ctx, "octo", "hello", "api.txt", &github.RepositoryContentFileOptions{
			Message: github.Ptr("api"), Content: []byte("x\n"), Branch: github.Ptr("main")})
		if apptest.ResponseStatus(resp) != http.StatusConflict || !strings.Contains(err.Error(), "Changes must be made through a pull request.") {
			t.Fatalf("contents write: %v", err)
		}
	})

	apptest.Step(t, "deletion and force pushes are refused", func(t *testing.T) {
		out, err := push(t, dir, ":main")
		wantRefused(t, out, err, "remote: - Cannot delete this protected branch")
		apptest.Git(t, dir, "commit", "-q", "--amend", "-m", "rewritten")
		out, err = push(t, dir, "+main")
		wantRefused(t, out, err, "remote: - Cannot force-push to this branch")
		apptest.Git(t, dir, "reset", "-q", "--hard", "origin/main")
	})

	apptest.Step(t, "a merge waits for the approval and the required status check", func(t *testing.T) {
		apptest.Git(t, dir, "checkout", "-q", "-b", "feature")
		head := apptest.Commit(t, dir, "feature", map[string]string{"feature.txt": "f\n"})
		apptest.Git(t, dir, "push", "-q", "origin", "feature")
		pr, _, err := writer.PullRequests.Create(ctx, "octo", "hello", github.CreatePullRequest{Title: github.Ptr("Feature"), Head: "feature", Base: "main"})
		apptest.Must(t, "open", err)
		n := pr.GetNumber()
		state := func() string {
			p, _, err := writer.PullRequests.Get(ctx, "octo", "hello", n)
			apptest.Must(t, "get pull", err)
			return p.GetMergeableState()
		}
		testwait.Until(t, "mergeable_state blocked", func() bool { return state() == "blocked" })
		q := fmt.Sprintf(`{ repository(owner: "octo", name: "hello") { pullRequest(number: %d) { mergeStateStatus reviewDecision } } }`, n)
		if got, _ := json.Marshal(graphQL(t, env, bobToken, q)); string(got) != `{"repository":{"pullRequest":{"mergeStateStatus":"BLOCKED","reviewDecision":"REVIEW_REQUIRED"}}}` {
			t.Fatalf("GraphQL merge state: %s", got)
		}
		_, resp, err := writer.PullRequests.Merge(ctx, "octo", "hello", n, "", nil)
		if apptest.ResponseStatus(resp) != http.StatusMethodNotAllowed || !strings.Contains(err.Error(), "At least 1 approving review is required by reviewers with write access.") {
			t.Fatalf("merge without approval: %v", err)
		}
		_, _, err = owner.PullRequests.CreateReview(ctx, "octo", "hello", n, &github.PullRequestReviewRequest{Event: github.Ptr("APPROVE")})
		apptest.Must(t, "approve", err)
		head = apptest.Commit(t, dir, "more", map[string]string{"more.txt": "m\n"})
		apptest.Git(t, dir, "push", "-q", "origin", "feature")
		reviews, _, err := writer.PullRequests.ListReviews(ctx, "octo", "hello", n, nil)
		apptest.Must(t, "reviews", err)
		if len(reviews) != 1 || reviews[0].GetState() != "DISMISSED" {
			t.Fatalf("the stale approval is not dismissed: %v", reviews)
		}
		_, resp, err = writer.PullRequests.Merge(ctx, "octo", "hello", n, "", nil)
		if apptest.ResponseStatus(resp) != http.StatusMethodNotAllowed || !strings.Contains(err.Error(), "At least 1 approving review is required") {
			t.Fatalf("merge after the approval went stale: %v", err)
		}
		rc.WaitFor(t, apptest.EventAction, "pull_request_review dismissed")
		_, _, err = owner.PullRequests.CreateReview(ctx, "octo", "hello", n, &github.PullRequestReviewRequest{Event: github.Ptr("APPROVE")})
		apptest.Must(t, "approve again", err)
		_, resp, err = writer.PullRequests.Merge(ctx, "octo", "hello", n, "", nil)
		if apptest.ResponseStatus(resp) != http.StatusMethodNotAllowed || !strings.Contains(err.Error(), `Required status check "ci" is expected.`) {
			t.Fatalf("merge without the check: %v", err)
		}
		_, _, err = writer.Repositories.CreateStatus(ctx, "octo", "hello", head, github.RepoStatus{State: github.Ptr("failure"), Context: github.Ptr("ci")})
		apptest.Must(t, "status failure", err)
		_, resp, err = writer.PullRequests.Merge(ctx, "octo", "hello", n, "", nil)
		if apptest.ResponseStatus(resp) != http.StatusMethodNotAllowed || !strings.Contains(err.Error(), `Required status check "ci" is failing.`) {
			t.Fatalf("merge with a failing check: %v", err)
		}
		_, _, err = writer.Repositories.CreateStatus(ctx, "octo", "hello", head, github.RepoStatus{State: github.Ptr("success"), Context: github.Ptr("ci")})
		apptest.Must(t, "status success", err)
		_, _, err = writer.Repositories.CreateStatus(ctx, "octo", "hello", head, github.RepoStatus{State: github.Ptr("failure"), Context: github.Ptr("optional")})
		apptest.Must(t, "optional status", err)
		// The mergeability may be recomputing (unknown) for a moment.
		testwait.For(t, "mergeable_state unstable with a failing optional check", func() error {
			if got := state(); got != "unstable" {
				return fmt.Errorf("mergeable_state %q", got)
			}
			return nil
		})
		res, _, err := writer.PullRequests.Merge(ctx, "octo", "hello", n, "", &github.PullRequestOptions{MergeMethod: "squash"})
		apptest.Must(t, "merge", err)
		if !res.GetMerged() {
			t.Fatalf("merge: %+v", res)
		}
	})

	apptest.Step(t, "administrators bypass the protection unless it is enforced for them", func(t *testing.T) {
		apptest.Git(t, adminDir, "pull", "-q", "origin", "main")
		apptest.Commit(t, adminDir, "admin direct", map[string]string{"admin.txt": "a\n"})
		apptest.Git(t, adminDir, "push", "-q", "origin", "main")
		en, _, err := owner.Repositories.AddAdminEnforcement(ctx, "octo", "hello", "main")
		apptest.Must(t, "enforce admins", err)
		if !en.Enabled {
			t.Fatal("admins not enforced")
		}
		apptest.Commit(t, adminDir, "admin again", map[string]string{"admin.txt": "b\n"})
		out, err := push(t, adminDir, "main")
		wantRefused(t, out, err, "remote: - Changes must be made through a pull request.")
		_, err = owner.Repositories.RemoveAdminEnforcement(ctx, "octo", "hello", "main")
		apptest.Must(t, "admins bypass again", err)
		apptest.Git(t, adminDir, "push", "-q", "origin", "main")
	})

	apptest.Step(t, "the protection is removed", func(t *testing.T) {
		_, err := owner.Repositories.RemoveBranchProtection(ctx, "octo", "hello", "main")
		apptest.Must(t, "DELETE protection", err)
		_, resp, _ := owner.Repositories.GetBranchProtection(ctx, "octo", "hello", "main")
		if apptest.ResponseStatus(resp) != http.StatusNotFound {
			t.Fatalf("GET after DELETE: %d", apptest.ResponseStatus(resp))
		}
		rc.WaitFor(t, apptest.EventAction, "branch_protection_rule deleted")
		apptest.Git(t, dir, "checkout", "-q", "main")
		apptest.Git(t, dir, "fetch", "-q", "origin")
		apptest.Git(t, dir, "reset", "-q", "--hard", "origin/main")
		apptest.Commit(t, dir, "free", map[string]string{"free.txt": "f\n"})
		apptest.Git(t, dir, "push", "-q", "origin", "main")
	})
}

package repository_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/testwait"
)

// TestStrictChecksAndTheirMessages: with two required checks, neither
// reported is one reason, "2 of 2 required status checks are expected.",
// on a writer's push (in the platform's "- reason" lines) and on the
// merge (405); one reported leaves the other named; a head behind the
// base under strict checks is refused 409 "Head branch is out of date.
// Review and try the merge again." with mergeable_state behind, until
// update-branch brings the base in and the new head passes.
func TestStrictChecksAndTheirMessages(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo, bob := env.User("octo"), env.User("bob")
	env.Repo(octo, "hello")
	token, bobToken := env.Token(octo, "repo"), env.Token(bob, "repo")
	owner, writer := env.Client(token), env.Client(bobToken)
	inv, _, err := owner.Repositories.AddCollaborator(ctx, "octo", "hello", "bob", &github.RepositoryAddCollaboratorOptions{Permission: "push"})
	apptest.Must(t, "invite bob", err)
	_, err = writer.Users.AcceptInvitation(ctx, inv.GetID())
	apptest.Must(t, "accept", err)
	dir := apptest.WorkTree(t, map[string]string{"README.md": "# hello\n"})
	apptest.Git(t, dir, "remote", "add", "origin", env.GitURL("octo", "hello", "bob", bobToken))
	apptest.Git(t, dir, "push", "-q", "origin", "main")
	_, _, err = owner.Repositories.UpdateBranchProtection(ctx, "octo", "hello", "main", &github.ProtectionRequest{
		RequiredStatusChecks: &github.RequiredStatusChecks{Strict: true, Checks: &[]*github.RequiredStatusCheck{{Context: "ci"}, {Context: "lint"}}}})
	apptest.Must(t, "protect main", err)
	merge := func(t *testing.T, wantStatus int, wantMessage string) {
		t.Helper()
		_, resp, err := writer.PullRequests.Merge(ctx, "octo", "hello", 1, "", nil)
		e, ok := errors.AsType[*github.ErrorResponse](err)
		if apptest.ResponseStatus(resp) != wantStatus || !ok || e.Message != wantMessage {
			t.Fatalf("merge: %d %v, want %d %q", apptest.ResponseStatus(resp), err, wantStatus, wantMessage)
		}
	}
	pass := func(t *testing.T, sha string, contexts ...string) {
		t.Helper()
		for _, c := range contexts {
			_, _, err := owner.Repositories.CreateStatus(ctx, "octo", "hello", sha, github.RepoStatus{State: github.Ptr("success"), Context: github.Ptr(c)})
			apptest.Must(t, "status "+c, err)
		}
	}

	var head string
	apptest.Step(t, "two checks not reported are one reason", func(t *testing.T) {
		apptest.Commit(t, dir, "Direct", map[string]string{"d.txt": "d\n"})
		out, err := push(t, dir, "main")
		wantRefused(t, out, err, "remote: - 2 of 2 required status checks are expected.")
		apptest.Git(t, dir, "reset", "-q", "--hard", "HEAD~1")
		apptest.Git(t, dir, "checkout", "-q", "-b", "feature")
		head = apptest.Commit(t, dir, "Feature", map[string]string{"f.txt": "f\n"})
		apptest.Git(t, dir, "push", "-q", "origin", "feature")
		_, _, err = writer.PullRequests.Create(ctx, "octo", "hello", github.CreatePullRequest{Title: github.Ptr("F"), Head: "feature", Base: "main"})
		apptest.Must(t, "open", err)
		merge(t, http.StatusMethodNotAllowed, "2 of 2 required status checks are expected.")
		pass(t, head, "ci")
		merge(t, http.StatusMethodNotAllowed, `Required status check "lint" is expected.`)
	})
	apptest.Step(t, "a head behind the base is a 409 until updated", func(t *testing.T) {
		adminDir := t.TempDir()
		apptest.Git(t, adminDir, "clone", "-q", env.GitURL("octo", "hello", "octo", token), ".")
		apptest.Commit(t, adminDir, "Admin's change", map[string]string{"a.txt": "a\n"})
		apptest.Git(t, adminDir, "push", "-q", "origin", "main") // an administrator is not bound
		pass(t, head, "lint")
		merge(t, http.StatusConflict, "Head branch is out of date. Review and try the merge again.")
		testwait.Until(t, "mergeable_state behind", func() bool {
			pr, _, err := writer.PullRequests.Get(ctx, "octo", "hello", 1)
			return err == nil && pr.GetMergeableState() == "behind"
		})
		_, _, err := writer.PullRequests.UpdateBranch(ctx, "octo", "hello", 1, nil)
		if _, ok := errors.AsType[*github.AcceptedError](err); err != nil && !ok {
			t.Fatalf("update-branch: %v", err)
		}
		pr, _, err := writer.PullRequests.Get(ctx, "octo", "hello", 1)
		apptest.Must(t, "get", err)
		if pr.GetHead().GetSHA() == head {
			t.Fatal("update-branch left the head")
		}
		pass(t, pr.GetHead().GetSHA(), "ci", "lint")
		res, _, err := writer.PullRequests.Merge(ctx, "octo", "hello", 1, "", nil)
		apptest.Must(t, "merge the updated head", err)
		if !res.GetMerged() {
			t.Fatalf("merge %+v", res)
		}
	})
}

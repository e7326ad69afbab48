package repository_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// TestRestrictionsLinearHistoryAndLock protects an organization's
// branches with push restrictions by team and user, linear history and
// the branch lock, refuses bad settings with 422s, protects a branch
// whose name has a slash, and finds the changes in the audit log.
func TestRestrictionsLinearHistoryAndLock(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	boss, bob, carol := env.User("boss"), env.User("bob"), env.User("carol")
	env.Org("acme", boss, bob, carol)
	owner := env.Client(env.Token(boss, "repo", "admin:org", "read:audit_log"))
	_, _, err := owner.Repositories.Create(ctx, "acme", &github.Repository{Name: github.Ptr("app")})
	apptest.Must(t, "create the repository", err)
	for team, member := range map[string]string{"deployers": "bob", "devs": "carol"} {
		_, _, err := owner.Teams.CreateTeam(ctx, "acme", github.CreateTeamRequest{Name: team})
		apptest.Must(t, "team "+team, err)
		_, _, err = owner.Teams.AddTeamMembershipBySlug(ctx, "acme", team, member, nil)
		apptest.Must(t, "member "+member, err)
		_, err = owner.Teams.AddTeamRepoBySlug(ctx, "acme", team, "acme", "app", &github.TeamAddTeamRepoOptions{Permission: "push"})
		apptest.Must(t, "repository of "+team, err)
	}
	bobToken, carolToken := env.Token(bob, "repo"), env.Token(carol, "repo")
	bobDir := apptest.WorkTree(t, map[string]string{"README.md": "# app\n"})
	apptest.Git(t, bobDir, "remote", "add", "origin", env.GitURL("acme", "app", "bob", bobToken))
	apptest.Git(t, bobDir, "push", "-q", "origin", "main", "main:release/1.0")
	carolDir := t.TempDir()
	apptest.Git(t, carolDir, "clone", "-q", env.GitURL("acme", "app", "carol", carolToken), ".")

	apptest.Step(t, "bad settings are refused", func(t *testing.T) {
		resp, body := env.DoJSON("PUT", "/repos/acme/app/branches/main/protection", env.Token(boss, "repo"), `{}`)
		apptest.WantStatus(t, "no required section", resp, body, http.StatusUnprocessableEntity)
		_, resp2, err := owner.Repositories.UpdateBranchProtection(ctx, "acme", "app", "main", &github.ProtectionRequest{
			Restrictions: &github.BranchRestrictionsRequest{Users: []string{"nobody"}, Teams: []string{}}})
		if apptest.ResponseStatus(resp2) != http.StatusUnprocessableEntity {
			t.Fatalf("an unknown user: %v", err)
		}
		_, resp2, err = owner.Repositories.UpdateBranchProtection(ctx, "acme", "app", "main", &github.ProtectionRequest{
			RequiredPullRequestReviews: &github.PullRequestReviewsEnforcementRequest{RequiredApprovingReviewCount: 7}})
		if apptest.ResponseStatus(resp2) != http.StatusUnprocessableEntity {
			t.Fatalf("7 approvals: %v", err)
		}
		_, resp2, _ = owner.Repositories.UpdateBranchProtection(ctx, "acme", "app", "nope", &github.ProtectionRequest{})
		if apptest.ResponseStatus(resp2) != http.StatusNotFound {
			t.Fatalf("a missing branch: %d", apptest.ResponseStatus(resp2))
		}
	})

	apptest.Step(t, "only the deployers push, without merge commits", func(t *testing.T) {
		_, _, err := owner.Repositories.UpdateBranchProtection(ctx, "acme", "app", "main", &github.ProtectionRequest{
			Restrictions:         &github.BranchRestrictionsRequest{Users: []string{}, Teams: []string{"deployers"}},
			RequireLinearHistory: github.Ptr(true)})
		apptest.Must(t, "protect", err)
		teams, _, err := owner.Repositories.ListTeamRestrictions(ctx, "acme", "app", "main")
		apptest.Must(t, "team restrictions", err)
		if len(teams) != 1 || teams[0].GetSlug() != "deployers" {
			t.Fatalf("team restrictions: %v", teams)
		}
		apptest.Commit(t, carolDir, "carol", map[string]string{"carol.txt": "c\n"})
		out, err := push(t, carolDir, "main")
		wantRefused(t, out, err, "remote: - You're not authorized to push to this branch.")
		apptest.Git(t, bobDir, "checkout", "-q", "-b", "side")
		apptest.Commit(t, bobDir, "side", map[string]string{"side.txt": "s\n"})
		apptest.Git(t, bobDir, "checkout", "-q", "main")
		apptest.Commit(t, bobDir, "main", map[string]string{"main.txt": "m\n"})
		apptest.Git(t, bobDir, "merge", "-q", "--no-edit", "side")
		out, err = push(t, bobDir, "main")
		wantRefused(t, out, err, "remote: - This branch must not contain merge commits.")
		apptest.Git(t, bobDir, "reset", "-q", "--hard", "HEAD~1")
		apptest.Git(t, bobDir, "push", "-q", "origin", "main")
	})

	apptest.Step(t, "a user added to the restrictions pushes", func(t *testing.T) {
		users, _, err := owner.Repositories.AddUserRestrictions(ctx, "acme", "app", "main", []string{"carol"})
		apptest.Must(t, "add carol", err)
		if len(users) != 1 || users[0].GetLogin() != "carol" {
			t.Fatalf("user restrictions: %v", users)
		}
		apptest.Git(t, carolDir, "pull", "-q", "--rebase", "origin", "main")
		apptest.Git(t, carolDir, "push", "-q", "origin", "main")
		_, _, err = owner.Repositories.RemoveUserRestrictions(ctx, "acme", "app", "main", []string{"carol"})
		apptest.Must(t, "remove carol", err)
	})

	apptest.Step(t, "a locked branch refuses every push", func(t *testing.T) {
		_, _, err := owner.Repositories.UpdateBranchProtection(ctx, "acme", "app", "main", &github.ProtectionRequest{LockBranch: github.Ptr(true)})
		apptest.Must(t, "lock", err)
		apptest.Git(t, bobDir, "pull", "-q", "--rebase", "origin", "main")
		apptest.Commit(t, bobDir, "locked", map[string]string{"locked.txt": "l\n"})
		out, err := push(t, bobDir, "main")
		wantRefused(t, out, err, "remote: - Cannot change this locked branch")
	})

	apptest.Step(t, "a branch whose name has a slash is protected through its escaped name", func(t *testing.T) {
		_, _, err := owner.Repositories.UpdateBranchProtection(ctx, "acme", "app", "release/1.0", &github.ProtectionRequest{})
		apptest.Must(t, "protect release/1.0", err)
		p, _, err := owner.Repositories.GetBranchProtection(ctx, "acme", "app", "release/1.0")
		apptest.Must(t, "read release/1.0", err)
		if !strings.HasSuffix(p.GetURL(), "/branches/release/1.0/protection") && !strings.HasSuffix(p.GetURL(), "/branches/release%2F1.0/protection") {
			t.Fatalf("url: %s", p.GetURL())
		}
		b, _, err := owner.Repositories.GetBranch(ctx, "acme", "app", "release/1.0", 0)
		apptest.Must(t, "branch", err)
		if !b.GetProtected() {
			t.Fatal("release/1.0 not protected")
		}
		list, _, err := owner.Repositories.ListBranches(ctx, "acme", "app", &github.BranchListOptions{Protected: github.Ptr(true)})
		apptest.Must(t, "protected branches", err)
		if len(list) != 2 {
			t.Fatalf("protected branches: %d", len(list))
		}
	})

	apptest.Step(t, "only the dismissal actors and admins dismiss reviews", func(t *testing.T) {
		_, _, err := owner.Repositories.UpdatePullRequestReviewEnforcement(ctx, "acme", "app", "release/1.0", &github.PullRequestReviewsEnforcementUpdate{
			DismissalRestrictionsRequest: &github.DismissalRestrictionsRequest{Users: &[]string{"carol"}, Teams: &[]string{}},
			RequiredApprovingReviewCount: 1})
		apptest.Must(t, "restrict dismissals", err)
		apptest.Git(t, bobDir, "fetch", "-q", "origin")
		apptest.Git(t, bobDir, "checkout", "-q", "-b", "fix", "origin/release/1.0")
		apptest.Commit(t, bobDir, "fix", map[string]string{"fix.txt": "f\n"})
		apptest.Git(t, bobDir, "push", "-q", "origin", "fix")
		bobClient, carolClient := env.Client(bobToken), env.Client(carolToken)
		pr, _, err := bobClient.PullRequests.Create(ctx, "acme", "app", github.CreatePullRequest{Title: github.Ptr("Fix"), Head: "fix", Base: "release/1.0"})
		apptest.Must(t, "open", err)
		rv, _, err := carolClient.PullRequests.CreateReview(ctx, "acme", "app", pr.GetNumber(), &github.PullRequestReviewRequest{Event: github.Ptr("APPROVE")})
		apptest.Must(t, "approve", err)
		dismiss := github.PullRequestDismissReviewRequest{Message: "stale"}
		_, resp, err := bobClient.PullRequests.DismissReview(ctx, "acme", "app", pr.GetNumber(), rv.GetID(), dismiss)
		if apptest.ResponseStatus(resp) != http.StatusUnprocessableEntity {
			t.Fatalf("bob dismisses: %v", err)
		}
		_, _, err = owner.PullRequests.DismissReview(ctx, "acme", "app", pr.GetNumber(), rv.GetID(), dismiss)
		apptest.Must(t, "the admin dismisses", err)
	})

	apptest.Step(t, "the audit log names the changes", func(t *testing.T) {
		_, err := owner.Repositories.RemoveBranchProtection(ctx, "acme", "app", "release/1.0")
		apptest.Must(t, "unprotect", err)
		resp, body := env.Get("/orgs/acme/audit-log?phrase=action:protected_branch", "token "+env.Token(boss, "read:audit_log"))
		apptest.WantStatus(t, "audit log", resp, body, http.StatusOK)
		for _, action := range []string{"protected_branch.create", "protected_branch.update", "protected_branch.destroy"} {
			if !strings.Contains(string(body), action) {
				t.Fatalf("audit log lacks %s: %s", action, body)
			}
		}
	})
}

// TestConcurrentPutsCreateOneProtection sends eight PUTs of one branch's
// protection at once: each succeeds, and the branch has one protection.
func TestConcurrentPutsCreateOneProtection(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo")
	dir := apptest.WorkTree(t, map[string]string{"README.md": "# hello\n"})
	apptest.Git(t, dir, "push", "-q", env.GitURL("octo", "hello", "octo", token), "main")
	owner := env.Client(token)
	errs := make(chan error, 8)
	for i := range 8 {
		go func() {
			_, _, err := owner.Repositories.UpdateBranchProtection(ctx, "octo", "hello", "main", &github.ProtectionRequest{
				RequiredPullRequestReviews: &github.PullRequestReviewsEnforcementRequest{RequiredApprovingReviewCount: i % 3}})
			errs <- err
		}()
	}
	for range 8 {
		apptest.Must(t, "concurrent PUT", <-errs)
	}
	var n int
	if err := env.Q().QueryRowContext(ctx, `SELECT count(*) FROM branch_protections`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("protections: %d %v", n, err)
	}
}

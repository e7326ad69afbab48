package repository_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// TestCodeOwnerReviews requires the review of the code owners that the
// base's CODEOWNERS names for the changed files: an administrator's
// approval is not enough for a file carol owns; hers is.
func TestCodeOwnerReviews(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo, bob, carol := env.User("octo"), env.User("bob"), env.User("carol")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo")
	owner := env.Client(token)
	clients := map[string]*github.Client{}
	for _, u := range []string{"bob", "carol"} {
		who := map[string]string{"bob": env.Token(bob, "repo"), "carol": env.Token(carol, "repo")}[u]
		clients[u] = env.Client(who)
		inv, _, err := owner.Repositories.AddCollaborator(ctx, "octo", "hello", u, &github.RepositoryAddCollaboratorOptions{Permission: "push"})
		apptest.Must(t, "invite "+u, err)
		_, err = clients[u].Users.AcceptInvitation(ctx, inv.GetID())
		apptest.Must(t, "accept", err)
	}
	dir := apptest.WorkTree(t, map[string]string{"README.md": "# hello\n", ".github/CODEOWNERS": "/docs/ @carol\n"})
	apptest.Git(t, dir, "remote", "add", "origin", env.GitURL("octo", "hello", "octo", token))
	apptest.Git(t, dir, "push", "-q", "origin", "main")
	_, _, err := owner.Repositories.UpdateBranchProtection(ctx, "octo", "hello", "main", &github.ProtectionRequest{
		RequiredPullRequestReviews: &github.PullRequestReviewsEnforcementRequest{RequiredApprovingReviewCount: 1, RequireCodeOwnerReviews: true},
		EnforceAdmins:              true})
	apptest.Must(t, "protect", err)
	apptest.Git(t, dir, "checkout", "-q", "-b", "docs")
	apptest.Commit(t, dir, "docs", map[string]string{"docs/guide.md": "# guide\n"})
	apptest.Git(t, dir, "push", "-q", "origin", "docs")
	pr, _, err := clients["bob"].PullRequests.Create(ctx, "octo", "hello", github.CreatePullRequest{Title: github.Ptr("Docs"), Head: "docs", Base: "main"})
	apptest.Must(t, "open", err)
	n := pr.GetNumber()
	_, _, err = owner.PullRequests.CreateReview(ctx, "octo", "hello", n, &github.PullRequestReviewRequest{Event: github.Ptr("APPROVE")})
	apptest.Must(t, "octo approves", err)
	_, resp, err := clients["bob"].PullRequests.Merge(ctx, "octo", "hello", n, "", nil)
	if apptest.ResponseStatus(resp) != http.StatusMethodNotAllowed || !strings.Contains(err.Error(), "Waiting on code owner review from @carol.") {
		t.Fatalf("merge without the code owner: %v", err)
	}
	_, _, err = clients["carol"].PullRequests.CreateReview(ctx, "octo", "hello", n, &github.PullRequestReviewRequest{Event: github.Ptr("APPROVE")})
	apptest.Must(t, "carol approves", err)
	_, _, err = clients["bob"].PullRequests.Merge(ctx, "octo", "hello", n, "", nil)
	apptest.Must(t, "merge with the code owner's approval", err)
}

// TestLastPushApproval wants the head's latest push approved by someone
// other than its pusher: the owner who pushed to the branch and approved
// is not enough, another writer's approval is.
func TestLastPushApproval(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo, bob, carol := env.User("octo"), env.User("bob"), env.User("carol")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo")
	owner := env.Client(token)
	clients := map[string]*github.Client{}
	for u, who := range map[string]string{"bob": env.Token(bob, "repo"), "carol": env.Token(carol, "repo")} {
		clients[u] = env.Client(who)
		inv, _, err := owner.Repositories.AddCollaborator(ctx, "octo", "hello", u, &github.RepositoryAddCollaboratorOptions{Permission: "push"})
		apptest.Must(t, "invite "+u, err)
		_, err = clients[u].Users.AcceptInvitation(ctx, inv.GetID())
		apptest.Must(t, "accept", err)
	}
	dir := apptest.WorkTree(t, map[string]string{"README.md": "# hello\n"})
	apptest.Git(t, dir, "remote", "add", "origin", env.GitURL("octo", "hello", "octo", token))
	apptest.Git(t, dir, "push", "-q", "origin", "main")
	_, _, err := owner.Repositories.UpdateBranchProtection(ctx, "octo", "hello", "main", &github.ProtectionRequest{
		RequiredPullRequestReviews: &github.PullRequestReviewsEnforcementRequest{RequiredApprovingReviewCount: 1, RequireLastPushApproval: github.Ptr(true)},
		EnforceAdmins:              true})
	apptest.Must(t, "protect", err)
	apptest.Git(t, dir, "checkout", "-q", "-b", "feature")
	apptest.Commit(t, dir, "one", map[string]string{"one.txt": "1\n"})
	apptest.Git(t, dir, "push", "-q", "origin", "feature")
	pr, _, err := clients["bob"].PullRequests.Create(ctx, "octo", "hello", github.CreatePullRequest{Title: github.Ptr("One"), Head: "feature", Base: "main"})
	apptest.Must(t, "open", err)
	n := pr.GetNumber()
	apptest.Commit(t, dir, "two", map[string]string{"two.txt": "2\n"})
	apptest.Git(t, dir, "push", "-q", "origin", "feature")
	_, _, err = owner.PullRequests.CreateReview(ctx, "octo", "hello", n, &github.PullRequestReviewRequest{Event: github.Ptr("APPROVE")})
	apptest.Must(t, "the pusher approves", err)
	_, resp, err := clients["bob"].PullRequests.Merge(ctx, "octo", "hello", n, "", nil)
	if apptest.ResponseStatus(resp) != http.StatusMethodNotAllowed || !strings.Contains(err.Error(), "approved by someone other than the last pusher") {
		t.Fatalf("merge approved by the last pusher alone: %v", err)
	}
	_, _, err = clients["carol"].PullRequests.CreateReview(ctx, "octo", "hello", n, &github.PullRequestReviewRequest{Event: github.Ptr("APPROVE")})
	apptest.Must(t, "carol approves", err)
	_, _, err = clients["bob"].PullRequests.Merge(ctx, "octo", "hello", n, "", nil)
	apptest.Must(t, "merge", err)
}

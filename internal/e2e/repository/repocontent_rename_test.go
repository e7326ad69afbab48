package repository_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// TestRenameBranch renames branches through go-github: the default and
// protected branch by its admin (the default branch, its protection and
// the open pull request based on it follow), a pull request's head branch
// by a collaborator with push (the pull request follows); a collaborator
// cannot rename the default branch, a taken name is a 422 and a missing
// branch a 404. branches-where-head lists the branches at a commit.
func TestRenameBranch(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo, dev := env.User("octo"), env.User("dev")
	env.Repo(octo, "lib")
	ownerToken := env.Token(octo, "repo")
	c := env.Client(ownerToken)
	_, _, err := c.Repositories.AddCollaborator(ctx, "octo", "lib", "dev", &github.RepositoryAddCollaboratorOptions{Permission: "push"})
	apptest.Must(t, "invite dev", err)
	devGH := env.Client(env.Token(dev, "repo"))
	invs, _, err := devGH.Users.ListInvitations(ctx, nil)
	apptest.Must(t, "invitations", err)
	_, err = devGH.Users.AcceptInvitation(ctx, invs[0].GetID())
	apptest.Must(t, "accept", err)

	work := apptest.WorkTree(t, map[string]string{"a.txt": "1\n"})
	remote := env.GitURL("octo", "lib", "octo", ownerToken)
	base := strings.TrimSpace(apptest.Git(t, work, "rev-parse", "HEAD"))
	apptest.Git(t, work, "push", "-q", remote, "HEAD:refs/heads/main", "HEAD:refs/heads/copy")

	apptest.Step(t, "branches where head", func(t *testing.T) {
		list, _, err := c.Repositories.ListBranchesHeadCommit(ctx, "octo", "lib", base)
		apptest.Must(t, "branches where head", err)
		if len(list) != 2 || list[0].GetName() != "copy" || list[1].GetName() != "main" || list[1].GetCommit().GetSHA() != base {
			t.Fatalf("branches %+v", list)
		}
		if _, resp, err := c.Repositories.ListBranchesHeadCommit(ctx, "octo", "lib", strings.Repeat("1", 40)); apptest.ResponseStatus(resp) != http.StatusUnprocessableEntity {
			t.Fatalf("unknown commit: %v", err)
		}
	})

	apptest.Commit(t, work, "feature", map[string]string{"b.txt": "2\n"})
	apptest.Git(t, work, "push", "-q", remote, "HEAD:refs/heads/feature")
	pr, _, err := c.PullRequests.Create(ctx, "octo", "lib", github.CreatePullRequest{Title: github.Ptr("f"), Head: "feature", Base: "main"})
	apptest.Must(t, "open a pull request", err)
	_, _, err = c.Repositories.UpdateBranchProtection(ctx, "octo", "lib", "main", &github.ProtectionRequest{})
	apptest.Must(t, "protect main", err)

	apptest.Step(t, "refusals", func(t *testing.T) {
		if _, resp, err := devGH.Repositories.RenameBranch(ctx, "octo", "lib", "main", "trunk"); apptest.ResponseStatus(resp) != http.StatusForbidden {
			t.Fatalf("a writer renames the default branch: %v", err)
		}
		if _, resp, err := c.Repositories.RenameBranch(ctx, "octo", "lib", "main", "copy"); apptest.ResponseStatus(resp) != http.StatusUnprocessableEntity {
			t.Fatalf("a taken name: %v", err)
		}
		if _, resp, err := c.Repositories.RenameBranch(ctx, "octo", "lib", "main", "bad..name"); apptest.ResponseStatus(resp) != http.StatusUnprocessableEntity {
			t.Fatalf("an invalid name: %v", err)
		}
		if _, resp, err := c.Repositories.RenameBranch(ctx, "octo", "lib", "nope", "x"); apptest.ResponseStatus(resp) != http.StatusNotFound {
			t.Fatalf("a missing branch: %v", err)
		}
	})

	apptest.Step(t, "the admin renames the default, protected branch", func(t *testing.T) {
		b, resp, err := c.Repositories.RenameBranch(ctx, "octo", "lib", "main", "trunk")
		apptest.Must(t, "rename main", err)
		if resp.StatusCode != http.StatusCreated || b.GetName() != "trunk" || b.GetCommit().GetSHA() != base || !b.GetProtected() {
			t.Fatalf("renamed %+v (%d)", b, resp.StatusCode)
		}
		r, _, err := c.Repositories.Get(ctx, "octo", "lib")
		apptest.Must(t, "repository", err)
		if r.GetDefaultBranch() != "trunk" {
			t.Fatalf("default branch %s", r.GetDefaultBranch())
		}
		if _, resp, err := c.Repositories.GetBranch(ctx, "octo", "lib", "main", 0); apptest.ResponseStatus(resp) != http.StatusNotFound {
			t.Fatalf("main still there: %v", err)
		}
		if _, _, err := c.Repositories.GetBranchProtection(ctx, "octo", "lib", "trunk"); err != nil {
			t.Fatalf("trunk's protection: %v", err)
		}
		got, _, err := c.PullRequests.Get(ctx, "octo", "lib", pr.GetNumber())
		apptest.Must(t, "pull request", err)
		if got.GetBase().GetRef() != "trunk" || got.GetState() != "open" {
			t.Fatalf("pull request base %s, state %s", got.GetBase().GetRef(), got.GetState())
		}
	})

	apptest.Step(t, "a writer renames a pull request's head branch", func(t *testing.T) {
		b, _, err := devGH.Repositories.RenameBranch(ctx, "octo", "lib", "feature", "feat")
		apptest.Must(t, "rename feature", err)
		if b.GetName() != "feat" || b.GetProtected() {
			t.Fatalf("renamed %+v", b)
		}
		got, _, err := c.PullRequests.Get(ctx, "octo", "lib", pr.GetNumber())
		apptest.Must(t, "pull request", err)
		if got.GetHead().GetRef() != "feat" || got.GetState() != "open" {
			t.Fatalf("pull request head %s, state %s", got.GetHead().GetRef(), got.GetState())
		}
		out := apptest.Git(t, work, "ls-remote", "--heads", remote)
		if !strings.Contains(out, "refs/heads/feat\n") || !strings.Contains(out, "refs/heads/trunk") ||
			strings.Contains(out, "refs/heads/main") || strings.Contains(out, "refs/heads/feature") {
			t.Fatalf("heads:\n%s", out)
		}
	})
}

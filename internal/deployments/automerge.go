package deployments

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/git/gitcmd"
	"forgeapi/internal/git/githttp"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/repos"
)

// autoMerge merges the repository's default branch into the branch the
// deployment names when the branch is behind it, as the platform's
// auto_merge does: the merge commit moves the branch through a server
// push (its checks and push events as any push), and the answer is the
// platform's message, which the caller sends instead of creating the
// deployment. It returns "" when there is nothing to merge (a tag, a SHA,
// the default branch itself, or a branch that contains it), and the
// platform's 409 when the merge conflicts.
func (h *Handler) autoMerge(ctx context.Context, repo *repos.Repository, actor *accounts.Account, t refTarget) (string, error) {
	if !t.branch || t.ref == repo.DefaultBranch || repo.DefaultBranch == "" || h.Git == nil {
		return "", nil
	}
	git := gitcmd.In(h.Repos.GitDir(repo.ID))
	base, found, err := gitread.ResolveCommit(ctx, git, "refs/heads/"+repo.DefaultBranch)
	if err != nil || !found {
		return "", err // not found: no default branch yet, nothing to merge
	}
	behind, err := git.IsAncestor(ctx, base, t.sha)
	if err != nil || behind {
		return "", err
	}
	tree, err := git.Text(ctx, nil, "merge-tree", "--write-tree", "--no-messages", t.sha, base)
	if gitcmd.Said(err, 1) {
		return "", apierr.New(http.StatusConflict, "Conflict merging %s into %s.", repo.DefaultBranch, t.ref)
	}
	if err != nil {
		return "", err
	}
	message := fmt.Sprintf("Auto-merged %s into %s on deployment.", repo.DefaultBranch, t.ref)
	who := []string{"GIT_AUTHOR_NAME=" + nameOf(actor), "GIT_AUTHOR_EMAIL=" + emailOf(actor),
		"GIT_COMMITTER_NAME=" + nameOf(actor), "GIT_COMMITTER_EMAIL=" + emailOf(actor)}
	commit, err := git.With(who...).Text(ctx, nil, "commit-tree", strings.TrimSpace(firstLine(tree)), "-p", t.sha, "-p", base, "-m", message)
	if err != nil {
		return "", err
	}
	err = h.Git.ServerPush(ctx, repo, actor, []githttp.RefUpdate{{Ref: "refs/heads/" + t.ref, OldSHA: t.sha, NewSHA: commit}})
	if err != nil {
		return "", err
	}
	return message, nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func nameOf(a *accounts.Account) string {
	if a.Name != "" {
		return a.Name
	}
	return a.Login
}

func emailOf(a *accounts.Account) string {
	if a.Email != "" {
		return a.Email
	}
	return a.Login + "@users.noreply.forgeapi.local"
}

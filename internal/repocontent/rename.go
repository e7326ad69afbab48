package repocontent

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/git/githttp"
	"forgeapi/internal/git/gitref"
	"forgeapi/internal/githost"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/issues"
	"forgeapi/internal/protection"
	"forgeapi/internal/repos"
	"forgeapi/internal/repos/gitjson"
	"forgeapi/internal/store"
)

// renameSubject is the subject of a branch rename's intent: the old and
// the new name, which no branch name can hold a newline of.
func renameSubject(from, to string) string { return from + "\n" + to }

// renameBranch answers POST /repos/{owner}/{repo}/branches/{branch}/rename
// with new_name: the branch moves to its new name in one server push
// (with protection.BranchRenameIntent), and in the push's recording
// transaction the default branch, branch protection and the open pull
// requests based on it (or whose head it is) follow (RecordRename). 201
// with the branch under its new name. Writers rename branches; the
// default branch and protected branches need admin rights (and a
// fine-grained token Administration write for the default branch). A
// branch that does not exist is a 404, a taken or invalid new name a 422.
func (h *Handler) renameBranch(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		NewName *string `json:"new_name"`
	}
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.NewName == nil || *body.NewName == "" {
		return apierr.Invalid("Branch", "new_name", apierr.CodeMissingField)
	}
	to := strings.TrimPrefix(*body.NewName, "refs/heads/")
	if !gitref.ValidBranch(to) {
		return apierr.Invalid("Branch", "new_name", apierr.CodeInvalid)
	}
	ctx := r.Context()
	from := r.PathValue("branch")
	sha, err := h.renameSource(r, from, to)
	if err != nil {
		return err
	}
	repo := repos.From(ctx)
	if err := h.mayRename(ctx, repo.DefaultBranch == from, from); err != nil {
		return err
	}
	pusher, err := accounts.ByID(ctx, h.Repos.DB, auth.PrincipalFrom(ctx).UserID())
	if err != nil {
		return err
	}
	zero := strings.Repeat("0", 40)
	updates := []githttp.RefUpdate{{Ref: "refs/heads/" + to, OldSHA: zero, NewSHA: sha}, {Ref: "refs/heads/" + from, OldSHA: sha, NewSHA: zero}}
	intent := githost.PushIntent{Kind: protection.BranchRenameIntent, Subject: renameSubject(from, to)}
	if err := h.Git.ServerPushWith(ctx, repo, pusher, updates, intent); err != nil {
		return err
	}
	r.SetPathValue("branch", to)
	return h.writeBranch(w, r, http.StatusCreated)
}

// renameSource is the head of the branch from, checked to be renamable
// to: the branch exists (404) and to is free (422). The repository is
// released before the rename pushes (openRepo holds it exclusively).
func (h *Handler) renameSource(r *http.Request, from, to string) (string, error) {
	g, _, release, err := h.openRepo(r)
	if err != nil {
		return "", err
	}
	defer release()
	sha, ok, err := g.RefTarget("refs/heads/" + from)
	if err != nil || !gitref.ValidBranch(from) || !ok {
		return "", errors.Join(err, apierr.New(http.StatusNotFound, "Branch not found"))
	}
	if from == to {
		return "", apierr.Custom("Branch", "new_name", "The new name is the branch's name")
	}
	if _, taken, err := g.RefTarget("refs/heads/" + to); err != nil {
		return "", err
	} else if taken {
		return "", apierr.Custom("Branch", "new_name", "A branch named '%s' already exists", to)
	}
	return sha, nil
}

// mayRename checks the rights a rename needs beyond push: admin for the
// default branch and for a protected one, and Administration (write) for
// a fine-grained token renaming the default branch.
func (h *Handler) mayRename(ctx context.Context, isDefault bool, branch string) error {
	protected, err := protection.Of(ctx, h.Repos.DB, repos.From(ctx).ID, branch)
	if err != nil && !errors.Is(err, protection.ErrNotProtected) {
		return err
	}
	if (isDefault || protected != nil) && auth.RoleFrom(ctx) < auth.RoleAdmin {
		return apierr.Forbidden("You must be an admin to rename the default branch or a protected branch.")
	}
	p := auth.PrincipalFrom(ctx)
	if isDefault && p.FineGrained() && !p.Token.Grant.Satisfies(auth.Perm("administration:write")) {
		return apierr.Forbidden("%s", httpapi.NotAccessibleMessage(p.Token.Kind))
	}
	return nil
}

// RecordRename is the intent handler of a branch rename
// (protection.BranchRenameIntent), in the push's recording transaction:
// the default branch, the branch's protection, the open pull requests
// based on the branch or whose head it is and the issues' links to it
// take the new name.
func RecordRename(ctx context.Context, tx *store.Tx, push *githost.Push, subject string) error {
	from, to, ok := strings.Cut(subject, "\n")
	if !ok {
		return fmt.Errorf("branch rename intent %q: not OLD\\nNEW", subject)
	}
	repoID := push.Repo.ID
	for _, stmt := range []string{
		`UPDATE repositories SET default_branch = $3 WHERE id = $1 AND default_branch = $2`,
		`UPDATE branch_protections SET branch = $3 WHERE repository_id = $1 AND branch = $2`,
		`UPDATE pull_requests SET base_ref = $3 WHERE repository_id = $1 AND base_ref = $2 AND merged_at IS NULL
			AND issue_id IN (SELECT id FROM issues WHERE state = 'open')`,
		`UPDATE pull_requests SET head_ref = $3 WHERE head_repository_id = $1 AND head_ref = $2 AND merged_at IS NULL
			AND issue_id IN (SELECT id FROM issues WHERE state = 'open')`,
	} {
		if _, err := tx.ExecContext(ctx, stmt, repoID, from, to); err != nil {
			return store.Normalize(err)
		}
	}
	if err := issues.RenameLinkedBranches(ctx, tx, repoID, from, to); err != nil {
		return err
	}
	if push.Repo.DefaultBranch == from {
		push.Repo.DefaultBranch = to
	}
	return nil
}

// branchesWhereHead answers GET .../commits/{commit_sha}/branches-where-head:
// the branches whose head is the commit, by name (branch-short). An empty
// repository is the platform's 409; a SHA that names no commit a 422.
func (h *Handler) branchesWhereHead(w http.ResponseWriter, r *http.Request) error {
	g, repo, release, err := h.openRepo(r)
	if err != nil {
		return err
	}
	defer release()
	if branches, err := g.Branches(); err != nil {
		return err
	} else if len(branches) == 0 {
		return apierr.New(http.StatusConflict, "Git Repository is empty.")
	}
	sha, err := g.Resolve(r.PathValue("commit_sha"))
	if err != nil {
		return apierr.Custom("Commit", "commit_sha", "No commit found for SHA: %s", r.PathValue("commit_sha"))
	}
	names, err := g.BranchesAt(sha)
	if err != nil {
		return err
	}
	guarded, err := protection.Protected(r.Context(), h.Repos.DB, repo.ID)
	if err != nil {
		return err
	}
	api := httpapi.BaseURL(r.Context()) + "/repos/" + repo.FullName()
	out := make([]shortBranchJSON, 0, len(names))
	for _, full := range names {
		name := strings.TrimPrefix(full, "refs/heads/")
		out = append(out, shortBranchJSON{Name: name, Commit: gitjson.SHAURL{SHA: sha, URL: api + "/commits/" + sha},
			Protected: guarded[name]})
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

package pulls

import (
	"context"
	"errors"
	"net/http"

	"forgeapi/internal/access"
	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/git/githttp"
	"forgeapi/internal/git/gitmerge"
	"forgeapi/internal/githost"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
)

// UpdateBranch brings the head branch of the open pull request number up
// to its base branch, as the platform's "Update branch" does: a merge
// commit of the base's tip into the head (message "Merge branch 'BASE'
// into HEAD", by updater), pushed to the head repository (a fork's
// included: the base's commits are fetched into it first) through
// githost.ServerPush, so that the push's events, checks and the pull
// request's synchronize follow as for git push. expected, when not "",
// must be the pull request's head commit. 422 when the pull request is
// closed, its head repository or a branch is gone, expected does not
// match or the head moved meanwhile, the head holds the base already, the
// merge conflicts, or a push check refuses the push (its message).
func (s *Service) UpdateBranch(ctx context.Context, repo *repos.Repository, updater *accounts.Account, who person, number int64, expected string) error {
	p, err := byNumber(ctx, s.DB, repo, number)
	if err != nil {
		return err
	}
	if !p.Open() || p.MergedAt != nil {
		return apierr.Unprocessable("Pull request is not open.")
	}
	if p.HeadRepo == nil {
		return apierr.Unprocessable("The head repository of this pull request no longer exists.")
	}
	if expected != "" && expected != p.HeadSHA {
		return apierr.Unprocessable(msgHeadMoved)
	}
	base, headDir := gitDir(s.Repos.GitDir(repo.ID)), s.Repos.GitDir(p.HeadRepo.ID)
	baseTip, ok, err := base.commit(ctx, "refs/heads/"+p.BaseRef)
	if err != nil {
		return err
	} else if !ok {
		return apierr.Unprocessable("The base branch %s no longer exists.", p.BaseRef)
	}
	if held, err := base.isAncestor(ctx, baseTip, p.HeadSHA); err != nil {
		return err
	} else if held {
		return apierr.Unprocessable("There are no new commits on the base branch.")
	}
	if err := gitmerge.Fetch(ctx, headDir, string(base), baseTip); err != nil {
		return err
	}
	message := "Merge branch '" + p.BaseRef + "' into " + p.HeadRef + "\n"
	sha, err := gitmerge.Merge(ctx, headDir, p.HeadSHA, baseTip, message, who, s.webFlow())
	if errors.Is(err, gitmerge.ErrConflict) {
		return apierr.Unprocessable("merge conflict between base and head")
	} else if err != nil {
		return err
	}
	update := githttp.RefUpdate{Ref: "refs/heads/" + p.HeadRef, OldSHA: p.HeadSHA, NewSHA: sha}
	err = s.Git.ServerPush(ctx, p.HeadRepo, updater, []githttp.RefUpdate{update})
	if errors.Is(err, githost.ErrRefMoved) {
		return apierr.Unprocessable(msgHeadMoved) // as when expected_head_sha is stale
	}
	if refused, ok := errors.AsType[*apierr.Error](err); ok && refused.Status == http.StatusConflict {
		// A push check's refusal (a ruleset, a protection): the
		// operation answers it 422, as its description documents.
		return apierr.Unprocessable("%s", refused.Message)
	}
	return err
}

// msgHeadMoved is the platform's 422 message of an update-branch whose
// expected_head_sha is not the head (integrations record it with the
// typographic apostrophe).
const msgHeadMoved = "expected head sha didn’t match current head ref."

// updateBranchRequest is the body of PUT .../update-branch (which may be
// empty or null).
type updateBranchRequest struct {
	ExpectedHeadSHA *string `json:"expected_head_sha"`
}

// updateBranch answers PUT /repos/{owner}/{repo}/pulls/{pull_number}/update-branch:
// 202 with the platform's message and the pull request's URL once the
// head branch moved (Service.UpdateBranch). The caller needs push access
// to the head repository (403 otherwise).
func (h *Handler) updateBranch(w http.ResponseWriter, r *http.Request) error {
	n, err := pullNumber(r)
	if err != nil {
		return err
	}
	var body updateBranchRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	expected := ""
	if body.ExpectedHeadSHA != nil {
		expected = *body.ExpectedHeadSHA
	}
	ctx := r.Context()
	repo := repos.From(ctx)
	if err := h.canPushHead(ctx, repo, n); err != nil {
		return err
	}
	actor, err := h.actor(r)
	if err != nil {
		return err
	}
	who, err := Identity(ctx, h.Service.DB, actor)
	if err != nil {
		return err
	}
	if err := h.Service.UpdateBranch(ctx, repo, actor, who, n, expected); err != nil {
		return err
	}
	url := httpapi.BaseURL(ctx) + "/repos/" + repo.FullName() + "/pulls/" + itoa(n)
	httpapi.WriteJSON(w, http.StatusAccepted, map[string]string{"message": "Updating pull request branch.", "url": url})
	return nil
}

// canPushHead is a 403 unless the caller may push to the head repository
// of the pull request number (the base repository's role when the head is
// in it).
func (h *Handler) canPushHead(ctx context.Context, repo *repos.Repository, number int64) error {
	p, err := byNumber(ctx, h.Service.DB, repo, number)
	if err != nil {
		return err
	}
	role := auth.RoleFrom(ctx)
	if p.HeadRepo != nil && p.HeadRepo.ID != repo.ID {
		if role, err = access.RepoRole(ctx, h.Service.DB, auth.PrincipalFrom(ctx), p.HeadRepo); err != nil {
			return err
		}
	}
	if role < auth.RoleWrite {
		return apierr.Forbidden("Must have push access to repository.")
	}
	return nil
}

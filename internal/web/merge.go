package web

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/console"
	"forgeapi/internal/pulls"
	"forgeapi/internal/repos"
)

// pullAction is where a form of a pull request's page posts: what is
// "merge" or "reviews".
func pullAction(repoPath string, number int64, what string) string {
	return console.RepoPrefix + repoPath + "/pull/" + strconv.FormatInt(number, 10) + "/" + what
}

// mergePull serves POST /console/{owner}/{repo}/pull/{number}/merge, the
// merge button: a user with push access merges with the method chosen,
// as PUT .../pulls/{number}/merge does (pulls.Service.Merge: branch
// protection, required checks and reviews, rulesets, the head SHA the page
// showed), and is sent back to the pull request. A refusal is the error
// page with the API's status and message.
func (h *Handler) mergePull(w http.ResponseWriter, r *http.Request, x console.Visitor) error {
	ctx := r.Context()
	if x.Login() == "" {
		return apierr.New(http.StatusForbidden, "Sign in to merge.")
	}
	v, err := h.visitRepo(ctx, x, r.PathValue("owner"), r.PathValue("repo"))
	if err != nil {
		return err
	}
	if v.role < auth.RoleWrite {
		return apierr.New(http.StatusForbidden, "Merging needs push access to the repository.")
	}
	if err := repos.CheckNotLocked(v.repo); err != nil {
		return err
	}
	n, err := strconv.ParseInt(r.PathValue("number"), 10, 64)
	if err != nil || n <= 0 {
		return apierr.NotFound()
	}
	method := r.PostForm.Get("merge_method")
	if !slices.Contains([]string{pulls.MethodMerge, pulls.MethodSquash, pulls.MethodRebase}, method) {
		return apierr.Invalid("PullRequest", "merge_method", apierr.CodeInvalid)
	}
	actor, err := accounts.ByID(ctx, h.DB, x.Principal().Account.ID)
	if err != nil {
		return err
	}
	who, err := pulls.Identity(ctx, h.DB, actor)
	if err != nil {
		return err
	}
	if _, err := h.Pulls.Merge(ctx, v.repo, actor, who, n, pulls.MergeRequest{Method: method, SHA: r.PostForm.Get("sha")}); err != nil {
		return hidden(x, err)
	}
	http.Redirect(w, r, header(v, "").Path+"/pull/"+strconv.FormatInt(n, 10), http.StatusSeeOther)
	return nil
}

// reviewEvents are the reviews the review form submits.
var reviewEvents = []string{"COMMENT", "APPROVE", "REQUEST_CHANGES"}

// reviewPull serves POST /console/{owner}/{repo}/pull/{number}/reviews,
// the review form: the signed-in user submits a review of the head the
// page showed, as POST .../pulls/{number}/reviews does
// (pulls.Service.CreateReview: its rules, events and webhooks), and is
// sent back to the review on the page.
func (h *Handler) reviewPull(w http.ResponseWriter, r *http.Request, x console.Visitor) error {
	ctx := r.Context()
	v, n, err := h.formTarget(ctx, x, r, apierr.New(http.StatusForbidden, "Sign in to review."))
	if err != nil {
		return err
	}
	event := r.PostForm.Get("event")
	if !slices.Contains(reviewEvents, event) {
		return apierr.Invalid("PullRequestReview", "event", apierr.CodeInvalid)
	}
	actor, err := accounts.ByID(ctx, h.DB, x.Principal().Account.ID)
	if err != nil {
		return err
	}
	body := strings.ReplaceAll(r.PostForm.Get("body"), "\r\n", "\n")
	rv, err := h.Pulls.CreateReview(ctx, v.repo, actor, n, pulls.NewReview{CommitID: r.PostForm.Get("sha"), Body: body, Event: event})
	if err != nil {
		return hidden(x, err)
	}
	http.Redirect(w, r, header(v, "").Path+"/pull/"+strconv.FormatInt(n, 10)+"#pullrequestreview-"+strconv.FormatInt(rv.ID, 10), http.StatusSeeOther)
	return nil
}

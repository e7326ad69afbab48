package web

import (
	"net/http"
	"strconv"
	"strings"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/console"
	"forgeapi/internal/issues"
)

// commentForm is what the comment form of an issue's or pull request's
// page needs.
type commentForm struct {
	CSRF, Action string
}

func newCommentForm(csrf, repoPath string, number int64) commentForm {
	return commentForm{CSRF: csrf, Action: console.RepoPrefix + repoPath + "/issues/" + strconv.FormatInt(number, 10) + "/comments"}
}

// errSignIn refuses a form posted without a session.
var errSignIn = apierr.New(http.StatusForbidden, "Sign in to comment.")

// createComment serves POST /console/{owner}/{repo}/issues/{number}/comments, the
// comment form of an issue's or pull request's page (the CSRF token is
// checked by the console's Page): the signed-in user comments as through
// the API (issues.Service.CreateComment: blocks, locks and events alike)
// and is sent back to the comment on the page.
func (h *Handler) createComment(w http.ResponseWriter, r *http.Request, x console.Visitor) error {
	ctx := r.Context()
	v, n, err := h.formTarget(ctx, x, r, errSignIn)
	if err != nil {
		return err
	}
	body := strings.ReplaceAll(r.PostForm.Get("body"), "\r\n", "\n")
	var f apierr.Fields
	if strings.TrimSpace(body) == "" {
		f.Add("IssueComment", "body", apierr.CodeMissingField)
	} else {
		f.MaxLength("IssueComment", "body", body, issues.MaxBody)
	}
	if err := f.Err(); err != nil {
		return err
	}
	p := x.Principal()
	actor, err := accounts.ByID(ctx, h.DB, p.Account.ID)
	if err != nil {
		return err
	}
	triage, err := issues.CanTriage(ctx, h.DB, p, v.role, v.repo)
	if err != nil {
		return err
	}
	c, err := h.Issues.CreateComment(ctx, v.repo, actor, n, body, triage)
	if err != nil {
		return hidden(x, err)
	}
	is, err := h.Issues.Get(ctx, v.repo, n)
	if err != nil {
		return err
	}
	kind := "/issues/"
	if is.PullRequest {
		kind = "/pull/"
	}
	http.Redirect(w, r, header(v, "").Path+kind+strconv.FormatInt(n, 10)+"#issuecomment-"+strconv.FormatInt(c.ID, 10), http.StatusSeeOther)
	return nil
}

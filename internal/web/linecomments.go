package web

import (
	"net/http"
	"strconv"
	"strings"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/console"
	"forgeapi/internal/issues"
	"forgeapi/internal/pulls"
)

// lineKey names a line of a pull request's diff: its path, side and
// number.
func lineKey(path, side, line string) string { return path + "\x00" + side + "\x00" + line }

// fillLines gives the lines of a pull request's files their anchors and
// the review comments on them (those on the head the page shows; others
// are outdated and stay on the conversation). For a signed-in visitor
// each line links to its comment form (?line={id} on the files page, no
// JavaScript), and the line the query names shows the form.
func (h *Handler) fillLines(r *http.Request, v *repoVisit, pr *pulls.PullRequest, files []diffFile, filesHref string) error {
	ctx := r.Context()
	list, err := h.Pulls.Comments(ctx, pr)
	if err != nil {
		return err
	}
	byLine := map[string][]lineComment{}
	for _, c := range list {
		if c.CommitID != pr.HeadSHA || c.Line == nil {
			continue
		}
		body, err := h.renderGFM(ctx, v.repo, c.Body)
		if err != nil {
			return err
		}
		key := lineKey(c.Path, c.Side, strconv.Itoa(*c.Line))
		byLine[key] = append(byLine[key], lineComment{Anchor: "discussion_r" + strconv.FormatInt(c.ID, 10), Login: login(c.User), Body: body})
	}
	signedIn, open := v.x.Login() != "", r.URL.Query().Get("line")
	action := pullAction(header(v, "").Path, pr.Issue.Number, "comments")
	for i := range files {
		f := &files[i]
		for j := range f.Lines {
			l := &f.Lines[j]
			side, num, ok := l.side()
			if !ok {
				continue
			}
			l.ID = f.Anchor + side[:1] + num
			l.Comments = byLine[lineKey(f.Path, side, num)]
			if !signedIn {
				continue
			}
			l.CommentHref = filesHref + "?line=" + l.ID + "#" + l.ID
			if l.ID == open {
				l.Form = &lineForm{Action: action, Path: f.Path, Side: side, Line: num, SHA: pr.HeadSHA,
					Label: "Comment on line " + num + " of " + f.Path}
			}
		}
	}
	return nil
}

// lineCommentPull serves POST /console/{owner}/{repo}/pull/{number}/comments,
// the form of a line of a pull request's diff: the signed-in user
// comments on the line (path, side, line) of the head the page showed, as
// POST .../pulls/{number}/comments does (pulls.Service.CreateComment: the
// line must be in the diff, blocks apply, the review and its
// pull_request_review_comment and pull_request_review events), and is
// sent back to the comment on the files page.
func (h *Handler) lineCommentPull(w http.ResponseWriter, r *http.Request, x console.Visitor) error {
	ctx := r.Context()
	v, n, err := h.formTarget(ctx, x, r, errSignIn)
	if err != nil {
		return err
	}
	c, err := lineCommentForm(r)
	if err != nil {
		return err
	}
	actor, err := accounts.ByID(ctx, h.DB, x.Principal().Account.ID)
	if err != nil {
		return err
	}
	rc, err := h.Pulls.CreateComment(ctx, v.repo, actor, n, c)
	if err != nil {
		return hidden(x, err)
	}
	http.Redirect(w, r, header(v, "").Path+"/pull/"+strconv.FormatInt(n, 10)+"/files#discussion_r"+strconv.FormatInt(rc.ID, 10), http.StatusSeeOther)
	return nil
}

// lineCommentForm reads a line comment's form, checked as the API checks
// its body (422 with errors[] for a missing body, path or line, or a side
// other than LEFT and RIGHT).
func lineCommentForm(r *http.Request) (pulls.NewComment, error) {
	f := r.PostForm
	c := pulls.NewComment{Path: f.Get("path"), Side: f.Get("side"), CommitID: f.Get("sha"),
		Body: strings.ReplaceAll(f.Get("body"), "\r\n", "\n")}
	var errs apierr.Fields
	if strings.TrimSpace(c.Body) == "" {
		errs.Add("PullRequestReviewComment", "body", apierr.CodeMissingField)
	} else {
		errs.MaxLength("PullRequestReviewComment", "body", c.Body, issues.MaxBody)
	}
	if c.Path == "" {
		errs.Add("PullRequestReviewComment", "path", apierr.CodeMissingField)
	}
	line, err := strconv.Atoi(f.Get("line"))
	if err != nil || line <= 0 {
		errs.Add("PullRequestReviewComment", "line", apierr.CodeMissingField)
	}
	if c.Side != "LEFT" && c.Side != "RIGHT" {
		errs.Add("PullRequestReviewComment", "side", apierr.CodeInvalid)
	}
	c.Line = line
	return c, errs.Err()
}

package pulls

import (
	"net/http"

	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/issues"
	"forgeapi/internal/repos"
)

// viewer is the caller's user id, 0 for anonymous callers.
func viewer(r *http.Request) int64 {
	p := auth.PrincipalFrom(r.Context())
	if p == nil || p.Anonymous() {
		return 0
	}
	return p.UserID()
}

// routePull loads the route's pull request.
func (h *Handler) routePull(r *http.Request) (*PullRequest, error) {
	n, err := pullNumber(r)
	if err != nil {
		return nil, err
	}
	p, err := h.Service.Get(r.Context(), repos.From(r.Context()), n)
	return p, err
}

// pathID is the route's numeric {name}: a 404 when it is not a number.
func pathID(r *http.Request, name string) (int64, error) {
	id, err := httpapi.PathInt64(r, name)
	if err != nil {
		return 0, apierr.NotFound()
	}
	return id, nil
}

// commentRequest is a line comment in a body.
type commentRequest struct {
	Path      string `json:"path"`
	Position  int    `json:"position"`
	Line      int    `json:"line"`
	Side      string `json:"side"`
	Body      string `json:"body"`
	CommitID  string `json:"commit_id"`
	InReplyTo *int64 `json:"in_reply_to"`
}

func (c commentRequest) toNew() NewComment {
	return NewComment{Path: c.Path, Side: c.Side, Body: c.Body, Line: c.Line, Position: c.Position, CommitID: c.CommitID, InReplyTo: c.InReplyTo}
}

func (c commentRequest) validate(reply bool) error {
	var f apierr.Fields
	if c.Body == "" {
		f.Add("PullRequestReviewComment", "body", apierr.CodeMissingField)
	} else {
		f.MaxLength("PullRequestReviewComment", "body", c.Body, issues.MaxBody)
	}
	if !reply && c.Path == "" {
		f.Add("PullRequestReviewComment", "path", apierr.CodeMissingField)
	}
	if !reply && c.Line == 0 && c.Position == 0 {
		f.Add("PullRequestReviewComment", "line", apierr.CodeMissingField)
	}
	if c.Side != "" && c.Side != "LEFT" && c.Side != "RIGHT" {
		f.Add("PullRequestReviewComment", "side", apierr.CodeInvalid)
	}
	return f.Err()
}

// simpleErrors answers next's validation errors as the platform's review
// operations do: "Unprocessable Entity" with errors[] as strings
// (apierr.Simple), not field objects.
func simpleErrors(next httpapi.HandlerFunc) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error { return apierr.Simple(next(w, r)) }
}

// createReview answers POST .../pulls/{pull_number}/reviews: 200 with
// the review.
func (h *Handler) createReview(w http.ResponseWriter, r *http.Request) error {
	p, err := h.routePull(r)
	if err != nil {
		return err
	}
	var body struct {
		CommitID string           `json:"commit_id"`
		Body     string           `json:"body"`
		Event    string           `json:"event"`
		Comments []commentRequest `json:"comments"`
	}
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	n := NewReview{CommitID: body.CommitID, Body: body.Body, Event: body.Event}
	for _, c := range body.Comments {
		if err := c.validate(false); err != nil {
			return err
		}
		n.Comments = append(n.Comments, c.toNew())
	}
	actor, err := h.actor(r)
	if err != nil {
		return err
	}
	rv, err := h.Service.CreateReview(r.Context(), p.Repo, actor, p.Number(), n)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toReviewJSON(httpapi.BaseURL(r.Context()), p, rv, false))
	return nil
}

// listReviews answers GET .../pulls/{pull_number}/reviews, paged.
func (h *Handler) listReviews(w http.ResponseWriter, r *http.Request) error {
	p, page, err := h.pullAndPage(r)
	if err != nil {
		return err
	}
	list, err := h.Service.Reviews(r.Context(), p, viewer(r))
	if err != nil {
		return err
	}
	out := []reviewJSON{}
	for _, rv := range httpapi.Slice(page, list) {
		out = append(out, toReviewJSON(httpapi.BaseURL(r.Context()), p, rv, false))
	}
	httpapi.SetLinks(w, r, page, len(list))
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// getReview answers GET .../reviews/{review_id}.
func (h *Handler) getReview(w http.ResponseWriter, r *http.Request) error {
	p, err := h.routePull(r)
	if err != nil {
		return err
	}
	id, err := pathID(r, "review_id")
	if err != nil {
		return err
	}
	rv, err := h.Service.Review(r.Context(), p, id, viewer(r))
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toReviewJSON(httpapi.BaseURL(r.Context()), p, rv, false))
	return nil
}

// reviewAction runs a change of one review and answers it.
func (h *Handler) reviewAction(w http.ResponseWriter, r *http.Request, body any,
	run func(p *PullRequest, id int64) (*Review, error)) error {
	p, err := h.routePull(r)
	if err != nil {
		return err
	}
	id, err := pathID(r, "review_id")
	if err != nil {
		return err
	}
	if err := httpapi.DecodeJSON(r, body); err != nil {
		return err
	}
	rv, err := run(p, id)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toReviewJSON(httpapi.BaseURL(r.Context()), p, rv, false))
	return nil
}

// updateReview answers PUT .../reviews/{review_id}: its author changes
// the body.
func (h *Handler) updateReview(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Body *string `json:"body"`
	}
	return h.reviewAction(w, r, &body, func(p *PullRequest, id int64) (*Review, error) {
		if body.Body == nil || *body.Body == "" {
			return nil, apierr.Invalid("PullRequestReview", "body", apierr.CodeMissingField)
		}
		actor, err := h.actor(r)
		if err != nil {
			return nil, err
		}
		return h.Service.UpdateReview(r.Context(), p.Repo, actor, p.Number(), id, *body.Body)
	})
}

// deletePendingReview answers DELETE .../reviews/{review_id}: its author
// deletes a pending review (200 with it as it was).
func (h *Handler) deletePendingReview(w http.ResponseWriter, r *http.Request) error {
	var body struct{}
	return h.reviewAction(w, r, &body, func(p *PullRequest, id int64) (*Review, error) {
		actor, err := h.actor(r)
		if err != nil {
			return nil, err
		}
		return h.Service.DeletePendingReview(r.Context(), p.Repo, actor, p.Number(), id)
	})
}

// submitReview answers POST .../reviews/{review_id}/events.
func (h *Handler) submitReview(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Body  string `json:"body"`
		Event string `json:"event"`
	}
	return h.reviewAction(w, r, &body, func(p *PullRequest, id int64) (*Review, error) {
		actor, err := h.actor(r)
		if err != nil {
			return nil, err
		}
		return h.Service.SubmitReview(r.Context(), p.Repo, actor, p.Number(), id, body.Event, body.Body)
	})
}

// dismissReview answers PUT .../reviews/{review_id}/dismissals (push
// access).
func (h *Handler) dismissReview(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Message string `json:"message"`
		Event   string `json:"event"`
	}
	return h.reviewAction(w, r, &body, func(p *PullRequest, id int64) (*Review, error) {
		if body.Message == "" {
			return nil, apierr.Invalid("PullRequestReview", "message", apierr.CodeMissingField)
		}
		actor, err := h.actor(r)
		if err != nil {
			return nil, err
		}
		return h.Service.DismissReview(r.Context(), p.Repo, actor, p.Number(), id, body.Message)
	})
}

// listReviewComments answers GET .../reviews/{review_id}/comments.
func (h *Handler) listReviewComments(w http.ResponseWriter, r *http.Request) error {
	p, page, err := h.pullAndPage(r)
	if err != nil {
		return err
	}
	id, err := pathID(r, "review_id")
	if err != nil {
		return err
	}
	if _, err := h.Service.Review(r.Context(), p, id, viewer(r)); err != nil {
		return err
	}
	list, err := h.Service.ReviewCommentsOf(r.Context(), p, id)
	if err != nil {
		return err
	}
	return h.writeComments(w, r, page, list, func(*ReviewComment) int64 { return p.Number() })
}

// writeComments answers a page of review comments.
func (h *Handler) writeComments(w http.ResponseWriter, r *http.Request, page httpapi.Page, list []*ReviewComment, number func(*ReviewComment) int64) error {
	base, repo := httpapi.BaseURL(r.Context()), repos.From(r.Context())
	out := []commentJSON{}
	for _, c := range httpapi.Slice(page, list) {
		out = append(out, toCommentJSON(base, repo, number(c), c))
	}
	httpapi.SetLinks(w, r, page, len(list))
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// listComments answers GET .../pulls/{pull_number}/comments.
func (h *Handler) listComments(w http.ResponseWriter, r *http.Request) error {
	p, page, err := h.pullAndPage(r)
	if err != nil {
		return err
	}
	list, err := h.Service.Comments(r.Context(), p)
	if err != nil {
		return err
	}
	return h.writeComments(w, r, page, list, func(*ReviewComment) int64 { return p.Number() })
}

// listRepoComments answers GET /repos/{owner}/{repo}/pulls/comments.
func (h *Handler) listRepoComments(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	list, err := h.Service.RepoComments(r.Context(), repos.From(r.Context()))
	if err != nil {
		return err
	}
	numbers := map[int64]int64{}
	for _, c := range list {
		if _, ok := numbers[c.PullID]; !ok {
			if numbers[c.PullID], err = numberOf(r.Context(), h.Service.DB, c.PullID); err != nil {
				return err
			}
		}
	}
	return h.writeComments(w, r, page, list, func(c *ReviewComment) int64 { return numbers[c.PullID] })
}

// createComment answers POST .../pulls/{pull_number}/comments: 201.
func (h *Handler) createComment(w http.ResponseWriter, r *http.Request) error {
	var body commentRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	return h.addComment(w, r, body)
}

// replyComment answers POST .../pulls/{pull_number}/comments/{comment_id}/replies: 201.
func (h *Handler) replyComment(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "comment_id")
	if err != nil {
		return err
	}
	var body commentRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	body.InReplyTo = &id
	return h.addComment(w, r, body)
}

func (h *Handler) addComment(w http.ResponseWriter, r *http.Request, body commentRequest) error {
	if err := body.validate(body.InReplyTo != nil); err != nil {
		return err
	}
	p, err := h.routePull(r)
	if err != nil {
		return err
	}
	actor, err := h.actor(r)
	if err != nil {
		return err
	}
	c, err := h.Service.CreateComment(r.Context(), p.Repo, actor, p.Number(), body.toNew())
	if err != nil {
		return err
	}
	j := toCommentJSON(httpapi.BaseURL(r.Context()), p.Repo, p.Number(), c)
	httpapi.WriteCreated(w, j.URL, j)
	return nil
}

// commentID is {comment_id} of .../pulls/{comments}/{comment_id}: a 404
// unless {comments} is "comments" and the id a number.
func commentID(r *http.Request) (int64, error) {
	if v := r.PathValue("comments"); v != "" && v != "comments" {
		return 0, apierr.NotFound()
	}
	return pathID(r, "comment_id")
}

// getComment answers GET /repos/{owner}/{repo}/pulls/comments/{comment_id}.
func (h *Handler) getComment(w http.ResponseWriter, r *http.Request) error {
	id, err := commentID(r)
	if err != nil {
		return err
	}
	repo := repos.From(r.Context())
	c, n, err := h.Service.Comment(r.Context(), repo, id)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toCommentJSON(httpapi.BaseURL(r.Context()), repo, n, c))
	return nil
}

// updateComment answers PATCH .../pulls/comments/{comment_id}.
func (h *Handler) updateComment(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Body *string `json:"body"`
	}
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.Body == nil || *body.Body == "" {
		return apierr.Invalid("PullRequestReviewComment", "body", apierr.CodeMissingField)
	}
	return h.changeComment(w, r, body.Body)
}

// deleteComment answers DELETE .../pulls/comments/{comment_id}: 204.
func (h *Handler) deleteComment(w http.ResponseWriter, r *http.Request) error {
	return h.changeComment(w, r, nil)
}

func (h *Handler) changeComment(w http.ResponseWriter, r *http.Request, body *string) error {
	id, err := commentID(r)
	if err != nil {
		return err
	}
	actor, err := h.actor(r)
	if err != nil {
		return err
	}
	repo := repos.From(r.Context())
	c, n, err := h.Service.UpdateComment(r.Context(), repo, actor, id, body, auth.RoleFrom(r.Context()) >= auth.RoleWrite)
	if err != nil {
		return err
	}
	if body == nil {
		httpapi.NoContent(w)
		return nil
	}
	httpapi.WriteJSON(w, http.StatusOK, toCommentJSON(httpapi.BaseURL(r.Context()), repo, n, c))
	return nil
}

// reviewRequestJSON is the platform's pull-request-review-request.
type reviewRequestJSON struct {
	Users []any `json:"users"`
	Teams []any `json:"teams"`
}

// listRequestedReviewers answers GET .../requested_reviewers.
func (h *Handler) listRequestedReviewers(w http.ResponseWriter, r *http.Request) error {
	p, err := h.routePull(r)
	if err != nil {
		return err
	}
	out := reviewRequestJSON{Users: []any{}, Teams: []any{}}
	for _, a := range p.RequestedReviewers {
		out.Users = append(out.Users, simpleUser(httpapi.BaseURL(r.Context()), a))
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// requestReviewers answers POST (201) and DELETE (200) of
// .../requested_reviewers with the pull request; its author or push
// access.
func (h *Handler) requestReviewers(w http.ResponseWriter, r *http.Request) error {
	p, err := h.routePull(r)
	if err != nil {
		return err
	}
	var body struct {
		Reviewers     []string `json:"reviewers"`
		TeamReviewers []string `json:"team_reviewers"`
	}
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	remove := r.Method == http.MethodDelete
	if remove && body.Reviewers == nil {
		return apierr.Invalid("PullRequest", "reviewers", apierr.CodeMissingField)
	}
	actor, err := h.actor(r)
	if err != nil {
		return err
	}
	if auth.RoleFrom(r.Context()) < auth.RoleWrite && (p.Issue.User == nil || p.Issue.User.ID != actor.ID) {
		return apierr.Forbidden("Must have push access to repository.")
	}
	p, err = h.Service.RequestReviewers(r.Context(), p.Repo, actor, p.Number(), body.Reviewers, body.TeamReviewers, remove)
	if err != nil {
		return err
	}
	j, err := h.render(r).pull(r.Context(), p, false)
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if remove {
		status = http.StatusOK
	}
	httpapi.WriteJSON(w, status, j)
	return nil
}

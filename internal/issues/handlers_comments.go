package issues

import (
	"net/http"
	"strings"

	"forgeapi/internal/apierr"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
)

// commentID is {comment_id} of a route declared .../issues/{comments}/{comment_id}
// or .../issues/comments/{comment_id}: a 404 for anything else.
func commentID(r *http.Request) (int64, error) {
	if c := r.PathValue("comments"); c != "" && c != "comments" {
		return 0, apierr.NotFound()
	}
	id, err := httpapi.PathInt64(r, "comment_id")
	if err != nil {
		return 0, apierr.NotFound()
	}
	return id, nil
}

// commentBody reads and checks {"body": ...}: required, at most MaxBody.
func commentBody(r *http.Request) (string, error) {
	var body struct {
		Body *string `json:"body"`
	}
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return "", err
	}
	var f apierr.Fields
	if body.Body == nil || strings.TrimSpace(*body.Body) == "" {
		f.Add("IssueComment", "body", apierr.CodeMissingField)
	} else {
		f.MaxLength("IssueComment", "body", *body.Body, MaxBody)
	}
	if err := f.Err(); err != nil {
		return "", err
	}
	return *body.Body, nil
}

func (h *Handler) writeComments(w http.ResponseWriter, r *http.Request, page httpapi.Page, list []*Comment) {
	u := h.urls(r)
	writePage(w, r, page, list, func(c *Comment) commentJSON { return toCommentJSON(u, c) })
}

// listComments answers GET .../issues/{issue_number}/comments: oldest
// first, paged.
func (h *Handler) listComments(w http.ResponseWriter, r *http.Request) error {
	n, err := issueNumber(r)
	if err != nil {
		return err
	}
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	list, err := h.Service.Comments(r.Context(), repos.From(r.Context()), n, page.Limit(), page.Offset())
	if err != nil {
		return err
	}
	h.writeComments(w, r, page, list)
	return nil
}

// listRepoComments answers GET .../issues/comments: every issue's
// comments by creation, direction asc (default) or desc.
func (h *Handler) listRepoComments(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	if s := q.Get("sort"); s != "" && s != "created" && s != "updated" {
		return apierr.Invalid("IssueComment", "sort", apierr.CodeInvalid)
	}
	d := q.Get("direction")
	if d != "" && d != "asc" && d != "desc" {
		return apierr.Invalid("IssueComment", "direction", apierr.CodeInvalid)
	}
	list, err := h.Service.RepoComments(r.Context(), repos.From(r.Context()), d == "desc", page.Limit(), page.Offset())
	if err != nil {
		return err
	}
	h.writeComments(w, r, page, list)
	return nil
}

// getComment answers GET .../issues/comments/{comment_id}, and
// GET .../issues/events/{event_id}, which shares its route.
func (h *Handler) getComment(w http.ResponseWriter, r *http.Request) error {
	if r.PathValue("comments") == "events" {
		return h.getRepoEvent(w, r)
	}
	id, err := commentID(r)
	if err != nil {
		return err
	}
	c, err := h.Service.Comment(r.Context(), repos.From(r.Context()), id)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toCommentJSON(h.urls(r), c))
	return nil
}

// createComment answers POST .../issues/{issue_number}/comments: 201.
func (h *Handler) createComment(w http.ResponseWriter, r *http.Request) error {
	n, err := issueNumber(r)
	if err != nil {
		return err
	}
	body, err := commentBody(r)
	if err != nil {
		return err
	}
	actor, triage, err := h.caller(r)
	if err != nil {
		return err
	}
	c, err := h.Service.CreateComment(r.Context(), repos.From(r.Context()), actor, n, body, triage)
	if err != nil {
		return err
	}
	j := toCommentJSON(h.urls(r), c)
	httpapi.WriteCreated(w, j.URL, j)
	return nil
}

// updateComment answers PATCH .../issues/comments/{comment_id}.
func (h *Handler) updateComment(w http.ResponseWriter, r *http.Request) error {
	id, err := commentID(r)
	if err != nil {
		return err
	}
	body, err := commentBody(r)
	if err != nil {
		return err
	}
	actor, triage, err := h.caller(r)
	if err != nil {
		return err
	}
	c, err := h.Service.UpdateComment(r.Context(), repos.From(r.Context()), actor, id, body, triage)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toCommentJSON(h.urls(r), c))
	return nil
}

// deleteComment answers DELETE .../issues/comments/{comment_id}: 204.
func (h *Handler) deleteComment(w http.ResponseWriter, r *http.Request) error {
	id, err := commentID(r)
	if err != nil {
		return err
	}
	actor, triage, err := h.caller(r)
	if err != nil {
		return err
	}
	if err := h.Service.DeleteComment(r.Context(), repos.From(r.Context()), actor, id, triage); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

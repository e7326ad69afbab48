package gists

import (
	"errors"
	"net/http"
	"strings"

	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/store"
)

// checkStar answers GET /gists/{gist_id}/star: 204 when the caller stars
// the gist, else (no such gist, an anonymous caller) 404 with the empty
// object the description has.
func (h *Handler) checkStar(w http.ResponseWriter, r *http.Request) error {
	g, err := ByName(r.Context(), h.Service.DB, r.PathValue("gist_id"))
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	ok := false
	if userID := auth.PrincipalFrom(r.Context()).UserID(); err == nil && userID != 0 {
		if ok, err = Starred(r.Context(), h.Service.DB, g, userID); err != nil {
			return err
		}
	}
	if !ok {
		httpapi.WriteJSON(w, http.StatusNotFound, struct{}{})
		return nil
	}
	httpapi.NoContent(w)
	return nil
}

func (h *Handler) star(w http.ResponseWriter, r *http.Request) error {
	g, err := h.gist(r)
	if err != nil {
		return err
	}
	if err := h.Service.Star(r.Context(), g, auth.PrincipalFrom(r.Context()).UserID()); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

func (h *Handler) unstar(w http.ResponseWriter, r *http.Request) error {
	g, err := h.gist(r)
	if err != nil {
		return err
	}
	if err := h.Service.Unstar(r.Context(), g, auth.PrincipalFrom(r.Context()).UserID()); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

// MaxCommentBody is the longest comment body, in characters, as the
// platform's issue comments.
const MaxCommentBody = 65536

// commentBody reads the body of a comment's POST or PATCH: required, not
// blank, at most MaxCommentBody characters.
func commentBody(r *http.Request) (string, error) {
	var body struct {
		Body *string `json:"body"`
	}
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return "", err
	}
	switch {
	case body.Body == nil:
		return "", apierr.Invalid("GistComment", "body", apierr.CodeMissingField)
	case strings.TrimSpace(*body.Body) == "":
		return "", apierr.Invalid("GistComment", "body", apierr.CodeMissing)
	case apierr.TooLongFor(*body.Body, MaxCommentBody):
		return "", apierr.Validation(apierr.TooLong("GistComment", "body", MaxCommentBody))
	}
	return *body.Body, nil
}

func (h *Handler) listComments(w http.ResponseWriter, r *http.Request) error {
	g, err := h.gist(r)
	if err != nil {
		return err
	}
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	list, more, err := Comments(r.Context(), h.Service.DB, g, page.Offset(), page.Limit())
	if err != nil {
		return err
	}
	base := httpapi.BaseURL(r.Context())
	out := make([]commentJSON, 0, len(list))
	for _, c := range list {
		out = append(out, toCommentJSON(base, g, c))
	}
	httpapi.SetLinksMore(w, r, page, more)
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h *Handler) createComment(w http.ResponseWriter, r *http.Request) error {
	body, err := commentBody(r)
	if err != nil {
		return err
	}
	g, err := h.gist(r)
	if err != nil {
		return err
	}
	user, err := h.caller(r)
	if err != nil {
		return err
	}
	c, err := h.Service.AddComment(r.Context(), g, user, body)
	if err != nil {
		return err
	}
	j := toCommentJSON(httpapi.BaseURL(r.Context()), g, c)
	httpapi.WriteCreated(w, j.URL, j)
	return nil
}

// comment returns the gist and its comment the path names.
func (h *Handler) comment(r *http.Request) (*Gist, *Comment, error) {
	g, err := h.gist(r)
	if err != nil {
		return nil, nil, err
	}
	id, err := httpapi.PathInt64(r, "comment_id")
	if err != nil {
		return nil, nil, err
	}
	c, err := CommentByID(r.Context(), h.Service.DB, g, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, apierr.NotFound()
	}
	return g, c, err
}

func (h *Handler) getComment(w http.ResponseWriter, r *http.Request) error {
	g, c, err := h.comment(r)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toCommentJSON(httpapi.BaseURL(r.Context()), g, c))
	return nil
}

// updateComment answers PATCH .../comments/{comment_id}: its author only
// (anyone else: 404).
func (h *Handler) updateComment(w http.ResponseWriter, r *http.Request) error {
	body, err := commentBody(r)
	if err != nil {
		return err
	}
	g, c, err := h.comment(r)
	if err != nil {
		return err
	}
	if c.User == nil || c.User.ID != auth.PrincipalFrom(r.Context()).UserID() {
		return apierr.NotFound()
	}
	if err := h.Service.EditComment(r.Context(), c, body); err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toCommentJSON(httpapi.BaseURL(r.Context()), g, c))
	return nil
}

// deleteComment answers DELETE .../comments/{comment_id}: its author or
// the gist's owner (anyone else: 403).
func (h *Handler) deleteComment(w http.ResponseWriter, r *http.Request) error {
	g, c, err := h.comment(r)
	if err != nil {
		return err
	}
	me := auth.PrincipalFrom(r.Context()).UserID()
	if (c.User == nil || c.User.ID != me) && g.Owner.ID != me {
		return apierr.Forbidden("Only the comment's author or the gist's owner deletes a comment.")
	}
	if err := h.Service.DeleteComment(r.Context(), c); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

package pulls

import (
	"net/http"
	"slices"
	"strings"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/git/gitdiff"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/issues"
	"forgeapi/internal/repos"
)

// Handler serves the pull request endpoints.
type Handler struct {
	Service *Service
}

// actor is the calling user (an installation's bot for its tokens).
func (h *Handler) actor(r *http.Request) (*accounts.Account, error) {
	return accounts.ByID(r.Context(), h.Service.DB, auth.PrincipalFrom(r.Context()).UserID())
}

// pullNumber is {pull_number}: a 404 when it is not a number.
func pullNumber(r *http.Request) (int64, error) {
	n, err := httpapi.PathInt64(r, "pull_number")
	if err != nil {
		return 0, apierr.NotFound()
	}
	return n, nil
}

func (h *Handler) render(r *http.Request) *renderer {
	return newRenderer(r.Context(), h.Service.DB, repos.URLsOf(r.Context()))
}

// createRequest is the body of POST .../pulls.
type createRequest struct {
	Title *string `json:"title"`
	Body  *string `json:"body"`
	Head  *string `json:"head" text:"gitname"`
	Base  *string `json:"base" text:"gitname"`
	Issue *int64  `json:"issue"`
	Draft bool    `json:"draft"`
}

func (b createRequest) validate() error {
	var f apierr.Fields
	if b.Head == nil || *b.Head == "" {
		f.Add("PullRequest", "head", apierr.CodeMissingField)
	}
	if b.Base == nil || *b.Base == "" {
		f.Add("PullRequest", "base", apierr.CodeMissingField)
	}
	if b.Issue == nil {
		if b.Title == nil || strings.TrimSpace(*b.Title) == "" {
			f.Add("PullRequest", "title", apierr.CodeMissingField)
		} else {
			f.MaxLength("PullRequest", "title", *b.Title, issues.MaxTitle)
		}
	}
	if b.Body != nil {
		f.MaxLength("PullRequest", "body", *b.Body, issues.MaxBody)
	}
	return f.Err()
}

// create answers POST /repos/{owner}/{repo}/pulls: 201 with the pull
// request.
func (h *Handler) create(w http.ResponseWriter, r *http.Request) error {
	var body createRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	if err := body.validate(); err != nil {
		return err
	}
	actor, err := h.actor(r)
	if err != nil {
		return err
	}
	n := NewPull{Head: *body.Head, Base: *body.Base, Issue: body.Issue, Draft: body.Draft}
	if body.Title != nil {
		n.Title = *body.Title
	}
	if body.Body != nil {
		n.Body = *body.Body
	}
	p, err := h.Service.Create(r.Context(), repos.From(r.Context()), actor, n)
	if err != nil {
		return err
	}
	j, err := h.render(r).pull(r.Context(), p, true)
	if err != nil {
		return err
	}
	httpapi.WriteCreated(w, j.URL, j)
	return nil
}

// get answers GET .../pulls/{pull_number}: the pull request, or its
// diff or patch for those media types (serveDiff).
func (h *Handler) get(w http.ResponseWriter, r *http.Request) error {
	n, err := pullNumber(r)
	if err != nil {
		return err
	}
	p, err := h.Service.Get(r.Context(), repos.From(r.Context()), n)
	if err != nil {
		return err
	}
	if f := gitdiff.Requested(r); f != "" {
		return h.serveDiff(w, r, p, f)
	}
	j, err := h.render(r).pull(r.Context(), p, true)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, j)
	return nil
}

// list answers GET /repos/{owner}/{repo}/pulls with state, head, base,
// sort and direction, paged with Link.
func (h *Handler) list(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	f := Filter{State: q.Get("state"), Head: q.Get("head"), Base: q.Get("base"), Sort: q.Get("sort")}
	if f.State == "" {
		f.State = issues.StateOpen
	}
	if !slices.Contains([]string{issues.StateOpen, issues.StateClosed, "all"}, f.State) {
		return apierr.Invalid("PullRequest", "state", apierr.CodeInvalid)
	}
	if f.Sort == "" {
		f.Sort = "created"
	}
	if !slices.Contains([]string{"created", "updated", "popularity", "long-running"}, f.Sort) {
		return apierr.Invalid("PullRequest", "sort", apierr.CodeInvalid)
	}
	switch d := q.Get("direction"); d {
	case "":
		f.Desc = f.Sort == "created"
	case "asc", "desc":
		f.Desc = d == "desc"
	default:
		return apierr.Invalid("PullRequest", "direction", apierr.CodeInvalid)
	}
	var err error
	if f.Page, err = httpapi.ParsePage(r); err != nil {
		return err
	}
	list, more, err := h.Service.List(r.Context(), repos.From(r.Context()), f)
	if err != nil {
		return err
	}
	rd := h.render(r)
	out := make([]*pullJSON, 0, len(list))
	for _, p := range list {
		j, err := rd.pull(r.Context(), p, false)
		if err != nil {
			return err
		}
		out = append(out, j)
	}
	httpapi.SetLinksMore(w, r, f.Page, more)
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// updateRequest is the body of PATCH .../pulls/{pull_number}.
type updateRequest struct {
	Title *string `json:"title"`
	Body  *string `json:"body"`
	State *string `json:"state"`
	Base  *string `json:"base" text:"gitname"`
}

func (b updateRequest) validate() error {
	var f apierr.Fields
	if b.Title != nil {
		if strings.TrimSpace(*b.Title) == "" {
			f.Add("PullRequest", "title", apierr.CodeMissingField)
		} else {
			f.MaxLength("PullRequest", "title", *b.Title, issues.MaxTitle)
		}
	}
	if b.Body != nil {
		f.MaxLength("PullRequest", "body", *b.Body, issues.MaxBody)
	}
	if b.State != nil && *b.State != issues.StateOpen && *b.State != issues.StateClosed {
		f.Add("PullRequest", "state", apierr.CodeInvalid)
	}
	if b.Base != nil && *b.Base == "" {
		f.Add("PullRequest", "base", apierr.CodeInvalid)
	}
	return f.Err()
}

// update answers PATCH .../pulls/{pull_number}: its author or someone
// with push access changes the title, body, state and base.
func (h *Handler) update(w http.ResponseWriter, r *http.Request) error {
	n, err := pullNumber(r)
	if err != nil {
		return err
	}
	var body updateRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	if err := body.validate(); err != nil {
		return err
	}
	actor, err := h.actor(r)
	if err != nil {
		return err
	}
	mayPush := auth.RoleFrom(r.Context()) >= auth.RoleWrite
	p, err := h.Service.Update(r.Context(), repos.From(r.Context()), actor, n,
		Changes{Title: body.Title, Body: body.Body, State: body.State, Base: body.Base}, mayPush)
	if err != nil {
		return err
	}
	j, err := h.render(r).pull(r.Context(), p, true)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, j)
	return nil
}

// checkMerged answers GET .../pulls/{pull_number}/merge: 204 when the
// pull request was merged, 404 otherwise.
func (h *Handler) checkMerged(w http.ResponseWriter, r *http.Request) error {
	n, err := pullNumber(r)
	if err != nil {
		return err
	}
	p, err := h.Service.Get(r.Context(), repos.From(r.Context()), n)
	if err != nil {
		return err
	}
	if p.MergedAt == nil {
		return apierr.NotFound()
	}
	httpapi.NoContent(w)
	return nil
}

// mergeRequest is the body of PUT .../pulls/{pull_number}/merge.
type mergeRequest struct {
	CommitTitle   *string `json:"commit_title"`
	CommitMessage *string `json:"commit_message"`
	SHA           string  `json:"sha"`
	MergeMethod   string  `json:"merge_method"`
}

// merge answers PUT .../pulls/{pull_number}/merge: 200 with the merge
// commit's SHA.
func (h *Handler) merge(w http.ResponseWriter, r *http.Request) error {
	n, err := pullNumber(r)
	if err != nil {
		return err
	}
	var body mergeRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.MergeMethod == "" {
		body.MergeMethod = MethodMerge
	}
	if !slices.Contains([]string{MethodMerge, MethodSquash, MethodRebase}, body.MergeMethod) {
		return apierr.Invalid("PullRequest", "merge_method", apierr.CodeInvalid)
	}
	actor, err := h.actor(r)
	if err != nil {
		return err
	}
	who, err := Identity(r.Context(), h.Service.DB, actor)
	if err != nil {
		return err
	}
	m := MergeRequest{Method: body.MergeMethod, SHA: body.SHA}
	if body.CommitTitle != nil {
		m.Title, m.HasTitle = *body.CommitTitle, true
	}
	if body.CommitMessage != nil {
		m.Message, m.HasMessage = *body.CommitMessage, true
	}
	res, err := h.Service.Merge(r.Context(), repos.From(r.Context()), actor, who, n, m)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"sha": res.SHA, "merged": true, "message": "Pull Request successfully merged"})
	return nil
}

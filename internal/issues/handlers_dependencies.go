package issues

import (
	"errors"
	"net/http"
	"strconv"

	"forgeapi/internal/access"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// listBlockedBy answers GET .../issues/{issue_number}/dependencies/blocked_by.
func (h *Handler) listBlockedBy(w http.ResponseWriter, r *http.Request) error {
	return h.listDependencies(w, r, false)
}

// listBlocking answers GET .../issues/{issue_number}/dependencies/blocking.
func (h *Handler) listBlocking(w http.ResponseWriter, r *http.Request) error {
	return h.listDependencies(w, r, true)
}

// listDependencies lists the issues blocking the route's issue (blocking:
// that it blocks) that the caller may read, a page at a time.
func (h *Handler) listDependencies(w http.ResponseWriter, r *http.Request, blocking bool) error {
	ctx := r.Context()
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	n, err := issueNumber(r)
	if err != nil {
		return err
	}
	is, err := h.Service.Get(ctx, repos.From(ctx), n)
	if err != nil {
		return err
	}
	linked, err := h.Service.Dependencies(ctx, is.ID, blocking)
	if err != nil {
		return err
	}
	out := []issueJSON{}
	base := httpapi.BaseURL(ctx)
	for _, l := range linked {
		role, err := access.RepoRole(ctx, h.Service.DB, auth.PrincipalFrom(ctx), l.Repo)
		if err != nil {
			return err
		}
		if role != auth.RoleNone {
			out = append(out, toIssueJSON(urlsOf(base, l.Repo), l.Issue))
		}
	}
	httpapi.SetLinks(w, r, page, len(out))
	httpapi.WriteJSON(w, http.StatusOK, httpapi.Slice(page, out))
	return nil
}

// dependencyRequest is the body of adding a blocking issue: its id.
type dependencyRequest struct {
	IssueID *int64 `json:"issue_id"`
}

// addBlockedBy answers POST .../issues/{issue_number}/dependencies/blocked_by
// with the issue, its issue_dependencies_summary counting the new
// blocker: the caller needs triage on the issue's repository and read
// access to the blocking issue's; a pull request cannot block.
func (h *Handler) addBlockedBy(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	n, err := issueNumber(r)
	if err != nil {
		return err
	}
	var body dependencyRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.IssueID == nil {
		return apierr.Invalid("Issue", "issue_id", apierr.CodeMissingField)
	}
	if err := h.needTriage(r); err != nil {
		return err
	}
	blocker, blockerRepo, err := h.Service.IssueByID(ctx, *body.IssueID)
	if err == nil {
		var role auth.Role
		if role, err = access.RepoRole(ctx, h.Service.DB, auth.PrincipalFrom(ctx), blockerRepo); err == nil && role == auth.RoleNone {
			err = store.ErrNotFound
		}
	}
	if errors.Is(err, store.ErrNotFound) {
		return apierr.Custom("Issue", "issue_id", "The blocking issue does not exist or you do not have access to it.")
	}
	if err != nil {
		return err
	}
	if blocker.PullRequest {
		return apierr.Custom("Issue", "issue_id", "A pull request cannot block an issue.")
	}
	actor, err := h.actor(r)
	if err != nil {
		return err
	}
	repo := repos.From(ctx)
	is, err := h.Service.AddBlockedBy(ctx, repo, actor, n, Linked{Issue: blocker, Repo: blockerRepo})
	if err != nil {
		return err
	}
	u := h.urls(r)
	w.Header().Set("Location", u.api+"/issues/"+strconv.FormatInt(is.Number, 10)+"/dependencies/blocked_by")
	httpapi.WriteJSON(w, http.StatusCreated, toIssueJSON(u, is))
	return nil
}

// removeBlockedBy answers DELETE .../issues/{issue_number}/dependencies/blocked_by/{issue_id}
// with the issue, its summary without the removed blocker; a dependency
// that is not there is a 404.
func (h *Handler) removeBlockedBy(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	n, err := issueNumber(r)
	if err != nil {
		return err
	}
	id, err := httpapi.PathInt64(r, "issue_id")
	if err != nil {
		return err
	}
	if err := h.needTriage(r); err != nil {
		return err
	}
	actor, err := h.actor(r)
	if err != nil {
		return err
	}
	is, err := h.Service.RemoveBlockedBy(ctx, repos.From(ctx), actor, n, id)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toIssueJSON(h.urls(r), is))
	return nil
}

package issues

import (
	"net/http"

	"forgeapi/internal/apierr"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
)

// writePage writes the first page.Limit() items of a list fetched with
// one extra item, with the Link header of a page that has more.
func writePage[T, J any](w http.ResponseWriter, r *http.Request, page httpapi.Page, list []T, toJSON func(T) J) {
	more := len(list) > page.Limit()
	if more {
		list = list[:page.Limit()]
	}
	out := make([]J, 0, len(list))
	for _, v := range list {
		out = append(out, toJSON(v))
	}
	httpapi.SetLinksMore(w, r, page, more)
	httpapi.WriteJSON(w, http.StatusOK, out)
}

// listIssueEvents answers GET .../issues/{issue_number}/events: oldest
// first, paged.
func (h *Handler) listIssueEvents(w http.ResponseWriter, r *http.Request) error {
	n, err := issueNumber(r)
	if err != nil {
		return err
	}
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	list, err := h.Service.IssueEvents(r.Context(), repos.From(r.Context()), n, page.Limit(), page.Offset())
	if err != nil {
		return err
	}
	u := h.urls(r)
	writePage(w, r, page, list, func(e *Event) eventJSON { return toEventJSON(u, e) })
	return nil
}

// listRepoEvents answers GET .../issues/events: every issue's events,
// newest first, each with its issue.
func (h *Handler) listRepoEvents(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	list, err := h.Service.RepoEvents(r.Context(), repos.From(r.Context()), page.Limit(), page.Offset())
	if err != nil {
		return err
	}
	u := h.urls(r)
	writePage(w, r, page, list, func(e *Event) eventJSON { return toEventJSON(u, e) })
	return nil
}

// getRepoEvent answers GET .../issues/events/{event_id}.
func (h *Handler) getRepoEvent(w http.ResponseWriter, r *http.Request) error {
	id, err := httpapi.PathInt64(r, "comment_id")
	if err != nil {
		return apierr.NotFound()
	}
	e, err := h.Service.RepoEvent(r.Context(), repos.From(r.Context()), id)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toEventJSON(h.urls(r), e))
	return nil
}

// timeline answers GET .../issues/{issue_number}/timeline: events and
// comments in the order they happened, paged.
func (h *Handler) timeline(w http.ResponseWriter, r *http.Request) error {
	n, err := issueNumber(r)
	if err != nil {
		return err
	}
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	list, err := h.Service.Timeline(r.Context(), repos.From(r.Context()), n, page.Limit(), page.Offset())
	if err != nil {
		return err
	}
	u := h.urls(r)
	writePage(w, r, page, list, func(it TimelineItem) any {
		if it.Comment != nil {
			c := toCommentJSON(u, it.Comment)
			return timelineCommentJSON{Event: "commented", Actor: c.User, commentJSON: c}
		}
		return toEventJSON(u, it.Event)
	})
	return nil
}

package issues

import (
	"net/http"
	"strings"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
)

// milestoneNumber is {milestone_number}: a 404 when not a number.
func milestoneNumber(r *http.Request) (int64, error) {
	n, err := httpapi.PathInt64(r, "milestone_number")
	if err != nil {
		return 0, apierr.NotFound()
	}
	return n, nil
}

// milestoneRequest is the body of creating or updating a milestone.
type milestoneRequest struct {
	Title       *string          `json:"title"`
	State       *string          `json:"state"`
	Description *string          `json:"description"`
	DueOn       nullable[string] `json:"due_on"`
}

// changes checks the body and returns what it sets; create requires a
// title.
func (b milestoneRequest) changes(create bool) (MilestoneChanges, error) {
	var f apierr.Fields
	c := MilestoneChanges{Title: b.Title, Description: b.Description, State: b.State}
	switch {
	case create && b.Title == nil, b.Title != nil && strings.TrimSpace(*b.Title) == "":
		f.Add("Milestone", "title", apierr.CodeMissingField)
	case b.Title != nil:
		f.MaxLength("Milestone", "title", *b.Title, MaxMilestoneTitle)
	}
	if b.State != nil && *b.State != StateOpen && *b.State != StateClosed {
		f.Add("Milestone", "state", apierr.CodeInvalid)
	}
	if b.DueOn.Set {
		if b.DueOn.Value == nil {
			c.ClearDueOn = true
		} else if t, err := time.Parse(time.RFC3339, *b.DueOn.Value); err != nil {
			f.Add("Milestone", "due_on", apierr.CodeInvalid)
		} else {
			t = t.UTC()
			c.DueOn = &t
		}
	}
	return c, f.Err()
}

// listMilestones answers GET .../milestones: state (open, closed, all),
// sort (due_on, completeness), direction (asc default), paged.
func (h *Handler) listMilestones(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	state, sort, dir := q.Get("state"), q.Get("sort"), q.Get("direction")
	if state == "" {
		state = StateOpen
	}
	if (state != StateOpen && state != StateClosed && state != "all") || (sort != "" && sort != "due_on" && sort != "completeness") ||
		(dir != "" && dir != "asc" && dir != "desc") {
		return apierr.Unprocessable("Validation Failed")
	}
	repo := repos.From(r.Context())
	list, err := h.Service.Milestones(r.Context(), repo, state, sort, dir, page.Limit()+1, page.Offset())
	if err != nil {
		return err
	}
	more := len(list) > page.Limit()
	if more {
		list = list[:page.Limit()]
	}
	u := h.urls(r)
	out := make([]milestoneJSON, 0, len(list))
	for _, m := range list {
		out = append(out, toMilestoneJSON(u, m))
	}
	httpapi.SetLinksMore(w, r, page, more)
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// getMilestone answers GET .../milestones/{milestone_number}.
func (h *Handler) getMilestone(w http.ResponseWriter, r *http.Request) error {
	n, err := milestoneNumber(r)
	if err != nil {
		return err
	}
	m, err := h.Service.Milestone(r.Context(), repos.From(r.Context()), n)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toMilestoneJSON(h.urls(r), m))
	return nil
}

// createMilestone answers POST .../milestones: 201.
func (h *Handler) createMilestone(w http.ResponseWriter, r *http.Request) error {
	var body milestoneRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	c, err := body.changes(true)
	if err != nil {
		return err
	}
	actor, err := h.actor(r)
	if err != nil {
		return err
	}
	m, err := h.Service.CreateMilestone(r.Context(), repos.From(r.Context()), actor, c)
	if err != nil {
		return err
	}
	j := toMilestoneJSON(h.urls(r), m)
	httpapi.WriteCreated(w, j.URL, j)
	return nil
}

// updateMilestone answers PATCH .../milestones/{milestone_number}.
func (h *Handler) updateMilestone(w http.ResponseWriter, r *http.Request) error {
	n, err := milestoneNumber(r)
	if err != nil {
		return err
	}
	var body milestoneRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	c, err := body.changes(false)
	if err != nil {
		return err
	}
	actor, err := h.actor(r)
	if err != nil {
		return err
	}
	m, err := h.Service.UpdateMilestone(r.Context(), repos.From(r.Context()), actor, n, c)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toMilestoneJSON(h.urls(r), m))
	return nil
}

// deleteMilestone answers DELETE .../milestones/{milestone_number}: 204.
func (h *Handler) deleteMilestone(w http.ResponseWriter, r *http.Request) error {
	n, err := milestoneNumber(r)
	if err != nil {
		return err
	}
	actor, err := h.actor(r)
	if err != nil {
		return err
	}
	if err := h.Service.DeleteMilestone(r.Context(), repos.From(r.Context()), actor, n); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

// listAssignees answers GET /repos/{owner}/{repo}/assignees: who may be
// assigned, by login, paged.
func (h *Handler) listAssignees(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	list, err := h.Service.Assignees(r.Context(), repos.From(r.Context()))
	if err != nil {
		return err
	}
	base := httpapi.BaseURL(r.Context())
	out := []accounts.SimpleUser{}
	for _, a := range httpapi.Slice(page, list) {
		out = append(out, accounts.ToSimpleUser(base, a))
	}
	httpapi.SetLinks(w, r, page, len(list))
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// checkAssignee answers GET .../assignees/{assignee} (and the issue's):
// 204 when the user may be assigned, 404 otherwise.
func (h *Handler) checkAssignee(w http.ResponseWriter, r *http.Request) error {
	repo := repos.From(r.Context())
	if r.PathValue("issue_number") != "" {
		n, err := issueNumber(r)
		if err != nil {
			return err
		}
		if _, err := h.Service.Get(r.Context(), repo, n); err != nil {
			return err
		}
	}
	ok, err := h.Service.IsAssignable(r.Context(), repo, r.PathValue("assignee"))
	if err != nil {
		return err
	}
	if !ok {
		return apierr.NotFound()
	}
	httpapi.NoContent(w)
	return nil
}

// addAssignees answers POST .../issues/{issue_number}/assignees: 201
// with the issue; logins that cannot be assigned are ignored.
func (h *Handler) addAssignees(w http.ResponseWriter, r *http.Request) error {
	return h.changeAssignees(w, r, false)
}

// removeAssignees answers DELETE .../issues/{issue_number}/assignees:
// 200 with the issue.
func (h *Handler) removeAssignees(w http.ResponseWriter, r *http.Request) error {
	return h.changeAssignees(w, r, true)
}

func (h *Handler) changeAssignees(w http.ResponseWriter, r *http.Request, remove bool) error {
	n, err := issueNumber(r)
	if err != nil {
		return err
	}
	var body struct {
		Assignees []string `json:"assignees"`
	}
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	if err := h.needTriage(r); err != nil {
		return err
	}
	actor, err := h.actor(r)
	if err != nil {
		return err
	}
	is, err := h.Service.AddAssignees(r.Context(), repos.From(r.Context()), actor, n, body.Assignees, remove)
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if remove {
		status = http.StatusOK
	}
	httpapi.WriteJSON(w, status, toIssueJSON(h.urls(r), is))
	return nil
}

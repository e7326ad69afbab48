package issues

import (
	"net/http"
	"strings"

	"forgeapi/internal/apierr"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
)

// labelRequest is the body of creating or updating a label.
type labelRequest struct {
	Name        *string `json:"name"`
	NewName     *string `json:"new_name"`
	Color       *string `json:"color"`
	Description *string `json:"description"`
}

// validate checks the body: a name (required on create), a color of six
// hex digits (normalized in place), lengths.
func (b *labelRequest) validate(create bool) error {
	var f apierr.Fields
	name := b.Name
	if !create {
		name = b.NewName
	}
	switch {
	case create && (name == nil || strings.TrimSpace(*name) == ""), !create && name != nil && strings.TrimSpace(*name) == "":
		f.Add("Label", "name", apierr.CodeMissingField)
	case name != nil:
		f.MaxLength("Label", "name", *name, MaxLabelName)
	}
	if b.Color != nil {
		c, ok := NormalizeColor(*b.Color)
		if !ok {
			f.Add("Label", "color", apierr.CodeInvalid)
		}
		b.Color = &c
	}
	if b.Description != nil {
		f.MaxLength("Label", "description", *b.Description, MaxLabelDescription)
	}
	return f.Err()
}

func (h *Handler) writeLabels(w http.ResponseWriter, r *http.Request, status int, list []*Label) {
	u := h.urls(r)
	out := make([]labelJSON, 0, len(list))
	for _, lb := range list {
		out = append(out, toLabelJSON(u, lb))
	}
	httpapi.WriteJSON(w, status, out)
}

// listLabels answers GET /repos/{owner}/{repo}/labels: by name, paged.
func (h *Handler) listLabels(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	list, err := h.Service.Labels(r.Context(), repos.From(r.Context()).ID, page.Limit()+1, page.Offset())
	if err != nil {
		return err
	}
	more := len(list) > page.Limit()
	if more {
		list = list[:page.Limit()]
	}
	httpapi.SetLinksMore(w, r, page, more)
	h.writeLabels(w, r, http.StatusOK, list)
	return nil
}

// listMilestoneLabels answers GET .../milestones/{milestone_number}/labels:
// the labels of the milestone's issues, by name, paged.
func (h *Handler) listMilestoneLabels(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	n, err := milestoneNumber(r)
	if err != nil {
		return err
	}
	m, err := h.Service.Milestone(r.Context(), repos.From(r.Context()), n)
	if err != nil {
		return err
	}
	list, err := h.Service.MilestoneLabels(r.Context(), m.ID, page.Limit()+1, page.Offset())
	if err != nil {
		return err
	}
	more := len(list) > page.Limit()
	if more {
		list = list[:page.Limit()]
	}
	httpapi.SetLinksMore(w, r, page, more)
	h.writeLabels(w, r, http.StatusOK, list)
	return nil
}

// getLabel answers GET .../labels/{name}.
func (h *Handler) getLabel(w http.ResponseWriter, r *http.Request) error {
	lb, err := h.Service.Label(r.Context(), repos.From(r.Context()).ID, r.PathValue("name"))
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toLabelJSON(h.urls(r), lb))
	return nil
}

// createLabel answers POST .../labels: 201; the color is required.
func (h *Handler) createLabel(w http.ResponseWriter, r *http.Request) error {
	var body labelRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	if err := body.validate(true); err != nil {
		return err
	}
	lb := Label{Name: *body.Name, Color: DefaultColor}
	if body.Color != nil {
		lb.Color = *body.Color
	}
	if body.Description != nil {
		lb.Description = *body.Description
	}
	actor, err := h.actor(r)
	if err != nil {
		return err
	}
	created, err := h.Service.CreateLabel(r.Context(), repos.From(r.Context()), actor, lb)
	if err != nil {
		return err
	}
	j := toLabelJSON(h.urls(r), created)
	httpapi.WriteCreated(w, j.URL, j)
	return nil
}

// updateLabel answers PATCH .../labels/{name}.
func (h *Handler) updateLabel(w http.ResponseWriter, r *http.Request) error {
	var body labelRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	if err := body.validate(false); err != nil {
		return err
	}
	actor, err := h.actor(r)
	if err != nil {
		return err
	}
	lb, err := h.Service.UpdateLabel(r.Context(), repos.From(r.Context()), actor, r.PathValue("name"), body.NewName, body.Color, body.Description)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toLabelJSON(h.urls(r), lb))
	return nil
}

// deleteLabel answers DELETE .../labels/{name}: 204.
func (h *Handler) deleteLabel(w http.ResponseWriter, r *http.Request) error {
	actor, err := h.actor(r)
	if err != nil {
		return err
	}
	if err := h.Service.DeleteLabel(r.Context(), repos.From(r.Context()), actor, r.PathValue("name")); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

// listIssueLabels answers GET .../issues/{issue_number}/labels.
func (h *Handler) listIssueLabels(w http.ResponseWriter, r *http.Request) error {
	n, err := issueNumber(r)
	if err != nil {
		return err
	}
	is, err := h.Service.Get(r.Context(), repos.From(r.Context()), n)
	if err != nil {
		return err
	}
	h.writeLabels(w, r, http.StatusOK, is.Labels)
	return nil
}

// labelsBody reads ["a", "b"], {"labels": ["a"]} or {"labels": [{"name": "a"}]}.
func labelsBody(r *http.Request) ([]string, error) {
	var raw rawLabels
	if err := httpapi.DecodeJSON(r, &raw); err != nil {
		return nil, err
	}
	for _, name := range raw {
		if strings.TrimSpace(name) == "" {
			return nil, apierr.Invalid("Label", "name", apierr.CodeInvalid)
		}
	}
	return raw, nil
}

// changeLabels runs one change of an issue's labels and answers with
// the issue's labels.
func (h *Handler) changeLabels(w http.ResponseWriter, r *http.Request, names []string, replace bool, remove string) error {
	n, err := issueNumber(r)
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
	list, err := h.Service.IssueLabels(r.Context(), repos.From(r.Context()), actor, n, names, replace, remove)
	if err != nil {
		return err
	}
	if replace && names == nil {
		httpapi.NoContent(w)
		return nil
	}
	h.writeLabels(w, r, http.StatusOK, list)
	return nil
}

// addIssueLabels answers POST .../issues/{issue_number}/labels.
func (h *Handler) addIssueLabels(w http.ResponseWriter, r *http.Request) error {
	names, err := labelsBody(r)
	if err != nil {
		return err
	}
	if names == nil {
		names = []string{}
	}
	return h.changeLabels(w, r, names, false, "")
}

// setIssueLabels answers PUT .../issues/{issue_number}/labels.
func (h *Handler) setIssueLabels(w http.ResponseWriter, r *http.Request) error {
	names, err := labelsBody(r)
	if err != nil {
		return err
	}
	if names == nil {
		names = []string{}
	}
	return h.changeLabels(w, r, names, true, "")
}

// removeIssueLabels answers DELETE .../issues/{issue_number}/labels: 204.
func (h *Handler) removeIssueLabels(w http.ResponseWriter, r *http.Request) error {
	return h.changeLabels(w, r, nil, true, "")
}

// removeIssueLabel answers DELETE .../issues/{issue_number}/labels/{name}
// with the labels left.
func (h *Handler) removeIssueLabel(w http.ResponseWriter, r *http.Request) error {
	return h.changeLabels(w, r, nil, false, r.PathValue("name"))
}

package settings

import (
	"net/http"

	"forgeapi/internal/apierr"
	"forgeapi/internal/httpapi"
)

// variableRequest is the body of POST .../variables and PATCH
// .../variables/{name}.
type variableRequest struct {
	Name       *string  `json:"name"`
	Value      *string  `json:"value"`
	Visibility *string  `json:"visibility"`
	Selected   *repoIDs `json:"selected_repository_ids"`
}

// listVariables answers GET .../variables: total_count and a page of
// variables by name.
func (h *Handler) listVariables(place placeFunc) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		page, err := httpapi.ParsePage(r)
		if err != nil {
			return err
		}
		p, org, err := place(r)
		if err != nil {
			return err
		}
		list, total, err := h.Service.Values(r.Context(), KindVariable, p, page.Limit(), page.Offset())
		if err != nil {
			return err
		}
		out := make([]variableJSON, 0, len(list))
		for _, v := range list {
			out = append(out, toVariableJSON(httpapi.BaseURL(r.Context()), org, v))
		}
		httpapi.SetLinks(w, r, page, total)
		httpapi.WriteJSON(w, http.StatusOK, map[string]any{"total_count": total, "variables": out})
		return nil
	}
}

// getVariable answers GET .../variables/{name}.
func (h *Handler) getVariable(place placeFunc) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		v, org, err := h.lookup(r, KindVariable, place, "name")
		if err != nil {
			return err
		}
		httpapi.WriteJSON(w, http.StatusOK, toVariableJSON(httpapi.BaseURL(r.Context()), org, v))
		return nil
	}
}

// createVariable answers POST .../variables: 201 with {}.
func (h *Handler) createVariable(place placeFunc) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var body variableRequest
		if err := httpapi.DecodeJSON(r, &body); err != nil {
			return err
		}
		var f apierr.Fields
		if body.Name == nil {
			f.Add("Variable", "name", apierr.CodeMissingField)
		}
		if body.Value == nil {
			f.Add("Variable", "value", apierr.CodeMissingField)
		}
		if err := f.Err(); err != nil {
			return err
		}
		p, c, err := h.variableChange(r, place, *body.Name, body)
		if err != nil {
			return err
		}
		c.Name = nil
		if err := h.Service.CreateVariable(r.Context(), p, *body.Name, c, nil); err != nil {
			return err
		}
		httpapi.WriteJSON(w, http.StatusCreated, struct{}{})
		return nil
	}
}

// updateVariable answers PATCH .../variables/{name}: 204.
func (h *Handler) updateVariable(place placeFunc) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var body variableRequest
		if err := httpapi.DecodeJSON(r, &body); err != nil {
			return err
		}
		name := r.PathValue("name")
		p, _, err := place(r)
		if err != nil {
			return err
		}
		if _, err := h.Service.Value(r.Context(), KindVariable, p, name); err != nil {
			return notFound(err)
		}
		p, c, err := h.variableChange(r, place, name, body)
		if err != nil {
			return err
		}
		if err := h.Service.UpdateVariable(r.Context(), p, name, c, nil); err != nil {
			return notFound(err)
		}
		httpapi.NoContent(w)
		return nil
	}
}

// variableChange validates a variable's body for the variable name of the
// route's place.
func (h *Handler) variableChange(r *http.Request, place placeFunc, name string, b variableRequest) (Place, Change, error) {
	p, _, err := place(r)
	if err != nil {
		return p, Change{}, err
	}
	if b.Name != nil {
		if err := checkName("Variable", *b.Name); err != nil {
			return p, Change{}, err
		}
	}
	var f apierr.Fields
	if b.Value != nil && len(*b.Value) > MaxValueBytes {
		f.Addf("Variable", "value", "value must be at most %d bytes", MaxValueBytes)
	}
	c := Change{Name: b.Name, Value: b.Value}
	if err := h.visibility(r, KindVariable, p, name, "Variable", b.Visibility, b.Selected, &c, &f); err != nil {
		return p, c, err
	}
	return p, c, f.Err()
}

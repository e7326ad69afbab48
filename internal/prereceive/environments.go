package prereceive

import (
	"errors"
	"net/http"
	"strings"

	"forgeapi/internal/apierr"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/store"
)

const envResource = "PreReceiveEnvironment"

// errDefaultEnvironment is the platform's refusal to change the default
// environment.
func errDefaultEnvironment() error {
	return apierr.Validation(apierr.FieldError{Resource: envResource, Code: apierr.CodeCustom,
		Message: "Cannot modify or delete the default environment"})
}

func (h *Handler) listEnvironments(w http.ResponseWriter, r *http.Request) error {
	page, order, err := parseListing(r)
	if err != nil {
		return err
	}
	list, err := Environments(r.Context(), h.Service.DB)
	if err != nil {
		return err
	}
	sortList(order, list, func(e *Environment) listKey { return listKey{e.ID, e.Name, e.CreatedAt, e.UpdatedAt} })
	base := httpapi.BaseURL(r.Context())
	out := []environmentJSON{}
	for _, e := range httpapi.Slice(page, list) {
		out = append(out, toEnvironmentJSON(base, e))
	}
	httpapi.SetLinks(w, r, page, len(list))
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h *Handler) pathEnvironment(r *http.Request) (*Environment, error) {
	id, err := httpapi.PathInt64(r, "pre_receive_environment_id")
	if err != nil {
		return nil, err
	}
	return EnvironmentByID(r.Context(), h.Service.DB, id)
}

func (h *Handler) getEnvironment(w http.ResponseWriter, r *http.Request) error {
	e, err := h.pathEnvironment(r)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toEnvironmentJSON(httpapi.BaseURL(r.Context()), e))
	return nil
}

// getDownload answers the latest download's state: none is ever made
// (see toDownloadJSON).
func (h *Handler) getDownload(w http.ResponseWriter, r *http.Request) error {
	e, err := h.pathEnvironment(r)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toDownloadJSON(httpapi.BaseURL(r.Context()), e))
	return nil
}

// environmentRequest is the body of the environment's POST and PATCH.
type environmentRequest struct {
	Name     *string `json:"name"`
	ImageURL *string `json:"image_url"`
}

// validate checks the body; creating needs both fields.
func (b *environmentRequest) validate(creating bool) error {
	var f apierr.Fields
	check := func(field string, v *string) {
		switch {
		case v == nil && creating, v != nil && strings.TrimSpace(*v) == "":
			f.Add(envResource, field, apierr.CodeMissingField)
		case v != nil:
			f.MaxLength(envResource, field, *v, 255)
		}
	}
	check("name", b.Name)
	check("image_url", b.ImageURL)
	return f.Err()
}

func nameTaken(resource string) error {
	return apierr.Validation(apierr.FieldError{Resource: resource, Field: "name", Code: apierr.CodeAlreadyExists})
}

// createEnvironment answers POST /admin/pre-receive-environments: 201; a
// name in use (any case) is a 422.
func (h *Handler) createEnvironment(w http.ResponseWriter, r *http.Request) error {
	var body environmentRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	if err := body.validate(true); err != nil {
		return err
	}
	ctx := r.Context()
	var id int64
	now := store.Now()
	err := h.Service.DB.QueryRowContext(ctx, `INSERT INTO pre_receive_environments (name, image_url, is_default, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $4) RETURNING id`, strings.TrimSpace(*body.Name), *body.ImageURL, false, now).Scan(&id)
	if err = store.Normalize(err); errors.Is(err, store.ErrConflict) {
		return nameTaken(envResource)
	} else if err != nil {
		return err
	}
	e, err := EnvironmentByID(ctx, h.Service.DB, id)
	if err != nil {
		return err
	}
	base := httpapi.BaseURL(ctx)
	httpapi.WriteCreated(w, envURL(base, id), toEnvironmentJSON(base, e))
	return nil
}

// updateEnvironment answers PATCH: the default environment is a 422.
func (h *Handler) updateEnvironment(w http.ResponseWriter, r *http.Request) error {
	e, err := h.pathEnvironment(r)
	if err != nil {
		return err
	}
	var body environmentRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	if e.Default {
		return errDefaultEnvironment()
	}
	if err := body.validate(false); err != nil {
		return err
	}
	name, image := e.Name, e.ImageURL
	if body.Name != nil {
		name = strings.TrimSpace(*body.Name)
	}
	if body.ImageURL != nil {
		image = *body.ImageURL
	}
	ctx := r.Context()
	_, err = h.Service.DB.ExecContext(ctx, `UPDATE pre_receive_environments SET name = $1, image_url = $2, updated_at = $3
		WHERE id = $4`, name, image, store.Now(), e.ID)
	if err = store.Normalize(err); errors.Is(err, store.ErrConflict) {
		return nameTaken(envResource)
	} else if err != nil {
		return err
	}
	if e, err = EnvironmentByID(ctx, h.Service.DB, e.ID); err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toEnvironmentJSON(httpapi.BaseURL(ctx), e))
	return nil
}

// deleteEnvironment answers DELETE: 204; the default environment and an
// environment hooks use are a 422.
func (h *Handler) deleteEnvironment(w http.ResponseWriter, r *http.Request) error {
	e, err := h.pathEnvironment(r)
	if err != nil {
		return err
	}
	if e.Default {
		return errDefaultEnvironment()
	}
	ctx := r.Context()
	res, err := h.Service.DB.ExecContext(ctx, `DELETE FROM pre_receive_environments WHERE id = $1 AND is_default = $2
		AND NOT EXISTS (SELECT 1 FROM pre_receive_hooks WHERE environment_id = $1)`, e.ID, false)
	n, err := store.Affected(res, store.Normalize(err))
	if errors.Is(err, store.ErrConflict) || err == nil && n == 0 {
		return apierr.Validation(apierr.FieldError{Resource: envResource, Code: apierr.CodeCustom,
			Message: "Cannot delete an environment that has hooks"})
	}
	if err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

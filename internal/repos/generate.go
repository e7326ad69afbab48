package repos

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/store"
)

// generateRequest is the body of POST /repos/{template_owner}/{template_repo}/generate.
type generateRequest struct {
	Owner              string  `json:"owner"`
	Name               *string `json:"name"`
	Description        string  `json:"description"`
	IncludeAllBranches bool    `json:"include_all_branches"`
	Private            bool    `json:"private"`
}

// generate answers POST /repos/{template_owner}/{template_repo}/generate:
// a new repository of the owner (the caller, or an organization the
// caller may create repositories in) with the template's files in a
// fresh commit (Service.Generate), 201 with its object, whose
// template_repository is the template. A repository that is not a
// template is a 422, as the platform answers.
func (h *Handler) generate(w http.ResponseWriter, r *http.Request) error {
	var body generateRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	ctx := r.Context()
	tmpl := From(ctx)
	if !tmpl.IsTemplate {
		return apierr.Custom(resource, "template_repository", "%s is not a template repository.", tmpl.FullName())
	}
	p := auth.PrincipalFrom(ctx)
	actor, err := accounts.ByID(ctx, h.Service.DB, p.UserID())
	if err != nil {
		return err
	}
	owner := actor
	if body.Owner != "" && !strings.EqualFold(body.Owner, actor.Login) {
		org, err := accounts.OrgByLogin(ctx, h.Service.DB, body.Owner)
		if err != nil {
			return apierr.Custom(resource, "owner", "%s is not an organization you can create repositories in.", body.Owner)
		}
		if err := h.checkCreatesIn(r, actor, org, resource, "owner"); err != nil {
			return err
		}
		owner = org
	}
	n := NewRepository{Owner: owner, Description: body.Description, Private: body.Private}
	if body.Name != nil {
		n.Name = *body.Name
	}
	if err := n.Validate(); err != nil {
		return err
	}
	if n.Private && p.ScopeBased() && !p.Token.Scopes.Grants("repo") {
		return apierr.Forbidden("Creating a private repository needs the repo scope.")
	}
	repo, err := h.Service.Generate(ctx, tmpl, n, body.IncludeAllBranches, actor)
	if err != nil {
		return err
	}
	w.Header().Set("Location", httpapi.BaseURL(ctx)+"/repos/"+repo.FullName())
	return h.write(w, r, http.StatusCreated, repo, auth.RoleAdmin)
}

// templateOf returns the template the repository was generated from as
// the caller may see it, nil when there is none, it is gone or hidden.
func (h *Handler) templateOf(ctx context.Context, repo *Repository) (*JSON, error) {
	if repo.TemplateID == 0 {
		return nil, nil
	}
	tmpl, err := ByID(ctx, h.Service.DB, repo.TemplateID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	role, err := h.roleOf(ctx, auth.PrincipalFrom(ctx), tmpl)
	if err != nil || role == auth.RoleNone {
		return nil, err
	}
	st, err := h.Service.Stats(ctx, tmpl.ID)
	if err != nil {
		return nil, err
	}
	j := ToJSON(URLsOf(ctx), tmpl, st, role)
	return &j, nil
}

// topicsJSON is the body of GET and PUT /repos/{owner}/{repo}/topics.
type topicsJSON struct {
	Names []string `json:"names"`
}

// topics answers GET /repos/{owner}/{repo}/topics.
func (h *Handler) topics(w http.ResponseWriter, r *http.Request) error {
	httpapi.WriteJSON(w, http.StatusOK, topicsJSON{Names: From(r.Context()).Topics})
	return nil
}

// replaceTopics answers PUT /repos/{owner}/{repo}/topics: the names
// replace the repository's topics (NormalizeTopics; [] clears them).
func (h *Handler) replaceTopics(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Names *[]string `json:"names"`
	}
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.Names == nil {
		return apierr.Simple(apierr.Invalid("Repository", "names", apierr.CodeMissingField))
	}
	names, err := NormalizeTopics(*body.Names)
	if err != nil {
		return apierr.Simple(err) // the platform's validation-error-simple
	}
	repo := From(r.Context())
	if err := CheckNotLocked(repo); err != nil {
		return err
	}
	if err := SetTopics(r.Context(), h.Service.DB, repo.ID, names); err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, topicsJSON{Names: names})
	return nil
}

// SetTopics replaces the repository's topics (already normalized:
// NormalizeTopics) and its updated_at.
func SetTopics(ctx context.Context, q store.Q, id int64, topics []string) error {
	_, err := q.ExecContext(ctx, `UPDATE repositories SET topics = $1, updated_at = $2 WHERE id = $3`,
		strings.Join(topics, " "), store.Now(), id)
	return store.Normalize(err)
}

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

// generate answers POST /repos/{template_owner}/{template_repo}/generate
// (GenerateRule): Service.GenerateFor, 201 with the new repository's
// object, whose template_repository is the template.
func (h *Handler) generate(w http.ResponseWriter, r *http.Request) error {
	var body generateRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	ctx := r.Context()
	g := Generation{Owner: body.Owner, Description: body.Description, IncludeAllBranches: body.IncludeAllBranches, Private: body.Private}
	if body.Name != nil {
		g.Name = *body.Name
	}
	repo, err := h.Service.GenerateFor(ctx, auth.PrincipalFrom(ctx), From(ctx), g)
	if err != nil {
		return err
	}
	w.Header().Set("Location", httpapi.BaseURL(ctx)+"/repos/"+repo.FullName())
	return h.write(w, r, http.StatusCreated, repo, auth.RoleAdmin)
}

// GenerateRule is the rule of POST
// /repos/{template_owner}/{template_repo}/generate, which GraphQL's
// cloneTemplateRepository applies too: read access to the template,
// repo or public_repo of a classic token, Administration write of a
// fine-grained one.
func GenerateRule() auth.Rule {
	return auth.Rule{Target: auth.TargetRepo, Role: auth.RoleRead, Scopes: []string{"repo", "public_repo"},
		Permissions: auth.Perm("administration:write"), TokenTypes: auth.UAT | auth.FPAT,
		Extra: "The new repository's owner is the caller or an organization the caller may create repositories in."}
}

// Generation is a repository asked of a template.
type Generation struct {
	Owner              string // the caller's login or an organization's; "" for the caller
	Name               string
	Description        string
	IncludeAllBranches bool
	Private            bool
}

// GenerateFor makes the repository g asks of the template tmpl for p,
// once GenerateRule passed on tmpl: the owner is p's user or an
// organization p may create repositories in, the template's files in a
// fresh commit (Service.Generate). A repository that is not a template,
// an owner p may not create in, or a name taken or invalid is a 422, as
// the platform answers; a private one needs the repo scope of a classic
// token (403).
func (s *Service) GenerateFor(ctx context.Context, p *auth.Principal, tmpl *Repository, g Generation) (*Repository, error) {
	if !tmpl.IsTemplate {
		return nil, apierr.Custom(resource, "template_repository", "%s is not a template repository.", tmpl.FullName())
	}
	actor, err := accounts.ByID(ctx, s.DB, p.UserID())
	if err != nil {
		return nil, err
	}
	owner := actor
	if g.Owner != "" && !strings.EqualFold(g.Owner, actor.Login) {
		org, err := accounts.OrgByLogin(ctx, s.DB, g.Owner)
		if err != nil {
			return nil, apierr.Custom(resource, "owner", "%s is not an organization you can create repositories in.", g.Owner)
		}
		if err := createsIn(ctx, s.DB, actor, org, resource, "owner"); err != nil {
			return nil, err
		}
		owner = org
	}
	n := NewRepository{Owner: owner, Name: g.Name, Description: g.Description, Private: g.Private}
	if err := n.Validate(); err != nil {
		return nil, err
	}
	if n.Private && p.ScopeBased() && !p.Token.Scopes.Grants("repo") {
		return nil, apierr.Forbidden("Creating a private repository needs the repo scope.")
	}
	return s.Generate(ctx, tmpl, n, g.IncludeAllBranches, actor)
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

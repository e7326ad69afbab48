// Package customprops serves organizations' custom properties of
// repositories: the definitions (a name, a value type among string,
// single_select, multi_select and true_false, allowed values, whether it
// is required and its default, who may set it) and each repository's
// values, validated as the platform validates them, with the
// custom_property and custom_property_values webhook events in the
// change's transaction.
package customprops

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"forgeapi/internal/access"
	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// Handler serves the custom properties endpoints.
type Handler struct {
	Service *Service
}

// Routes is the custom properties route table. Members of the
// organization read its definitions and the values of the repositories
// they can read (read:org; fine-grained: Custom properties organization
// read); its owners change definitions and set values on any of its
// repositories (admin:org; Custom properties organization write). A
// repository's values are read with the repository (Metadata read) and
// set by its admins (Custom properties repository write): organization
// owners any property, other admins those whose values_editable_by is
// org_and_repo_actors.
func (h *Handler) Routes() []httpapi.Route {
	read := auth.Rule{Target: auth.TargetOrg, Role: auth.RoleRead, Scopes: []string{"read:org"},
		Permissions: auth.Perm("organization_custom_properties:read"), TokenTypes: auth.AllTokenTypes}
	write := auth.Rule{Target: auth.TargetOrg, Role: auth.RoleAdmin, Scopes: []string{"admin:org"},
		Permissions: auth.Perm("organization_custom_properties:write"), TokenTypes: auth.AllTokenTypes}
	schema := "/orgs/{org}/properties/schema"
	return []httpapi.Route{
		{Method: "GET", Pattern: schema, Handle: h.listDefinitions, Auth: read},
		{Method: "PATCH", Pattern: schema, Handle: h.upsertDefinitions, Auth: write},
		{Method: "GET", Pattern: schema + "/{custom_property_name}", Handle: h.getDefinition, Auth: read},
		{Method: "PUT", Pattern: schema + "/{custom_property_name}", Handle: h.putDefinition, Auth: write},
		{Method: "DELETE", Pattern: schema + "/{custom_property_name}", Handle: h.deleteDefinition, Auth: write},
		{Method: "GET", Pattern: "/orgs/{org}/properties/values", Handle: h.listOrgValues, Auth: read},
		{Method: "PATCH", Pattern: "/orgs/{org}/properties/values", Handle: h.setOrgValues, Auth: write},
		{Method: "GET", Pattern: "/repos/{owner}/{repo}/properties/values", Handle: h.getRepoValues,
			Auth: auth.Rule{Target: auth.TargetRepo, Role: auth.RoleRead, Public: true,
				Permissions: auth.Perm("metadata:read"), TokenTypes: auth.AllTokenTypes}},
		{Method: "PATCH", Pattern: "/repos/{owner}/{repo}/properties/values", Handle: h.setRepoValues,
			Auth: auth.Rule{Target: auth.TargetRepo, Role: auth.RoleAdmin, Permissions: auth.Perm("custom_properties:write"),
				TokenTypes: auth.AllTokenTypes,
				Extra:      "Organization owners set any property; other repository admins those editable by repository actors."}},
	}
}

func (h *Handler) caller(r *http.Request) (*accounts.Account, error) {
	return accounts.ByID(r.Context(), h.Service.DB, auth.PrincipalFrom(r.Context()).UserID())
}

func (h *Handler) writeDefinitions(w http.ResponseWriter, r *http.Request, list []*Property) {
	org := accounts.OrgFrom(r.Context())
	base := httpapi.BaseURL(r.Context())
	out := make([]definitionJSON, 0, len(list))
	for _, p := range list {
		out = append(out, toDefinitionJSON(base, org, p))
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
}

// listDefinitions answers GET /orgs/{org}/properties/schema.
func (h *Handler) listDefinitions(w http.ResponseWriter, r *http.Request) error {
	list, err := Definitions(r.Context(), h.Service.DB, accounts.OrgFrom(r.Context()).ID)
	if err != nil {
		return err
	}
	h.writeDefinitions(w, r, list)
	return nil
}

// getDefinition answers GET /orgs/{org}/properties/schema/{name}.
func (h *Handler) getDefinition(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	org := accounts.OrgFrom(ctx)
	p, err := Definition(ctx, h.Service.DB, org.ID, r.PathValue("custom_property_name"))
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toDefinitionJSON(httpapi.BaseURL(ctx), org, p))
	return nil
}

// putDefinition answers PUT /orgs/{org}/properties/schema/{name}: the
// property created, or replaced by the body.
func (h *Handler) putDefinition(w http.ResponseWriter, r *http.Request) error {
	var body definitionRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	var f apierr.Fields
	p := body.property(r.PathValue("custom_property_name"), "", &f)
	if err := f.Err(); err != nil {
		return err
	}
	saved, err := h.upsert(r, []Property{p})
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toDefinitionJSON(httpapi.BaseURL(r.Context()), accounts.OrgFrom(r.Context()), saved[0]))
	return nil
}

// upsertDefinitions answers PATCH /orgs/{org}/properties/schema: 1 to 100
// properties created or replaced at once; the answer lists them.
func (h *Handler) upsertDefinitions(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Properties *[]definitionRequest `json:"properties"`
	}
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.Properties == nil {
		return apierr.Invalid(resource, "properties", apierr.CodeMissingField)
	}
	if n := len(*body.Properties); n == 0 || n > MaxDefinitions {
		return apierr.Invalid(resource, "properties", apierr.CodeInvalid)
	}
	var f apierr.Fields
	props := make([]Property, 0, len(*body.Properties))
	seen := map[string]bool{}
	for _, b := range *body.Properties {
		name := ""
		if b.PropertyName != nil {
			name = *b.PropertyName
		}
		if seen[strings.ToLower(name)] {
			f.Add(resource, "property_name", apierr.CodeAlreadyExists)
		}
		seen[strings.ToLower(name)] = true
		props = append(props, b.property(name, "", &f))
	}
	if err := f.Err(); err != nil {
		return err
	}
	saved, err := h.upsert(r, props)
	if err != nil {
		return err
	}
	h.writeDefinitions(w, r, saved)
	return nil
}

func (h *Handler) upsert(r *http.Request, props []Property) ([]*Property, error) {
	actor, err := h.caller(r)
	if err != nil {
		return nil, err
	}
	return h.Service.Upsert(r.Context(), accounts.OrgFrom(r.Context()), actor, props)
}

// deleteDefinition answers DELETE /orgs/{org}/properties/schema/{name}.
func (h *Handler) deleteDefinition(w http.ResponseWriter, r *http.Request) error {
	actor, err := h.caller(r)
	if err != nil {
		return err
	}
	if err := h.Service.Delete(r.Context(), accounts.OrgFrom(r.Context()), actor, r.PathValue("custom_property_name")); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

// getRepoValues answers GET /repos/{owner}/{repo}/properties/values.
func (h *Handler) getRepoValues(w http.ResponseWriter, r *http.Request) error {
	list, err := RepoValues(r.Context(), h.Service.DB, repos.From(r.Context()))
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, list)
	return nil
}

// valueRequest is one property's value in a values write.
type valueRequest struct {
	PropertyName *string         `json:"property_name"`
	Value        json.RawMessage `json:"value"`
}

// inputs validates the values of a write: each needs property_name and
// a value (null unsets it) that is a string or a list of strings.
func inputs(list []valueRequest) ([]ValueInput, error) {
	var f apierr.Fields
	out := make([]ValueInput, 0, len(list))
	for _, v := range list {
		if v.PropertyName == nil || *v.PropertyName == "" {
			f.Add(valueResource, "property_name", apierr.CodeMissingField)
			continue
		}
		if v.Value == nil {
			f.Add(valueResource, "value", apierr.CodeMissingField)
			continue
		}
		val, ok := parseValue(v.Value)
		if !ok {
			f.Add(valueResource, "value", apierr.CodeInvalid)
			continue
		}
		if val != nil && val.Multi && len(val.Items) == 0 {
			val = nil // an empty list unsets a multi_select
		}
		out = append(out, ValueInput{Name: *v.PropertyName, Value: val})
	}
	return out, f.Err()
}

// setRepoValues answers PATCH /repos/{owner}/{repo}/properties/values
// (204).
func (h *Handler) setRepoValues(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Properties *[]valueRequest `json:"properties"`
	}
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.Properties == nil {
		return apierr.Invalid(valueResource, "properties", apierr.CodeMissingField)
	}
	in, err := inputs(*body.Properties)
	if err != nil {
		return err
	}
	ctx := r.Context()
	repo := repos.From(ctx)
	if !repo.Owner.IsOrg() {
		return apierr.Unprocessable("Custom properties are only available for repositories of organizations.")
	}
	orgRole, err := access.OrgRole(ctx, h.Service.DB, auth.PrincipalFrom(ctx), repo.Owner)
	if err != nil {
		return err
	}
	actor, err := h.caller(r)
	if err != nil {
		return err
	}
	if err := h.Service.SetValues(ctx, repo.Owner, []*repos.Repository{repo}, actor, in, orgRole < auth.RoleAdmin); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

// setOrgValues answers PATCH /orgs/{org}/properties/values: the values
// set on 1 to 30 repositories of the organization (204).
func (h *Handler) setOrgValues(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		RepositoryNames *[]string       `json:"repository_names"`
		Properties      *[]valueRequest `json:"properties"`
	}
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	var f apierr.Fields
	if body.RepositoryNames == nil {
		f.Add(valueResource, "repository_names", apierr.CodeMissingField)
	} else if n := len(*body.RepositoryNames); n == 0 || n > MaxBulkRepos {
		f.Add(valueResource, "repository_names", apierr.CodeInvalid)
	}
	if body.Properties == nil {
		f.Add(valueResource, "properties", apierr.CodeMissingField)
	}
	if err := f.Err(); err != nil {
		return err
	}
	in, err := inputs(*body.Properties)
	if err != nil {
		return err
	}
	ctx := r.Context()
	org := accounts.OrgFrom(ctx)
	var targets []*repos.Repository
	for _, name := range *body.RepositoryNames {
		repo, err := repos.ByOwnerAndName(ctx, h.Service.DB, org.Login, name)
		if errors.Is(err, store.ErrNotFound) {
			return apierr.Custom(valueResource, "repository_names", "Repository '%s' was not found in the organization", name)
		}
		if err != nil {
			return err
		}
		targets = append(targets, repo)
	}
	actor, err := h.caller(r)
	if err != nil {
		return err
	}
	if err := h.Service.SetValues(ctx, org, targets, actor, in, false); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

package settings

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// MaxValueBytes is the largest secret or variable value, as on the
// platform (48 KB).
const MaxValueBytes = 48 * 1024

// MaxNameLength is the longest secret or variable name.
const MaxNameLength = 255

// validName is the platform's rule for secret and variable names:
// letters, digits and underscores, not starting with a digit.
var validName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// checkName refuses a name the platform refuses, for the resource.
func checkName(resource, name string) error {
	switch {
	case name == "" || len(name) > MaxNameLength || !validName.MatchString(name):
		return apierr.Validation(apierr.FieldError{Resource: resource, Field: "name", Code: apierr.CodeInvalid,
			Message: "Names can only contain alphanumeric characters ([a-z], [A-Z], [0-9]) or underscores (_), " +
				"must not start with a number, and may be at most 255 characters long"})
	case strings.HasPrefix(strings.ToUpper(name), "GITHUB_"):
		return apierr.Validation(apierr.FieldError{Resource: resource, Field: "name", Code: apierr.CodeInvalid,
			Message: "Names must not start with the GITHUB_ prefix"})
	}
	return nil
}

// placeFunc resolves the place a route names; org is the organization's
// login for organization places.
type placeFunc func(r *http.Request) (p Place, org string, err error)

// orgIDOf is the repository's organization's id, 0 for a user's.
func orgIDOf(repo *repos.Repository) int64 {
	if repo.Owner.IsOrg() {
		return repo.Owner.ID
	}
	return 0
}

// repoPlaceOf is the route's repository.
func repoPlaceOf(r *http.Request) (Place, string, error) {
	repo := repos.From(r.Context())
	return RepoPlace(repo.ID, orgIDOf(repo)), "", nil
}

// orgPlaceOf is the route's organization.
func orgPlaceOf(r *http.Request) (Place, string, error) {
	org := accounts.OrgFrom(r.Context())
	return OrgPlace(org.ID), org.Login, nil
}

// envPlaceOf is the route's {environment_name} of its repository: a 404
// when the repository has no such environment.
func (h *Handler) envPlaceOf(r *http.Request) (Place, string, error) {
	repo := repos.From(r.Context())
	id, ok, err := h.Environment(r.Context(), repo.ID, r.PathValue("environment_name"))
	if err != nil {
		return Place{}, "", err
	}
	if !ok {
		return Place{}, "", apierr.NotFound()
	}
	return EnvPlace(id, repo.ID, orgIDOf(repo)), "", nil
}

// notFound turns store.ErrNotFound into the platform's 404.
func notFound(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return apierr.NotFound()
	}
	return err
}

// lookup resolves the route's place and its value of the kind named by
// the path parameter param.
func (h *Handler) lookup(r *http.Request, kind string, place placeFunc, param string) (*Value, string, error) {
	p, org, err := place(r)
	if err != nil {
		return nil, "", err
	}
	v, err := h.Service.Value(r.Context(), kind, p, r.PathValue(param))
	return v, org, notFound(err)
}

// listSecrets answers GET .../secrets: total_count and a page of secrets
// by name.
func (h *Handler) listSecrets(kind string, place placeFunc) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		page, err := httpapi.ParsePage(r)
		if err != nil {
			return err
		}
		p, org, err := place(r)
		if err != nil {
			return err
		}
		list, total, err := h.Service.Values(r.Context(), kind, p, page.Limit(), page.Offset())
		if err != nil {
			return err
		}
		out := make([]secretJSON, 0, len(list))
		for _, v := range list {
			out = append(out, toSecretJSON(httpapi.BaseURL(r.Context()), org, v))
		}
		httpapi.SetLinks(w, r, page, total)
		httpapi.WriteJSON(w, http.StatusOK, map[string]any{"total_count": total, "secrets": out})
		return nil
	}
}

// publicKey answers GET .../secrets/public-key.
func (h *Handler) publicKey(place placeFunc) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		p, _, err := place(r)
		if err != nil {
			return err
		}
		k, err := h.Service.PublicKey(r.Context(), p)
		if err != nil {
			return err
		}
		httpapi.WriteJSON(w, http.StatusOK, publicKeyJSON{KeyID: k.KeyID, Key: k.Key})
		return nil
	}
}

// getSecret answers GET .../secrets/{secret_name}: the secret without its
// value.
func (h *Handler) getSecret(kind string, place placeFunc) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		v, org, err := h.lookup(r, kind, place, "secret_name")
		if err != nil {
			return err
		}
		httpapi.WriteJSON(w, http.StatusOK, toSecretJSON(httpapi.BaseURL(r.Context()), org, v))
		return nil
	}
}

// repoIDs are selected_repository_ids: numbers, or (as Dependabot's
// description allows) numeric strings.
type repoIDs []int64

// UnmarshalJSON implements json.Unmarshaler.
func (ids *repoIDs) UnmarshalJSON(b []byte) error {
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	out := repoIDs{}
	for _, item := range raw {
		var s string
		if json.Unmarshal(item, &s) != nil {
			s = string(item)
		}
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return &json.UnmarshalTypeError{Value: string(item), Field: "selected_repository_ids"}
		}
		out = append(out, id)
	}
	*ids = out
	return nil
}

// secretRequest is the body of PUT .../secrets/{secret_name}.
type secretRequest struct {
	EncryptedValue *string  `json:"encrypted_value"`
	KeyID          *string  `json:"key_id"`
	Visibility     *string  `json:"visibility"`
	Selected       *repoIDs `json:"selected_repository_ids"`
}

// putSecret answers PUT .../secrets/{secret_name}: 201 with {} when it
// creates the secret, 204 when it replaces it.
func (h *Handler) putSecret(kind string, place placeFunc) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var body secretRequest
		if err := httpapi.DecodeJSON(r, &body); err != nil {
			return err
		}
		name := r.PathValue("secret_name")
		if err := checkName("Secret", name); err != nil {
			return err
		}
		p, _, err := place(r)
		if err != nil {
			return err
		}
		c, err := h.secretChange(r, kind, p, name, body)
		if err != nil {
			return err
		}
		created, err := h.Service.PutSecret(r.Context(), kind, p, name, c, nil)
		if err != nil {
			return err
		}
		if created {
			httpapi.WriteJSON(w, http.StatusCreated, struct{}{})
			return nil
		}
		httpapi.NoContent(w)
		return nil
	}
}

// secretChange validates a secret's body into a Change.
func (h *Handler) secretChange(r *http.Request, kind string, p Place, name string, b secretRequest) (Change, error) {
	var f apierr.Fields
	if b.EncryptedValue == nil {
		f.Add("Secret", "encrypted_value", apierr.CodeMissingField)
	} else if raw, err := base64.StdEncoding.DecodeString(*b.EncryptedValue); err != nil || *b.EncryptedValue == "" {
		f.Add("Secret", "encrypted_value", apierr.CodeInvalid)
	} else if len(raw) > MaxValueBytes+48 {
		f.Addf("Secret", "encrypted_value", "encrypted_value must be at most %d bytes once decrypted", MaxValueBytes)
	}
	if b.KeyID == nil {
		f.Add("Secret", "key_id", apierr.CodeMissingField)
	}
	c := Change{Value: b.EncryptedValue, KeyID: b.KeyID}
	if err := h.visibility(r, kind, p, name, "Secret", b.Visibility, b.Selected, &c, &f); err != nil {
		return c, err
	}
	return c, f.Err()
}

// visibility validates an organization value's visibility and selected
// repositories into c (a new value needs a visibility); other places take
// neither.
func (h *Handler) visibility(r *http.Request, kind string, p Place, name, resource string, vis *string, sel *repoIDs, c *Change, f *apierr.Fields) error {
	if p.Scope != ScopeOrg {
		return nil
	}
	current := ""
	if v, err := h.Service.Value(r.Context(), kind, p, name); err == nil {
		current = v.Visibility
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	switch {
	case vis == nil && current == "":
		f.Add(resource, "visibility", apierr.CodeMissingField)
		return nil
	case vis == nil:
		vis = &current
	case *vis != VisibilityAll && *vis != VisibilityPrivate && *vis != VisibilitySelected:
		f.Addf(resource, "visibility", "visibility must be one of all, private or selected")
		return nil
	}
	c.Visibility = vis
	if sel == nil {
		return nil
	}
	if *vis != VisibilitySelected {
		f.Addf(resource, "selected_repository_ids", "selected_repository_ids can only be given when visibility is selected")
		return nil
	}
	missing, err := h.Service.notOrgRepositories(r.Context(), p.ID, *sel)
	if err != nil {
		return err
	}
	for _, id := range missing {
		f.Addf(resource, "selected_repository_ids", "Repository %d is not a repository of the organization", id)
	}
	ids := []int64(*sel)
	c.Selected = &ids
	return nil
}

// deleteValue answers DELETE of a secret or variable: 204, 404 when there
// is none.
func (h *Handler) deleteValue(kind string, place placeFunc, param string) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		p, _, err := place(r)
		if err != nil {
			return err
		}
		if err := notFound(h.Service.Delete(r.Context(), kind, p, r.PathValue(param), nil)); err != nil {
			return err
		}
		httpapi.NoContent(w)
		return nil
	}
}

// listRepoOrgValues answers GET .../actions/organization-secrets and
// .../organization-variables: the organization's values the repository
// sees, paged.
func (h *Handler) listRepoOrgValues(kind string) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		page, err := httpapi.ParsePage(r)
		if err != nil {
			return err
		}
		repo := repos.From(r.Context())
		list := []*Value{}
		if repo.Owner.IsOrg() {
			if list, err = h.Service.OrgValuesFor(r.Context(), kind, repo.Owner.ID, repo.ID, repo.Private); err != nil {
				return err
			}
		}
		total := len(list)
		list = httpapi.Slice(page, list)
		httpapi.SetLinks(w, r, page, total)
		base := httpapi.BaseURL(r.Context())
		if kind == KindVariable {
			out := make([]variableJSON, 0, len(list))
			for _, v := range list {
				v.Place.Scope = ScopeRepo // the repository's view: no visibility
				out = append(out, toVariableJSON(base, "", v))
			}
			httpapi.WriteJSON(w, http.StatusOK, map[string]any{"total_count": total, "variables": out})
			return nil
		}
		out := make([]secretJSON, 0, len(list))
		for _, v := range list {
			v.Place.Scope = ScopeRepo
			out = append(out, toSecretJSON(base, "", v))
		}
		httpapi.WriteJSON(w, http.StatusOK, map[string]any{"total_count": total, "secrets": out})
		return nil
	}
}

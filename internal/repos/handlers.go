package repos

import (
	"errors"
	"net/http"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/store"
)

// Handler serves the repository endpoints.
type Handler struct {
	Service *Service
	// RoleOf decides which repositories the list endpoints show
	// (access.RepoRole); nil shows public repositories only.
	RoleOf RoleFunc
	// Templates serves the .gitignore templates and license texts of a
	// creation's gitignore_template and license_template (reference.Templates);
	// nil refuses them as unknown.
	Templates Templates
	// CloneToken, when set, mints the temp_clone_token of a private
	// repository for its admin (auth.CloneTokens.Mint); nil shows "".
	CloneToken func(repoID, userID int64) string
}

// Templates are the texts a new repository's initial commit takes.
type Templates interface {
	// Gitignore returns the .gitignore template of the name (any case).
	Gitignore(name string) (source string, ok bool, err error)
	// License returns the text of the license of the key (any case),
	// with its [year] and [fullname] placeholders.
	License(key string) (text string, ok bool, err error)
}

func (h *Handler) get(w http.ResponseWriter, r *http.Request) error {
	role := auth.RoleFrom(r.Context())
	p := auth.PrincipalFrom(r.Context())
	if p.Anonymous() {
		role = auth.RoleNone // anonymous callers get no permissions object
	}
	repo := From(r.Context())
	return h.writeWith(w, r, http.StatusOK, repo, role, func(j *JSON) { j.TempCloneToken = h.tempCloneToken(p, repo, role) })
}

// tempCloneToken is the temp_clone_token that GET shows a caller with
// push access, as the platform does: "" for a public repository, a clone
// token for a private one's admins (a clone token clones for an admin
// only: see auth.CloneTokens), "" for its other writers; nil (left out)
// for the others.
func (h *Handler) tempCloneToken(p *auth.Principal, repo *Repository, role auth.Role) *string {
	if role < auth.RoleWrite || p.Anonymous() {
		return nil
	}
	token := ""
	if repo.Private && role >= auth.RoleAdmin && h.CloneToken != nil && p.UserID() != 0 {
		token = h.CloneToken(repo.ID, p.UserID())
	}
	return &token
}

func (h *Handler) write(w http.ResponseWriter, r *http.Request, status int, repo *Repository, role auth.Role) error {
	return h.writeWith(w, r, status, repo, role, nil)
}

// writeWith is write with more set on the object by with (when not nil).
func (h *Handler) writeWith(w http.ResponseWriter, r *http.Request, status int, repo *Repository, role auth.Role, with func(*JSON)) error {
	st, err := h.Service.Stats(r.Context(), repo.ID)
	if err != nil {
		return err
	}
	httpapi.SetLastModified(w, repo.UpdatedAt)
	j := ToJSON(URLsOf(r.Context()), repo, st, role)
	if with != nil {
		with(&j)
	}
	if repo.ForkOfID != 0 {
		if j.Parent, j.Source, err = h.network(r, repo); err != nil {
			return err
		}
	}
	if j.TemplateRepository, err = h.templateOf(r.Context(), repo); err != nil {
		return err
	}
	httpapi.WriteJSON(w, status, &j) // a pointer: *JSON renders itself (AppendJSON)
	return nil
}

// maxNetworkDepth bounds the walk from a fork up to the root of its
// network: the source of the JSON, and the root whose forks StatsOf
// counts as network_count.
const maxNetworkDepth = 100

// network returns the parent of a fork and the root of its network, as
// the caller may see them (nil when hidden or gone).
func (h *Handler) network(r *http.Request, fork *Repository) (parent, source *JSON, err error) {
	ctx := r.Context()
	p := auth.PrincipalFrom(ctx)
	render := func(repo *Repository) (*JSON, error) {
		role, err := h.roleOf(ctx, p, repo)
		if err != nil || role == auth.RoleNone {
			return nil, err
		}
		st, err := h.Service.Stats(ctx, repo.ID)
		if err != nil {
			return nil, err
		}
		j := ToJSON(URLsOf(ctx), repo, st, role)
		return &j, nil
	}
	up, err := ByID(ctx, h.Service.DB, fork.ForkOfID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if parent, err = render(up); err != nil {
		return nil, nil, err
	}
	for depth := 0; up.ForkOfID != 0 && depth < maxNetworkDepth; depth++ {
		next, err := ByID(ctx, h.Service.DB, up.ForkOfID)
		if errors.Is(err, store.ErrNotFound) {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		up = next
	}
	source, err = render(up)
	return parent, source, err
}

// createRequest is the body of POST /user/repos and /orgs/{org}/repos.
type createRequest struct {
	Name              *string `json:"name"`
	Description       string  `json:"description"`
	Private           *bool   `json:"private"`
	Visibility        string  `json:"visibility"`
	DefaultBranch     string  `json:"default_branch"`
	AutoInit          bool    `json:"auto_init"`
	GitignoreTemplate string  `json:"gitignore_template"`
	LicenseTemplate   string  `json:"license_template"`
	IsTemplate        bool    `json:"is_template"`
	SettingsChanges
}

func (c createRequest) toNew(owner *accounts.Account) (NewRepository, error) {
	n := NewRepository{Owner: owner, Description: c.Description, DefaultBranch: c.DefaultBranch,
		IsTemplate: c.IsTemplate, Settings: &c.SettingsChanges}
	if c.Name != nil {
		n.Name = *c.Name
	}
	if c.Private != nil {
		n.Private = *c.Private
	}
	switch c.Visibility {
	case "":
	case "private", "internal":
		n.Private = true
	case "public":
		n.Private = false
	default:
		return n, apierr.Invalid("Repository", "visibility", apierr.CodeInvalid)
	}
	return n, n.Validate()
}

func (h *Handler) createForUser(w http.ResponseWriter, r *http.Request) error {
	// The guard refuses a token whose resource owner is another account
	// (an organization): the user's account is outside its reach.
	owner, err := h.Service.Accounts.ByID(r.Context(), h.Service.DB, auth.PrincipalFrom(r.Context()).Account.ID)
	if err != nil {
		return err
	}
	return h.create(w, r, owner, owner)
}

// createForOrg answers POST /orgs/{org}/repos. Members who are not
// owners create repositories only where the organization lets them
// (members_can_create_repositories).
func (h *Handler) createForOrg(w http.ResponseWriter, r *http.Request) error {
	org := accounts.OrgFrom(r.Context())
	p := auth.PrincipalFrom(r.Context())
	if err := CreateRefusal(p, org, auth.RoleFrom(r.Context()), false); err != nil {
		return err // before reading the body, as the platform refuses
	}
	actor, err := h.Service.Accounts.ByID(r.Context(), h.Service.DB, p.Account.ID)
	if err != nil {
		return err
	}
	return h.create(w, r, org, actor)
}

// CreateRefusal is the 403 of a creation that passed the route's rule
// (CreateForUserRule, CreateForOrgRule) and still may not be made: a
// private repository by a classic or OAuth token without repo, or an
// organization's repository by a member who is not an owner (role
// below admin) where the organization does not let members create
// repositories. nil when the creation may be made.
func CreateRefusal(p *auth.Principal, owner *accounts.Account, role auth.Role, private bool) error {
	if owner.IsOrg() && role < auth.RoleAdmin && !owner.MembersCanCreateRepos {
		return apierr.Forbidden("Only owners of %s can create repositories in it.", owner.Login)
	}
	if private && p.ScopeBased() && !p.Token.Scopes.Grants("repo") {
		return apierr.Forbidden("Creating a private repository needs the repo scope.")
	}
	return nil
}

func (h *Handler) create(w http.ResponseWriter, r *http.Request, owner, actor *accounts.Account) error {
	var body createRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	n, err := body.toNew(owner)
	if err != nil {
		return err
	}
	if err := CreateRefusal(auth.PrincipalFrom(r.Context()), owner, auth.RoleFrom(r.Context()), n.Private); err != nil {
		return err
	}
	if n.Files, err = h.initialFiles(body, n); err != nil {
		return err
	}
	repo, err := h.Service.Create(r.Context(), n, actor)
	if err != nil {
		return err
	}
	w.Header().Set("Location", httpapi.BaseURL(r.Context())+"/repos/"+repo.FullName())
	return h.write(w, r, http.StatusCreated, repo, auth.RoleAdmin)
}

// updateRequest is the body of PATCH /repos/{owner}/{repo}. Fields the
// platform has and forgeapi does not keep are ignored.
type updateRequest struct {
	Name          *string `json:"name"`
	Description   *string `json:"description"`
	Private       *bool   `json:"private"`
	Visibility    *string `json:"visibility"`
	DefaultBranch *string `json:"default_branch"`
	IsTemplate    *bool   `json:"is_template"`
	Archived      *bool   `json:"archived"`
	SettingsChanges
}

func (u updateRequest) toChanges() (Changes, error) {
	c := Changes{Name: u.Name, Description: u.Description, Private: u.Private, DefaultBranch: u.DefaultBranch,
		IsTemplate: u.IsTemplate, Archived: u.Archived, Settings: &u.SettingsChanges}
	if u.Visibility != nil {
		var private bool
		switch *u.Visibility {
		case "private", "internal":
			private = true
		case "public":
		default:
			return c, apierr.Invalid("Repository", "visibility", apierr.CodeInvalid)
		}
		if c.Private != nil && *c.Private != private {
			return c, apierr.Custom("Repository", "visibility", "visibility %q contradicts private %v", *u.Visibility, *c.Private)
		}
		c.Private = &private
	}
	return c, c.Validate()
}

// update serves PATCH /repos/{owner}/{repo} (admins only).
func (h *Handler) update(w http.ResponseWriter, r *http.Request) error {
	var body updateRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	changes, err := body.toChanges()
	if err != nil {
		return err
	}
	p := auth.PrincipalFrom(r.Context())
	if changes.Private != nil && *changes.Private && p.ScopeBased() && !p.Token.Scopes.Grants("repo") {
		return apierr.Forbidden("Making a repository private needs the repo scope.")
	}
	actor, err := h.Service.Accounts.ByID(r.Context(), h.Service.DB, p.Account.ID)
	if err != nil {
		return err
	}
	repo, err := h.Service.Update(r.Context(), From(r.Context()), changes, actor)
	if err != nil {
		return err
	}
	return h.write(w, r, http.StatusOK, repo, auth.RoleAdmin)
}

// delete answers DELETE /repos/{owner}/{repo} (admins; classic and OAuth
// tokens need delete_repo): 204, the git data, hooks and deliveries go,
// the feeds keep the repository's events, the organization's hooks get
// repository deleted. A repository locked for a migration is refused.
func (h *Handler) delete(w http.ResponseWriter, r *http.Request) error {
	actor, err := h.Service.Accounts.ByID(r.Context(), h.Service.DB, auth.PrincipalFrom(r.Context()).UserID())
	if err != nil {
		return err
	}
	if err := h.Service.Delete(r.Context(), From(r.Context()), actor); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

// initialFiles are the files of the initial commit the creation asks for
// (TemplateFiles); an unknown gitignore_template or license_template is a
// 422, as the platform answers.
func (h *Handler) initialFiles(body createRequest, n NewRepository) ([]File, error) {
	var gitignore, license string
	if body.GitignoreTemplate != "" {
		ok := false
		if h.Templates != nil {
			var err error
			if gitignore, ok, err = h.Templates.Gitignore(body.GitignoreTemplate); err != nil {
				return nil, err
			}
		}
		if !ok {
			return nil, apierr.Custom(resource, "gitignore_template", "gitignore_template is an unknown gitignore template.")
		}
	}
	if body.LicenseTemplate != "" {
		ok := false
		if h.Templates != nil {
			var err error
			if license, ok, err = h.Templates.License(body.LicenseTemplate); err != nil {
				return nil, err
			}
		}
		if !ok {
			return nil, apierr.Custom(resource, "license_template", "license_template is an unknown license.")
		}
	}
	return TemplateFiles(n, body.AutoInit, gitignore, license, time.Now()), nil
}

package statuses

import (
	"errors"
	"net/http"
	"net/url"
	"regexp"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/repos/gitjson"
	"forgeapi/internal/wire"
)

// Handler serves the commit statuses endpoints.
type Handler struct {
	Service *Service
	Repos   *repos.Service
}

// Routes is the commit statuses route table: posting needs push access
// (classic and OAuth tokens: repo:status or repo; fine-grained: Commit
// statuses write), reading read access (Commit statuses read; public
// repositories anonymously).
func (h *Handler) Routes() []httpapi.Route {
	read := auth.Rule{Target: auth.TargetRepo, Role: auth.RoleRead, Public: true,
		Permissions: auth.Perm("statuses:read"), TokenTypes: auth.AllTokenTypes}
	return []httpapi.Route{
		{Method: "POST", Pattern: "/repos/{owner}/{repo}/statuses/{sha}", Handle: h.create,
			Auth: auth.Rule{Target: auth.TargetRepo, Role: auth.RoleWrite, Scopes: []string{"repo:status"},
				Permissions: auth.Perm("statuses:write"), TokenTypes: auth.AllTokenTypes}},
		{Method: "GET", Pattern: "/repos/{owner}/{repo}/commits/{ref}/statuses", Handle: h.list, Auth: read},
		{Method: "GET", Pattern: "/repos/{owner}/{repo}/commits/{ref}/status", Handle: h.combined, Auth: read},
	}
}

// createRequest is the body of POST .../statuses/{sha}.
type createRequest struct {
	State       *string `json:"state"`
	TargetURL   *string `json:"target_url"`
	Description *string `json:"description"`
	Context     *string `json:"context"`
}

var fullSHA = regexp.MustCompile(`^[0-9a-f]{40}$`)

// validate checks the body and returns the status it asks for.
func (b createRequest) validate() (Status, error) {
	var f apierr.Fields
	st := Status{Context: "default"}
	switch {
	case b.State == nil:
		f.Add("Status", "state", apierr.CodeMissingField)
	case *b.State != StateError && *b.State != StateFailure && *b.State != StatePending && *b.State != StateSuccess:
		f.Add("Status", "state", apierr.CodeInvalid)
	default:
		st.State = *b.State
	}
	if b.Context != nil && *b.Context != "" {
		st.Context = *b.Context
		f.MaxLength("Status", "context", st.Context, MaxContextLength)
	}
	if b.Description != nil {
		st.Description = *b.Description
		f.MaxLength("Status", "description", st.Description, MaxDescriptionLen)
	}
	if b.TargetURL != nil && *b.TargetURL != "" {
		st.TargetURL = *b.TargetURL
		if f.MaxLength("Status", "target_url", st.TargetURL, MaxTargetURLLength) {
			if u, err := url.Parse(st.TargetURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				f.Add("Status", "target_url", apierr.CodeInvalid)
			}
		}
	}
	return st, f.Err()
}

// create answers POST /repos/{owner}/{repo}/statuses/{sha}: 201 with the
// status and its Location. The SHA must be a commit of the repository
// (422 otherwise, as the platform).
func (h *Handler) create(w http.ResponseWriter, r *http.Request) error {
	var body createRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	st, err := body.validate()
	if err != nil {
		return err
	}
	repo := repos.From(r.Context())
	g, err := gitread.Open(h.Repos.GitDir(repo.ID))
	if err != nil {
		return err
	}
	defer g.Close()
	sha := r.PathValue("sha")
	commit, err := g.CommitMeta(sha)
	if err != nil || !fullSHA.MatchString(sha) || commit.SHA != sha {
		return apierr.Custom("Status", "sha", "No commit found for SHA: %s", sha)
	}
	st.SHA = sha
	actor, err := accounts.ByID(r.Context(), h.Service.DB, auth.PrincipalFrom(r.Context()).UserID())
	if err != nil {
		return err
	}
	base := httpapi.BaseURL(r.Context())
	commitJSON, err := gitjson.CommitOf(r.Context(), h.Service.DB, base, repo, commit)
	if err != nil {
		return err
	}
	branches, err := g.BranchesAt(sha)
	if err != nil {
		return err
	}
	created, err := h.Service.Create(r.Context(), repo, actor, st, func(s *Status) map[string]any {
		return eventPayload(base, repo, s, commitJSON, branches)
	})
	if err != nil {
		return err
	}
	j := toStatusJSON(base, repo, created)
	httpapi.WriteCreated(w, j.URL, j)
	return nil
}

// resolve returns the commit SHA {ref} names in the route's repository
// (a 404 when it names none).
func (h *Handler) resolve(r *http.Request) (string, error) {
	repo := repos.From(r.Context())
	g, err := gitread.Open(h.Repos.GitDir(repo.ID))
	if err != nil {
		return "", apierr.NotFound()
	}
	defer g.Close()
	sha, err := g.Resolve(r.PathValue("ref"))
	if errors.Is(err, gitread.ErrRevisionNotFound) {
		return "", apierr.New(http.StatusNotFound, "No commit found for SHA: %s", r.PathValue("ref"))
	}
	return sha, err
}

// list answers GET .../commits/{ref}/statuses: the commit's statuses,
// newest first, paged.
func (h *Handler) list(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	sha, err := h.resolve(r)
	if err != nil {
		return err
	}
	repo := repos.From(r.Context())
	list, total, err := h.Service.List(r.Context(), repo.ID, sha, page.Limit(), page.Offset())
	if err != nil {
		return err
	}
	base := httpapi.BaseURL(r.Context())
	out := make([]statusJSON, 0, len(list))
	for _, st := range list {
		out = append(out, toStatusJSON(base, repo, st))
	}
	httpapi.SetLinks(w, r, page, total)
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// combined answers GET .../commits/{ref}/status: the latest status of
// each context and their combined state.
func (h *Handler) combined(w http.ResponseWriter, r *http.Request) error {
	sha, err := h.resolve(r)
	if err != nil {
		return err
	}
	repo := repos.From(r.Context())
	latest, err := h.Service.Latest(r.Context(), repo.ID, sha)
	if err != nil {
		return err
	}
	st, err := repos.StatsOf(r.Context(), h.Service.DB, repo.ID)
	if err != nil {
		return err
	}
	base := httpapi.BaseURL(r.Context())
	api := base + "/repos/" + repo.FullName()
	out := combinedJSON{State: Combined(latest), SHA: sha, TotalCount: len(latest), Statuses: []simpleStatusJSON{},
		Repository: repos.ToJSON(repos.URLsOf(r.Context()), repo, st, auth.RoleFrom(r.Context())), CommitURL: api + "/commits/" + sha,
		URL: api + "/commits/" + sha + "/status"}
	for _, s := range latest {
		out.Statuses = append(out.Statuses, toSimpleStatusJSON(base, repo, s))
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// eventPayload is the status webhook event's own fields.
func eventPayload(base string, repo *repos.Repository, s *Status, commit gitjson.Commit, branches []string) map[string]any {
	api := base + "/repos/" + repo.FullName()
	list := []map[string]any{}
	for _, b := range branches {
		name := b[len("refs/heads/"):]
		list = append(list, map[string]any{"name": name, "protected": false,
			"commit": gitjson.SHAURL{SHA: s.SHA, URL: api + "/commits/" + s.SHA}})
	}
	return map[string]any{
		"id": s.ID, "sha": s.SHA, "name": repo.FullName(), "target_url": optional(s.TargetURL),
		"avatar_url": avatarOf(base, s.Creator), "context": s.Context, "description": optional(s.Description),
		"state": s.State, "commit": commit, "branches": list,
		"created_at": wire.T(s.CreatedAt), "updated_at": wire.T(s.CreatedAt),
	}
}

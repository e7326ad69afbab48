package merges

import (
	"errors"
	"net/http"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/repos/gitjson"
)

// Handler serves the merges endpoints.
type Handler struct {
	Service *Service
}

// Routes is the merges route table. Both need push access (classic and
// OAuth tokens: repo, or public_repo for a public repository;
// fine-grained and app tokens: Contents write), as on the platform.
func (h *Handler) Routes() []httpapi.Route {
	write := auth.Rule{Target: auth.TargetRepo, Role: auth.RoleWrite,
		Permissions: auth.Perm("contents:write"), TokenTypes: auth.AllTokenTypes}
	return []httpapi.Route{
		{Method: "POST", Pattern: "/repos/{owner}/{repo}/merges", Handle: h.merge, Auth: write},
		{Method: "POST", Pattern: "/repos/{owner}/{repo}/merge-upstream", Handle: h.mergeUpstream, Auth: write},
	}
}

// mergeRequest is the body of POST .../merges.
type mergeRequest struct {
	Base          *string `json:"base"`
	Head          *string `json:"head"`
	CommitMessage *string `json:"commit_message"`
}

// merge answers POST /repos/{owner}/{repo}/merges: 201 with the merge
// commit, 204 when there is nothing to merge (see Service.Merge).
func (h *Handler) merge(w http.ResponseWriter, r *http.Request) error {
	var body mergeRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	var f apierr.Fields
	if body.Base == nil || *body.Base == "" {
		f.Add("Merge", "base", apierr.CodeMissingField)
	}
	if body.Head == nil || *body.Head == "" {
		f.Add("Merge", "head", apierr.CodeMissingField)
	}
	if err := f.Err(); err != nil {
		return err
	}
	m := Merge{Base: *body.Base, Head: *body.Head}
	if body.CommitMessage != nil {
		m.Message, m.HasMessage = *body.CommitMessage, true
	}
	actor, err := accounts.ByID(r.Context(), h.Service.DB, auth.PrincipalFrom(r.Context()).UserID())
	if err != nil {
		return err
	}
	repo := repos.From(r.Context())
	sha, err := h.Service.Merge(r.Context(), repo, actor, m)
	if errors.Is(err, ErrNothingToMerge) {
		w.WriteHeader(http.StatusNoContent)
		return nil
	} else if err != nil {
		return err
	}
	commit, err := h.commitJSON(r, repo, sha)
	if err != nil {
		return err
	}
	w.Header().Set("Location", commit.URL)
	httpapi.WriteJSON(w, http.StatusCreated, commit)
	return nil
}

// commitJSON renders the commit sha of the repository.
func (h *Handler) commitJSON(r *http.Request, repo *repos.Repository, sha string) (gitjson.Commit, error) {
	g, err := gitread.Open(h.Service.Repos.GitDir(repo.ID))
	if err != nil {
		return gitjson.Commit{}, err
	}
	defer g.Close()
	c, err := g.CommitMeta(sha)
	if err != nil {
		return gitjson.Commit{}, err
	}
	return gitjson.CommitOf(r.Context(), h.Service.DB, httpapi.BaseURL(r.Context()), repo, c)
}

// upstreamRequest is the body of POST .../merge-upstream.
type upstreamRequest struct {
	Branch *string `json:"branch"`
}

// mergeUpstream answers POST /repos/{owner}/{repo}/merge-upstream: 200
// with the merged-upstream object (see Service.MergeUpstream).
func (h *Handler) mergeUpstream(w http.ResponseWriter, r *http.Request) error {
	var body upstreamRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.Branch == nil || *body.Branch == "" {
		return apierr.Invalid("Repository", "branch", apierr.CodeMissingField)
	}
	actor, err := accounts.ByID(r.Context(), h.Service.DB, auth.PrincipalFrom(r.Context()).UserID())
	if err != nil {
		return err
	}
	res, err := h.Service.MergeUpstream(r.Context(), repos.From(r.Context()), actor, *body.Branch)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, res)
	return nil
}

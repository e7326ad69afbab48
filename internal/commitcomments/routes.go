package commitcomments

import (
	"errors"
	"net/http"
	"strings"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/git/gitdiff"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
)

// MaxDiffFiles is how many files of a commit's diff a comment's path is
// looked for in, as the commits API shows them (repocontent's
// MaxCommitFiles).
const MaxDiffFiles = gitdiff.MaxFiles

// Handler serves the commit comments endpoints.
type Handler struct {
	Service *Service
	Repos   *repos.Service
}

// Routes is the commit comments route table. Reading needs read access
// (public repositories anonymously; fine-grained: Metadata read, as the
// platform's lists). Anyone who reads a repository comments on its
// commits (classic tokens: public_repo or repo; fine-grained and app
// tokens: Contents write); authors edit and delete their own comments,
// anyone else needs push access, which the handler checks.
func (h *Handler) Routes() []httpapi.Route {
	rule := func(public bool, extra string, perm string) auth.Rule {
		return auth.Rule{Target: auth.TargetRepo, Role: auth.RoleRead, Public: public, Permissions: auth.Perm(perm),
			TokenTypes: auth.AllTokenTypes, Extra: extra}
	}
	read := rule(true, "", "metadata:read")
	write := rule(false, "", "contents:write")
	author := rule(false, "Authors may change their own; anyone else needs push access.", "contents:write")
	const repo = "/repos/{owner}/{repo}"
	return []httpapi.Route{
		{Method: "GET", Pattern: repo + "/comments", Handle: h.listRepo, Auth: read},
		{Method: "GET", Pattern: repo + "/comments/{comment_id}", Handle: h.get, Auth: read},
		{Method: "PATCH", Pattern: repo + "/comments/{comment_id}", Handle: h.update, Auth: author},
		{Method: "DELETE", Pattern: repo + "/comments/{comment_id}", Handle: h.delete, Auth: author},
		{Method: "GET", Pattern: repo + "/commits/{commit_sha}/comments", Handle: h.listCommit, Auth: read},
		{Method: "POST", Pattern: repo + "/commits/{commit_sha}/comments", Handle: h.create, Auth: write},
	}
}

// createRequest is the body of POST .../commits/{commit_sha}/comments.
type createRequest struct {
	Body     *string `json:"body"`
	Path     *string `json:"path"`
	Position *int    `json:"position"`
	Line     *int    `json:"line"`
}

// create answers POST .../commits/{commit_sha}/comments: 201 with the
// comment and its Location. The commit must exist (422 "No commit found
// for SHA"); a path must be a file of the commit's diff (against its
// first parent), a position a line of that file's diff, and a line
// (without a position) a line of the new file the diff shows, which gives
// the comment its position (422 otherwise). The body alone comments on
// the whole commit.
func (h *Handler) create(w http.ResponseWriter, r *http.Request) error {
	var body createRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	text, err := validBody(body.Body)
	if err != nil {
		return err
	}
	repo := repos.From(r.Context())
	c, err := h.place(r, repo, body)
	if err != nil {
		return err
	}
	c.Body = text
	actor, err := h.actor(r)
	if err != nil {
		return err
	}
	created, err := h.Service.Create(r.Context(), repo, actor, *c)
	if err != nil {
		return err
	}
	j := toJSON(httpapi.BaseURL(r.Context()), repo, created)
	w.Header().Set("Location", j.URL)
	httpapi.WriteJSON(w, http.StatusCreated, j)
	return nil
}

// place resolves the comment's commit and, when it names a path, its
// file and spot in the commit's diff.
func (h *Handler) place(r *http.Request, repo *repos.Repository, body createRequest) (*Comment, error) {
	g, err := gitread.Open(h.Repos.GitDir(repo.ID))
	if err != nil {
		return nil, err
	}
	defer g.Close()
	sha := r.PathValue("commit_sha")
	commit, err := g.CommitMeta(sha)
	if errors.Is(err, gitread.ErrRevisionNotFound) {
		return nil, apierr.Custom("CommitComment", "commit_id", "No commit found for SHA: %s", sha)
	} else if err != nil {
		return nil, err
	}
	c := &Comment{CommitID: commit.SHA}
	if body.Path == nil || *body.Path == "" {
		if body.Position != nil || body.Line != nil {
			return nil, apierr.Invalid("CommitComment", "path", apierr.CodeMissingField)
		}
		return c, nil
	}
	c.Path = *body.Path
	parent := ""
	if len(commit.ParentSHAs) > 0 {
		parent = commit.ParentSHAs[0]
	}
	diffs, _, err := g.Diff(r.Context(), parent, commit.SHA, MaxDiffFiles)
	if err != nil {
		return nil, err
	}
	i := -1
	for j, d := range diffs {
		if d.Path == c.Path {
			i = j
		}
	}
	if i < 0 {
		return nil, apierr.Custom("CommitComment", "path", "path must be a file changed by the commit")
	}
	switch {
	case body.Position != nil:
		sp, ok := gitdiff.Locate(diffs[i].Patch, 0, "", *body.Position)
		if !ok || *body.Position < 1 {
			return nil, apierr.Custom("CommitComment", "position", "position must be part of the diff")
		}
		c.Position, c.Line = sp.Position, sp.Line
	case body.Line != nil:
		sp, ok := gitdiff.Locate(diffs[i].Patch, *body.Line, "RIGHT", 0)
		if !ok || *body.Line < 1 {
			return nil, apierr.Custom("CommitComment", "line", "line must be part of the diff")
		}
		c.Position, c.Line = sp.Position, sp.Line
	}
	return c, nil
}

// validBody checks a comment's body: present, not blank, at most MaxBody
// characters.
func validBody(body *string) (string, error) {
	var f apierr.Fields
	if body == nil || strings.TrimSpace(*body) == "" {
		f.Add("CommitComment", "body", apierr.CodeMissingField)
	} else {
		f.MaxLength("CommitComment", "body", *body, MaxBody)
	}
	if err := f.Err(); err != nil {
		return "", err
	}
	return *body, nil
}

// listRepo answers GET /repos/{owner}/{repo}/comments: the repository's
// commit comments, oldest first, paged.
func (h *Handler) listRepo(w http.ResponseWriter, r *http.Request) error { return h.list(w, r, "") }

// listCommit answers GET .../commits/{commit_sha}/comments: the
// commit's comments, oldest first, paged. A SHA the repository does not
// resolve has none.
func (h *Handler) listCommit(w http.ResponseWriter, r *http.Request) error {
	sha := r.PathValue("commit_sha")
	repo := repos.From(r.Context())
	g, err := gitread.Open(h.Repos.GitDir(repo.ID))
	if err != nil {
		return err
	}
	if c, err := g.CommitMeta(sha); err == nil {
		sha = c.SHA
	}
	g.Close()
	return h.list(w, r, sha)
}

func (h *Handler) list(w http.ResponseWriter, r *http.Request, commit string) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	repo := repos.From(r.Context())
	list, more, err := h.Service.List(r.Context(), repo, commit, page)
	if err != nil {
		return err
	}
	base := httpapi.BaseURL(r.Context())
	out := make([]commentJSON, 0, len(list))
	for _, c := range list {
		out = append(out, toJSON(base, repo, c))
	}
	httpapi.SetLinksMore(w, r, page, more)
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// get answers GET /repos/{owner}/{repo}/comments/{comment_id}.
func (h *Handler) get(w http.ResponseWriter, r *http.Request) error {
	id, err := commentID(r)
	if err != nil {
		return err
	}
	repo := repos.From(r.Context())
	c, err := h.Service.Get(r.Context(), repo, id)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toJSON(httpapi.BaseURL(r.Context()), repo, c))
	return nil
}

// update answers PATCH /repos/{owner}/{repo}/comments/{comment_id}: the
// comment with its new body.
func (h *Handler) update(w http.ResponseWriter, r *http.Request) error {
	id, err := commentID(r)
	if err != nil {
		return err
	}
	var body struct {
		Body *string `json:"body"`
	}
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	text, err := validBody(body.Body)
	if err != nil {
		return err
	}
	actor, err := h.actor(r)
	if err != nil {
		return err
	}
	repo := repos.From(r.Context())
	c, err := h.Service.Update(r.Context(), repo, actor, id, text, canPush(r))
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toJSON(httpapi.BaseURL(r.Context()), repo, c))
	return nil
}

// delete answers DELETE /repos/{owner}/{repo}/comments/{comment_id}: 204.
func (h *Handler) delete(w http.ResponseWriter, r *http.Request) error {
	id, err := commentID(r)
	if err != nil {
		return err
	}
	actor, err := h.actor(r)
	if err != nil {
		return err
	}
	if err := h.Service.Delete(r.Context(), repos.From(r.Context()), actor, id, canPush(r)); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (h *Handler) actor(r *http.Request) (*accounts.Account, error) {
	return accounts.ByID(r.Context(), h.Service.DB, auth.PrincipalFrom(r.Context()).UserID())
}

// canPush reports whether the caller has push access to the route's
// repository.
func canPush(r *http.Request) bool { return auth.RoleFrom(r.Context()) >= auth.RoleWrite }

// commentID is {comment_id}: a 404 when it is not a number.
func commentID(r *http.Request) (int64, error) {
	id, err := httpapi.PathInt64(r, "comment_id")
	if err != nil {
		return 0, apierr.NotFound()
	}
	return id, nil
}

package prereceive

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"forgeapi/internal/apierr"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

const hookResource = "PreReceiveHook"

// hookView loads what a hook's JSON shows besides the hook.
func (h *Handler) hookView(ctx context.Context, hk *Hook) (hookJSON, error) {
	repo, err := repos.ByID(ctx, h.Service.DB, hk.RepoID)
	if err != nil {
		return hookJSON{}, err
	}
	env, err := EnvironmentByID(ctx, h.Service.DB, hk.EnvironmentID)
	if err != nil {
		return hookJSON{}, err
	}
	return toHookJSON(httpapi.BaseURL(ctx), hk, repo, env), nil
}

func hookKey(hk *Hook) listKey { return listKey{hk.ID, hk.Name, hk.CreatedAt, hk.UpdatedAt} }

func (h *Handler) listHooks(w http.ResponseWriter, r *http.Request) error {
	page, order, err := parseListing(r)
	if err != nil {
		return err
	}
	list, err := Hooks(r.Context(), h.Service.DB)
	if err != nil {
		return err
	}
	sortList(order, list, hookKey)
	out := []hookJSON{}
	for _, hk := range httpapi.Slice(page, list) {
		v, err := h.hookView(r.Context(), hk)
		if err != nil {
			return err
		}
		out = append(out, v)
	}
	httpapi.SetLinks(w, r, page, len(list))
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h *Handler) pathHook(r *http.Request) (*Hook, error) {
	id, err := httpapi.PathInt64(r, "pre_receive_hook_id")
	if err != nil {
		return nil, err
	}
	return HookByID(r.Context(), h.Service.DB, id)
}

func (h *Handler) getHook(w http.ResponseWriter, r *http.Request) error {
	hk, err := h.pathHook(r)
	if err != nil {
		return err
	}
	v, err := h.hookView(r.Context(), hk)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, v)
	return nil
}

// hookRequest is the body of the hook's POST and PATCH. The script's
// repository is named by full_name or id, the environment by id.
type hookRequest struct {
	Name             *string `json:"name"`
	Script           *string `json:"script"`
	ScriptRepository *struct {
		ID       *int64  `json:"id"`
		FullName *string `json:"full_name"`
	} `json:"script_repository"`
	Environment *struct {
		ID *int64 `json:"id"`
	} `json:"environment"`
	Enforcement     *string `json:"enforcement"`
	AllowDownstream *bool   `json:"allow_downstream_configuration"`
}

// apply validates the body and applies it to hk (a new hook when
// creating: name, script, script_repository and environment required).
// The repository and environment must exist and the script must be a
// file on the repository's default branch.
func (h *Handler) apply(ctx context.Context, b *hookRequest, hk *Hook, creating bool) error {
	var f apierr.Fields
	if b.Name != nil && strings.TrimSpace(*b.Name) == "" || b.Name == nil && creating {
		f.Add(hookResource, "name", apierr.CodeMissingField)
	} else if b.Name != nil && f.MaxLength(hookResource, "name", *b.Name, 255) {
		hk.Name = strings.TrimSpace(*b.Name)
	}
	if b.Script != nil && strings.TrimSpace(*b.Script) == "" || b.Script == nil && creating {
		f.Add(hookResource, "script", apierr.CodeMissingField)
	} else if b.Script != nil {
		hk.Script = strings.TrimPrefix(strings.TrimSpace(*b.Script), "/")
	}
	if b.Enforcement != nil && !validEnforcement(*b.Enforcement) {
		f.Add(hookResource, "enforcement", apierr.CodeInvalid)
	} else if b.Enforcement != nil {
		hk.Enforcement = *b.Enforcement
	}
	if b.AllowDownstream != nil {
		hk.AllowDownstream = *b.AllowDownstream
	}
	h.applyRepository(ctx, b, hk, creating, &f)
	h.applyEnvironment(ctx, b, hk, creating, &f)
	if err := f.Err(); err != nil {
		return err
	}
	return h.checkScript(ctx, hk)
}

func (h *Handler) applyRepository(ctx context.Context, b *hookRequest, hk *Hook, creating bool, f *apierr.Fields) {
	sr := b.ScriptRepository
	if sr == nil {
		if creating {
			f.Add(hookResource, "script_repository", apierr.CodeMissingField)
		}
		return
	}
	var repo *repos.Repository
	var err error
	switch {
	case sr.FullName != nil:
		owner, name, ok := strings.Cut(*sr.FullName, "/")
		if !ok {
			f.Add(hookResource, "script_repository", apierr.CodeInvalid)
			return
		}
		repo, err = repos.ByOwnerAndName(ctx, h.Service.DB, owner, name)
	case sr.ID != nil:
		repo, err = repos.ByID(ctx, h.Service.DB, *sr.ID)
	default:
		f.Add(hookResource, "script_repository", apierr.CodeMissingField)
		return
	}
	if err != nil {
		f.Add(hookResource, "script_repository", apierr.CodeInvalid)
		return
	}
	hk.RepoID = repo.ID
}

func (h *Handler) applyEnvironment(ctx context.Context, b *hookRequest, hk *Hook, creating bool, f *apierr.Fields) {
	env := b.Environment
	if env == nil || env.ID == nil {
		if creating || env != nil {
			f.Add(hookResource, "environment", apierr.CodeMissingField)
		}
		return
	}
	if _, err := EnvironmentByID(ctx, h.Service.DB, *env.ID); err != nil {
		f.Add(hookResource, "environment", apierr.CodeInvalid)
		return
	}
	hk.EnvironmentID = *env.ID
}

// checkScript makes sure the hook's script is a file on its repository's
// default branch: a 422 otherwise.
func (h *Handler) checkScript(ctx context.Context, hk *Hook) error {
	repo, err := repos.ByID(ctx, h.Service.DB, hk.RepoID)
	if err != nil {
		return err
	}
	_, err = readFile(h.Service.Repos.GitDir(repo.ID), repo.DefaultBranch, hk.Script)
	if errors.Is(err, errNoScript) {
		return apierr.Custom(hookResource, "script", "script %s is not a file on the default branch of %s", hk.Script, repo.FullName())
	}
	return err
}

// createHook answers POST /admin/pre-receive-hooks: 201; the enforcement
// defaults to disabled, allow_downstream_configuration to false.
func (h *Handler) createHook(w http.ResponseWriter, r *http.Request) error {
	var body hookRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	ctx := r.Context()
	hk := &Hook{Enforcement: Disabled}
	if err := h.apply(ctx, &body, hk, true); err != nil {
		return err
	}
	now := store.Now()
	err := h.Service.DB.QueryRowContext(ctx, `INSERT INTO pre_receive_hooks (name, script, script_repository_id,
		environment_id, enforcement, allow_downstream, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $7)
		RETURNING id`, hk.Name, hk.Script, hk.RepoID, hk.EnvironmentID, hk.Enforcement, hk.AllowDownstream, now).Scan(&hk.ID)
	if err = store.Normalize(err); errors.Is(err, store.ErrConflict) {
		return nameTaken(hookResource)
	} else if err != nil {
		return err
	}
	hk.CreatedAt, hk.UpdatedAt = now, now
	v, err := h.hookView(ctx, hk)
	if err != nil {
		return err
	}
	httpapi.WriteCreated(w, httpapi.BaseURL(ctx)+"/admin/pre-receive-hooks/"+strconv.FormatInt(hk.ID, 10), v)
	return nil
}

// updateHook answers PATCH /admin/pre-receive-hooks/{id}.
func (h *Handler) updateHook(w http.ResponseWriter, r *http.Request) error {
	hk, err := h.pathHook(r)
	if err != nil {
		return err
	}
	var body hookRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	ctx := r.Context()
	if err := h.apply(ctx, &body, hk, false); err != nil {
		return err
	}
	hk.UpdatedAt = store.Now()
	_, err = h.Service.DB.ExecContext(ctx, `UPDATE pre_receive_hooks SET name = $1, script = $2, script_repository_id = $3,
		environment_id = $4, enforcement = $5, allow_downstream = $6, updated_at = $7 WHERE id = $8`,
		hk.Name, hk.Script, hk.RepoID, hk.EnvironmentID, hk.Enforcement, hk.AllowDownstream, hk.UpdatedAt, hk.ID)
	if err = store.Normalize(err); errors.Is(err, store.ErrConflict) {
		return nameTaken(hookResource)
	} else if err != nil {
		return err
	}
	v, err := h.hookView(ctx, hk)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, v)
	return nil
}

// deleteHook answers DELETE: 204, the organizations' and repositories'
// overrides with it.
func (h *Handler) deleteHook(w http.ResponseWriter, r *http.Request) error {
	id, err := httpapi.PathInt64(r, "pre_receive_hook_id")
	if err != nil {
		return err
	}
	res, err := h.Service.DB.ExecContext(r.Context(), `DELETE FROM pre_receive_hooks WHERE id = $1`, id)
	if n, err := store.Affected(res, err); err != nil {
		return err
	} else if n == 0 {
		return apierr.NotFound()
	}
	httpapi.NoContent(w)
	return nil
}

package webhooks

import (
	"net/http"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
)

// writeHook writes a hook of the request's target.
func (h *Handler) writeHook(w http.ResponseWriter, r *http.Request, t target, hook *Hook, status int) {
	u := hookURL(httpapi.BaseURL(r.Context()), t, hook.ID)
	if status == http.StatusCreated {
		w.Header().Set("Location", u)
	}
	httpapi.WriteJSON(w, status, toHookJSON(u, hook, h.Service.now()))
}

// sender is the account acting in the request (a bot for installation
// tokens).
func (h *Handler) sender(r *http.Request) (*accounts.Account, error) {
	return accounts.ByID(r.Context(), h.Service.DB, auth.PrincipalFrom(r.Context()).UserID())
}

// The queries of one page of a target's hooks that a caller may see.
const (
	repoHooksPage = `SELECT ` + hookColumns + ` FROM ` + hooksFrom + ` WHERE repo_id = $1 AND deleted_at IS NULL
		AND COALESCE(app_id, 0) = $2 ORDER BY id LIMIT $3 OFFSET $4`
	orgHooksPage = `SELECT ` + hookColumns + ` FROM ` + hooksFrom + ` WHERE org_id = $1 AND deleted_at IS NULL
		AND COALESCE(app_id, 0) = $2 ORDER BY id LIMIT $3 OFFSET $4`
	repoHooksCount = `SELECT COUNT(*) FROM hooks WHERE repo_id = $1 AND deleted_at IS NULL AND COALESCE(app_id, 0) = $2`
	orgHooksCount  = `SELECT COUNT(*) FROM hooks WHERE org_id = $1 AND deleted_at IS NULL AND COALESCE(app_id, 0) = $2`
)

func (h *Handler) listHooks(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	t := targetFrom(ctx)
	appID := callerAppID(auth.PrincipalFrom(ctx))
	pageQuery, countQuery, id := repoHooksPage, repoHooksCount, int64(0)
	switch {
	case t.Global:
		pageQuery, countQuery = globalHooksPage, globalHooksCount
	case t.Repo != nil:
		id = t.Repo.ID
	default:
		pageQuery, countQuery, id = orgHooksPage, orgHooksCount, t.Org.ID
	}
	var total int
	if err := h.Service.DB.QueryRowContext(ctx, countQuery, id, appID).Scan(&total); err != nil {
		return err
	}
	hooks, err := queryHooks(ctx, h.Service.DB, pageQuery, id, appID, page.Limit(), page.Offset())
	if err != nil {
		return err
	}
	base, now := httpapi.BaseURL(ctx), h.Service.now()
	out := make([]any, 0, len(hooks))
	for _, hook := range hooks {
		out = append(out, toHookJSON(hookURL(base, t, hook.ID), hook, now))
	}
	httpapi.SetLinks(w, r, page, total)
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h *Handler) createHook(w http.ResponseWriter, r *http.Request) error {
	var body hookBody
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	sender, err := h.sender(r)
	if err != nil {
		return err
	}
	t := targetFrom(r.Context())
	hook, err := h.Service.CreateHook(r.Context(), t, &body, callerAppID(auth.PrincipalFrom(r.Context())), sender)
	if err != nil {
		return err
	}
	h.writeHook(w, r, t, hook, http.StatusCreated)
	return nil
}

func (h *Handler) getHook(w http.ResponseWriter, r *http.Request) error {
	hook, t, err := h.pathHook(r)
	if err != nil {
		return err
	}
	h.writeHook(w, r, t, hook, http.StatusOK)
	return nil
}

func (h *Handler) updateHook(w http.ResponseWriter, r *http.Request) error {
	hook, t, err := h.pathHook(r)
	if err != nil {
		return err
	}
	var body hookBody
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	updated, err := h.Service.EditHook(r.Context(), hook.ID, func(stored *Hook) error {
		return h.Service.applyBody(stored, &body, false)
	})
	if err != nil {
		return err
	}
	h.writeHook(w, r, t, updated, http.StatusOK)
	return nil
}

func (h *Handler) deleteHook(w http.ResponseWriter, r *http.Request) error {
	hook, _, err := h.pathHook(r)
	if err != nil {
		return err
	}
	sender, err := h.sender(r)
	if err != nil {
		return err
	}
	if err := h.Service.DeleteHook(r.Context(), hook, sender); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

func (h *Handler) getConfig(w http.ResponseWriter, r *http.Request) error {
	hook, _, err := h.pathHook(r)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, configJSON(hook))
	return nil
}

// updateConfig changes only the config properties sent; the secret stays
// unless a new one is sent.
func (h *Handler) updateConfig(w http.ResponseWriter, r *http.Request) error {
	hook, _, err := h.pathHook(r)
	if err != nil {
		return err
	}
	var body configBody
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	updated, err := h.Service.EditHook(r.Context(), hook.ID, func(stored *Hook) error {
		var f apierr.Fields
		if err := h.Service.applyConfig(stored, &body, &f); err != nil {
			return err
		}
		checkURL(stored, &f)
		return f.Err()
	})
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, configJSON(updated))
	return nil
}

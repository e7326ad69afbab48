package webhooks

import (
	"context"
	"errors"
	"net/http"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// target is the repository or organization of a hook route, as the access
// guard resolved it, or the app whose JWT calls an /app/hook route.
// Exactly one of Repo, Org and AppID is set.
type target struct {
	Repo  *repos.Repository
	Org   *accounts.Account
	AppID int64
	// Global is the installation's global webhooks (/admin/hooks).
	Global bool
}

func targetFrom(ctx context.Context) target {
	if isGlobal(ctx) {
		return target{Global: true}
	}
	if p := auth.PrincipalFrom(ctx); p != nil && p.App != nil {
		return target{AppID: p.App.ID}
	}
	if r := repos.From(ctx); r != nil {
		return target{Repo: r}
	}
	return target{Org: accounts.OrgFrom(ctx)}
}

// owns reports whether the hook belongs to the target.
func (t target) owns(h *Hook) bool {
	switch {
	case t.Global:
		return h.Global
	case t.AppID != 0:
		return h.IntegrationID == t.AppID
	case t.Repo != nil:
		return h.RepoID == t.Repo.ID
	}
	return t.Org != nil && h.OrgID == t.Org.ID
}

// visibleTo applies the OAuth rule of hooks: an OAuth
// app's token sees only the hooks its app created, and any other caller
// only the hooks no OAuth app created.
func visibleTo(h *Hook, p *auth.Principal) bool {
	return h.AppID == callerAppID(p)
}

// callerAppID is the OAuth app a request acts for; 0 when none.
func callerAppID(p *auth.Principal) int64 {
	if p == nil || p.Token == nil || p.Token.Kind != auth.KindOAuth {
		return 0
	}
	return p.Token.AppID
}

// pathHook loads the {hook_id} of the request's target, or the calling
// app's own webhook on the /app/hook routes. A hook of another target, a
// deleted one or one the caller may not see is 404.
func (h *Handler) pathHook(r *http.Request) (*Hook, target, error) {
	t := targetFrom(r.Context())
	hook, err := h.lookupHook(r, t)
	if errors.Is(err, store.ErrNotFound) {
		return nil, t, apierr.NotFound()
	}
	if err != nil {
		return nil, t, err
	}
	if !t.owns(hook) || hook.DeletedAt != nil || !visibleTo(hook, auth.PrincipalFrom(r.Context())) {
		return nil, t, apierr.NotFound()
	}
	return hook, t, nil
}

// lookupHook reads the hook a route names: the app's own for an app
// target, else the path's {hook_id} (store.ErrNotFound when not a number).
func (h *Handler) lookupHook(r *http.Request, t target) (*Hook, error) {
	if t.AppID != 0 {
		return AppHook(r.Context(), h.Service.DB, t.AppID)
	}
	id, err := httpapi.PathInt64(r, "hook_id")
	if err != nil {
		return nil, store.ErrNotFound
	}
	return HookByID(r.Context(), h.Service.DB, id)
}

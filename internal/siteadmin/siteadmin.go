// Package siteadmin serves the self-managed edition's site administration
// (the platform's enterprise-admin operations that administer the
// installation): users (create, rename, delete, suspend, promote to site
// administrator, impersonation tokens), organizations (create), every
// user's SSH keys and personal access tokens, the installation's
// statistics, its announcement and its license information. The global
// webhooks (/admin/hooks) are the webhooks area's (internal/webhooks):
// this package emits the user events they receive.
//
// Only site administrators (accounts.Account.SiteAdmin, made by `forgeapi
// user create --site-admin` or PUT /users/{username}/site_admin) call
// these operations: anyone else gets the platform's 403 "You must be a
// site administrator to do this."; classic and OAuth tokens need the
// site_admin scope and permission-based tokens are refused, as on the
// platform.
package siteadmin

import (
	"context"
	"net/http"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/events"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/keys"
	"forgeapi/internal/oauth"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// Service holds the site administration's state: the accounts, tokens and
// keys it changes live in their own areas' tables.
type Service struct {
	DB *store.DB
	// Repos deletes a deleted user's repositories with their git data.
	Repos *repos.Service
	// OAuth reads impersonation tokens back as authorizations.
	OAuth *oauth.Service
	// Events receives the user events (created, deleted), which global
	// webhooks are sent.
	Events *events.Bus
}

// emitUser emits the user event of the action about u by admin in tx: a
// global webhooks' event (no repository or organization hook has it).
func (s *Service) emitUser(ctx context.Context, tx *store.Tx, admin, u *accounts.Account, action string) error {
	return s.Events.Emit(ctx, tx, &events.Event{HookEvent: "user", Actor: admin,
		HookPayload: map[string]any{"action": action, "user": accounts.ToSimpleUser(httpapi.BaseURL(ctx), u)}})
}

// Handler serves the site administration's routes.
type Handler struct {
	Service *Service
	// Keys deletes SSH keys (and emits a deploy key's event).
	Keys *keys.Service
}

// notSiteAdmin is the platform's answer to anyone else.
const notSiteAdmin = "You must be a site administrator to do this."

// requireSiteAdmin wraps a handler so that only a site administrator
// reaches it: anyone else gets the platform's 403.
func requireSiteAdmin(next httpapi.HandlerFunc) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if !isSiteAdmin(r) {
			return apierr.Forbidden(notSiteAdmin)
		}
		return next(w, r)
	}
}

// hiddenFromOthers wraps a handler that the platform hides from anyone but
// a site administrator: they get its 404 (the statistics).
func hiddenFromOthers(next httpapi.HandlerFunc) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if !isSiteAdmin(r) {
			return apierr.NotFound()
		}
		return next(w, r)
	}
}

// isSiteAdmin reports whether the request's caller is a site
// administrator.
func isSiteAdmin(r *http.Request) bool {
	p := auth.PrincipalFrom(r.Context())
	return p != nil && p.Account != nil && p.Account.SiteAdmin
}

// caller is the site administrator making the request.
func (h *Handler) caller(r *http.Request) (*accounts.Account, error) {
	return accounts.ByID(r.Context(), h.Service.DB, auth.PrincipalFrom(r.Context()).UserID())
}

// targetUser is the route's {username}, which must be a user's (an
// organization's login is a 404).
func targetUser(ctx context.Context) (*accounts.Account, error) {
	u := accounts.UserFrom(ctx)
	if u == nil || u.Type != accounts.TypeUser {
		return nil, apierr.NotFound()
	}
	return u, nil
}

// Package blocks serves blocked users: the ones a user blocks
// (/user/blocks) and the ones an organization blocks (/orgs/{org}/blocks),
// with the org_block webhook event. A blocked user cannot star, watch or
// follow the blocker or its repositories, nor be invited to a blocking
// organization (the areas that do those check accounts.CheckNotBlocked).
package blocks

import (
	"context"
	"errors"
	"net/http"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/events"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/store"
)

// Handler serves the blocks endpoints.
type Handler struct {
	DB     *store.DB
	Events *events.Bus
}

// Routes is the blocks route table. Classic and OAuth tokens need user
// (user blocks) or admin:org (organization blocks); fine-grained tokens
// the user permission Block another user or the organization permission
// Blocking users.
func (h *Handler) Routes() []httpapi.Route {
	user := func(level string) auth.Rule {
		return auth.Rule{Target: auth.TargetSelf, Unauthorized401: true, Scopes: []string{"user"},
			Permissions: auth.Perm("blocking:" + level), TokenTypes: auth.UAT | auth.FPAT}
	}
	org := func(level string) auth.Rule {
		return auth.Rule{Target: auth.TargetOrg, Role: auth.RoleAdmin, Scopes: []string{"admin:org"},
			Permissions: auth.Perm("organization_user_blocking:" + level), TokenTypes: auth.AllTokenTypes}
	}
	return []httpapi.Route{
		{Method: "GET", Pattern: "/user/blocks", Handle: h.list(self), Auth: user("read")},
		{Method: "GET", Pattern: "/user/blocks/{username}", Handle: h.check(self), Auth: user("read")},
		{Method: "PUT", Pattern: "/user/blocks/{username}", Handle: h.block(self), Auth: user("write")},
		{Method: "DELETE", Pattern: "/user/blocks/{username}", Handle: h.unblock(self), Auth: user("write")},
		{Method: "GET", Pattern: "/orgs/{org}/blocks", Handle: h.list(organization), Auth: org("read")},
		{Method: "GET", Pattern: "/orgs/{org}/blocks/{username}", Handle: h.check(organization), Auth: org("read")},
		{Method: "PUT", Pattern: "/orgs/{org}/blocks/{username}", Handle: h.block(organization), Auth: org("write")},
		{Method: "DELETE", Pattern: "/orgs/{org}/blocks/{username}", Handle: h.unblock(organization), Auth: org("write")},
	}
}

// blocker returns the account that blocks: the caller or the route's
// organization.
type blocker func(h *Handler, r *http.Request) (*accounts.Account, error)

func self(h *Handler, r *http.Request) (*accounts.Account, error) {
	return accounts.ByID(r.Context(), h.DB, auth.PrincipalFrom(r.Context()).UserID())
}

func organization(_ *Handler, r *http.Request) (*accounts.Account, error) {
	return accounts.OrgFrom(r.Context()), nil
}

// blockedUser returns the user {username} names; a 404 for none.
func (h *Handler) blockedUser(r *http.Request) (*accounts.Account, error) {
	u, err := accounts.ByLogin(r.Context(), h.DB, r.PathValue("username"))
	if errors.Is(err, store.ErrNotFound) || err == nil && u.IsOrg() {
		return nil, apierr.NotFound()
	}
	return u, err
}

func (h *Handler) list(who blocker) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		page, err := httpapi.ParsePage(r)
		if err != nil {
			return err
		}
		acct, err := who(h, r)
		if err != nil {
			return err
		}
		list, err := accounts.BlockedBy(r.Context(), h.DB, acct.ID, page.Limit()+1, page.Offset())
		if err != nil {
			return err
		}
		more := len(list) > page.Limit()
		list = list[:min(len(list), page.Limit())]
		base := httpapi.BaseURL(r.Context())
		out := make([]accounts.SimpleUser, 0, len(list))
		for _, a := range list {
			out = append(out, accounts.ToSimpleUser(base, a))
		}
		httpapi.SetLinksMore(w, r, page, more)
		httpapi.WriteJSON(w, http.StatusOK, out)
		return nil
	}
}

func (h *Handler) check(who blocker) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		acct, user, err := h.pair(r, who)
		if err != nil {
			return err
		}
		blocked, err := accounts.Blocks(r.Context(), h.DB, acct.ID, user.ID)
		if err != nil {
			return err
		}
		if !blocked {
			return apierr.NotFound()
		}
		httpapi.NoContent(w)
		return nil
	}
}

// pair returns the blocker and the user {username} names.
func (h *Handler) pair(r *http.Request, who blocker) (*accounts.Account, *accounts.Account, error) {
	acct, err := who(h, r)
	if err != nil {
		return nil, nil, err
	}
	user, err := h.blockedUser(r)
	return acct, user, err
}

// block blocks the user: 204. Blocking oneself, or a member of the
// blocking organization, is a 422 (the platform's "cannot block").
func (h *Handler) block(who blocker) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		acct, user, err := h.pair(r, who)
		if err != nil {
			return err
		}
		if err := h.checkBlockable(r.Context(), acct, user); err != nil {
			return err
		}
		actor, err := self(h, r)
		if err != nil {
			return err
		}
		err = h.DB.Tx(r.Context(), func(tx *store.Tx) error {
			added, err := accounts.Block(r.Context(), tx, acct.ID, user.ID)
			if err != nil || !added {
				return err
			}
			return h.emit(r.Context(), tx, acct, user, actor, "blocked")
		})
		if err != nil {
			return err
		}
		httpapi.NoContent(w)
		return nil
	}
}

func (h *Handler) checkBlockable(ctx context.Context, acct, user *accounts.Account) error {
	if acct.ID == user.ID {
		return apierr.Custom("Block", "username", "You can't block yourself.")
	}
	if !acct.IsOrg() {
		return nil
	}
	role, err := accounts.MemberRole(ctx, h.DB, acct.ID, user.ID)
	if err != nil {
		return err
	}
	if role != "" {
		return apierr.Custom("Block", "username", "%s is a member of %s; remove them before blocking them.", user.Login, acct.Login)
	}
	return nil
}

func (h *Handler) unblock(who blocker) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		acct, user, err := h.pair(r, who)
		if err != nil {
			return err
		}
		actor, err := self(h, r)
		if err != nil {
			return err
		}
		err = h.DB.Tx(r.Context(), func(tx *store.Tx) error {
			removed, err := accounts.Unblock(r.Context(), tx, acct.ID, user.ID)
			if err != nil || !removed {
				return err
			}
			return h.emit(r.Context(), tx, acct, user, actor, "unblocked")
		})
		if err != nil {
			return err
		}
		httpapi.NoContent(w)
		return nil
	}
}

// emit sends an organization's block or unblock as the org_block webhook
// event; a user's blocks reach no webhook, as on the platform.
func (h *Handler) emit(ctx context.Context, tx *store.Tx, acct, user, actor *accounts.Account, action string) error {
	if !acct.IsOrg() {
		return nil
	}
	return h.Events.Emit(ctx, tx, &events.Event{HookEvent: "org_block", Actor: actor, Org: acct,
		HookPayload: map[string]any{"action": action, "blocked_user": accounts.ToSimpleUser(httpapi.BaseURL(ctx), user)}})
}

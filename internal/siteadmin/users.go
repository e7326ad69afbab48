package siteadmin

import (
	"context"
	"net/http"
	"strings"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// RenameUserMessage is the message of PATCH /admin/users/{username}'s
// 202: the platform queues the rename; forgeapi has done it by then.
const RenameUserMessage = "Job queued to rename user. It may take a few minutes to complete."

// NewUser is what POST /admin/users creates.
type NewUser struct {
	Login     string
	Email     string
	Suspended bool
}

// CreateUser creates the user (without a password: it signs in with the
// tokens made for it), suspended at once when n says so, and emits user
// created in the same transaction. A login that is invalid or taken is a
// 422.
func (s *Service) CreateUser(ctx context.Context, admin *accounts.Account, n NewUser) (*accounts.Account, error) {
	var u *accounts.Account
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		var err error
		u, err = accounts.Create(ctx, tx, accounts.NewAccount{Type: accounts.TypeUser, Login: n.Login, Email: n.Email})
		if err != nil {
			return err
		}
		if n.Suspended {
			if err := setSuspended(ctx, tx, u, true, defaultReason(admin), tx.Now()); err != nil {
				return err
			}
		}
		return s.emitUser(ctx, tx, admin, u, "created")
	})
	return u, err
}

// RenameUser gives the user the login (422 when invalid or taken); the
// old login keeps redirecting repository paths until it is taken.
func (s *Service) RenameUser(ctx context.Context, u *accounts.Account, login string) (*accounts.Account, error) {
	var renamed *accounts.Account
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		var err error
		renamed, err = accounts.Rename(ctx, tx, u, login, tx.Now())
		return err
	})
	return renamed, err
}

// DeleteUser deletes the user with its repositories (and their git data),
// then the account with what goes with it (tokens, keys, memberships,
// applications: foreign keys). A user who is an organization's only
// owner is refused with a 422 naming the organizations, and a site
// administrator cannot delete themself. user deleted is emitted in the
// transaction that deletes the account.
func (s *Service) DeleteUser(ctx context.Context, admin, u *accounts.Account) error {
	if admin.ID == u.ID {
		return apierr.Unprocessable("You cannot delete your own account.")
	}
	orgs, err := accounts.SoleOwnerOf(ctx, s.DB, u.ID)
	if err != nil {
		return err
	}
	if len(orgs) > 0 {
		return soleOwner(u, orgs)
	}
	names, err := repos.ListOwnedNames(ctx, s.DB, u.ID)
	if err != nil {
		return err
	}
	for _, full := range names {
		owner, name, _ := strings.Cut(full, "/")
		r, err := repos.ByOwnerAndName(ctx, s.DB, owner, name)
		if err != nil {
			return err
		}
		if err := s.Repos.Delete(ctx, r, admin); err != nil {
			return err
		}
	}
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		// Again with the organizations locked: another owner may have
		// left one of them since the check above.
		if orgs, err := accounts.LockedSoleOwnerOf(ctx, tx, u.ID); err != nil || len(orgs) > 0 {
			if err != nil {
				return err
			}
			return soleOwner(u, orgs)
		}
		if err := s.emitUser(ctx, tx, admin, u, "deleted"); err != nil {
			return err
		}
		return accounts.Delete(ctx, tx, u.ID)
	})
}

// soleOwner is the 422 of a deletion of the only owner of the
// organizations.
func soleOwner(u *accounts.Account, orgs []string) error {
	return apierr.Unprocessable("%s is the only owner of %s: add another owner first.", u.Login, strings.Join(orgs, ", "))
}

// Suspend suspends the user: its tokens, password, clone tokens and SSH
// keys stop authenticating at once (auth, git over SSH), and its web
// console sessions end. A site
// administrator cannot be suspended (demote them first). Suspending a
// suspended user keeps the first suspension's time and reason.
func (s *Service) Suspend(ctx context.Context, admin, u *accounts.Account, reason string) error {
	if u.SiteAdmin {
		return apierr.Forbidden("You cannot suspend a site administrator. Demote the user first.")
	}
	if reason == "" {
		reason = defaultReason(admin)
	}
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		if err := setSuspended(ctx, tx, u, true, reason, tx.Now()); err != nil {
			return err
		}
		// Signed out of the web console too (console.EndSessions' statement:
		// that package is above this one).
		_, err := tx.ExecContext(ctx, `DELETE FROM console_sessions WHERE user_id = $1`, u.ID)
		return store.Normalize(err)
	})
}

// Unsuspend lifts the user's suspension (a user who is not suspended
// stays as it is).
func (s *Service) Unsuspend(ctx context.Context, u *accounts.Account) error {
	return s.DB.Tx(ctx, func(tx *store.Tx) error { return setSuspended(ctx, tx, u, false, "", tx.Now()) })
}

// defaultReason is the platform's reason for a suspension that gives
// none.
func defaultReason(admin *accounts.Account) string { return "Suspended via API by " + admin.Login }

// setSuspended records the suspension (on) or lifts it.
func setSuspended(ctx context.Context, q store.Q, u *accounts.Account, on bool, reason string, now time.Time) error {
	var err error
	if on {
		_, err = q.ExecContext(ctx, `UPDATE accounts SET suspended_at = $1, suspension_reason = $2, updated_at = $1
			WHERE id = $3 AND suspended_at IS NULL`, now, reason, u.ID)
	} else {
		_, err = q.ExecContext(ctx, `UPDATE accounts SET suspended_at = NULL, suspension_reason = '', updated_at = $1
			WHERE id = $2 AND suspended_at IS NOT NULL`, now, u.ID)
	}
	return store.Normalize(err)
}

// SetSiteAdmin promotes the user to site administrator (on) or demotes
// them. A suspended user cannot be promoted.
func (s *Service) SetSiteAdmin(ctx context.Context, u *accounts.Account, on bool) error {
	if on && u.SuspendedAt != nil {
		return apierr.Forbidden("You cannot promote a suspended user. Unsuspend the user first.")
	}
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE accounts SET site_admin = $1, updated_at = $2 WHERE id = $3`, on, tx.Now(), u.ID)
		return store.Normalize(err)
	})
}

// newUserRequest is the body of POST /admin/users.
type newUserRequest struct {
	Login     *string `json:"login"`
	Email     *string `json:"email"`
	Suspended *bool   `json:"suspended"`
}

// createUser serves POST /admin/users: 201 with the simple user.
func (h *Handler) createUser(w http.ResponseWriter, r *http.Request) error {
	var req newUserRequest
	if err := httpapi.DecodeJSON(r, &req); err != nil {
		return err
	}
	if req.Login == nil {
		return apierr.Invalid("User", "login", apierr.CodeMissingField)
	}
	n := NewUser{Login: *req.Login}
	if req.Email != nil {
		if !accounts.ValidEmail(*req.Email) {
			return apierr.Invalid("User", "email", apierr.CodeInvalid)
		}
		n.Email = *req.Email
	}
	n.Suspended = req.Suspended != nil && *req.Suspended
	admin, err := h.caller(r)
	if err != nil {
		return err
	}
	u, err := h.Service.CreateUser(r.Context(), admin, n)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusCreated, accounts.ToSimpleUser(httpapi.BaseURL(r.Context()), u))
	return nil
}

// loginRequest is the body of the rename operations.
type loginRequest struct {
	Login *string `json:"login"`
}

// renameResponse is their 202.
type renameResponse struct {
	Message string `json:"message"`
	URL     string `json:"url"`
}

// renameUser serves PATCH /admin/users/{username}: 202 once renamed.
func (h *Handler) renameUser(w http.ResponseWriter, r *http.Request) error {
	u, err := targetUser(r.Context())
	if err != nil {
		return err
	}
	var req loginRequest
	if err := httpapi.DecodeJSON(r, &req); err != nil {
		return err
	}
	if req.Login == nil {
		return apierr.Invalid("User", "login", apierr.CodeMissingField)
	}
	renamed, err := h.Service.RenameUser(r.Context(), u, *req.Login)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusAccepted, renameResponse{Message: RenameUserMessage,
		URL: httpapi.BaseURL(r.Context()) + "/users/" + renamed.Login})
	return nil
}

// deleteUser serves DELETE /admin/users/{username}: 204.
func (h *Handler) deleteUser(w http.ResponseWriter, r *http.Request) error {
	u, err := targetUser(r.Context())
	if err != nil {
		return err
	}
	admin, err := h.caller(r)
	if err != nil {
		return err
	}
	if err := h.Service.DeleteUser(r.Context(), admin, u); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

// reasonRequest is the body of PUT and DELETE /users/{username}/suspended.
type reasonRequest struct {
	Reason *string `json:"reason"`
}

// suspend serves PUT /users/{username}/suspended: 204.
func (h *Handler) suspend(w http.ResponseWriter, r *http.Request) error {
	u, err := targetUser(r.Context())
	if err != nil {
		return err
	}
	var req reasonRequest
	if err := httpapi.DecodeJSON(r, &req); err != nil {
		return err
	}
	admin, err := h.caller(r)
	if err != nil {
		return err
	}
	reason := ""
	if req.Reason != nil {
		reason = *req.Reason
	}
	if err := h.Service.Suspend(r.Context(), admin, u, reason); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

// unsuspend serves DELETE /users/{username}/suspended: 204.
func (h *Handler) unsuspend(w http.ResponseWriter, r *http.Request) error {
	u, err := targetUser(r.Context())
	if err != nil {
		return err
	}
	var req reasonRequest
	if err := httpapi.DecodeJSON(r, &req); err != nil {
		return err
	}
	if err := h.Service.Unsuspend(r.Context(), u); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

// promote serves PUT /users/{username}/site_admin: 204.
func (h *Handler) promote(w http.ResponseWriter, r *http.Request) error {
	return h.setSiteAdmin(w, r, true)
}

// demote serves DELETE /users/{username}/site_admin: 204.
func (h *Handler) demote(w http.ResponseWriter, r *http.Request) error {
	return h.setSiteAdmin(w, r, false)
}

func (h *Handler) setSiteAdmin(w http.ResponseWriter, r *http.Request, on bool) error {
	u, err := targetUser(r.Context())
	if err != nil {
		return err
	}
	if err := h.Service.SetSiteAdmin(r.Context(), u, on); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

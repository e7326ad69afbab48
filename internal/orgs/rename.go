package orgs

import (
	"context"
	"net/http"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/store"
)

// RenameMessage is the message of PATCH /admin/organizations/{org}'s 202:
// the platform queues the rename; forgeapi has done it by then.
const RenameMessage = "Job queued to rename organization. It may take a few minutes to complete."

// Rename gives the organization the login and returns it renamed, in one
// transaction: the account's login (accounts.Rename: 422 when invalid or
// taken; the old login keeps redirecting repository paths) and the
// organization event renamed with changes.login.from, which its hooks
// receive and the audit log records as org.rename. actor is the event's
// sender and the entry's actor (nil, as from the admin command: the
// organization itself).
func (s *Service) Rename(ctx context.Context, org, actor *accounts.Account, login string) (*accounts.Account, error) {
	var renamed *accounts.Account
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		var err error
		if renamed, err = accounts.Rename(ctx, tx, org, login, tx.Now()); err != nil {
			return err
		}
		if actor == nil {
			actor = renamed
		}
		return s.emit(ctx, tx, actor, renamed, map[string]any{"action": "renamed",
			"changes": map[string]any{"login": map[string]any{"from": org.Login}}})
	})
	return renamed, err
}

// renameRequest is the body of PATCH /admin/organizations/{org}.
type renameRequest struct {
	Login *string `json:"login"`
}

// renameResponse is its 202.
type renameResponse struct {
	Message string `json:"message"`
	URL     string `json:"url"`
}

// renameOrg serves PATCH /admin/organizations/{org}: site administrators
// only (403 for anyone else); a missing login is a 422.
func (h *Handler) renameOrg(w http.ResponseWriter, r *http.Request) error {
	if p := auth.PrincipalFrom(r.Context()); p == nil || p.Account == nil || !p.Account.SiteAdmin {
		return apierr.Forbidden("You must be a site administrator to do this.")
	}
	var req renameRequest
	if err := httpapi.DecodeJSON(r, &req); err != nil {
		return err
	}
	if req.Login == nil {
		return apierr.Invalid("Organization", "login", apierr.CodeMissingField)
	}
	actor, err := h.caller(r)
	if err != nil {
		return err
	}
	org, err := h.Service.Rename(r.Context(), accounts.OrgFrom(r.Context()), actor, *req.Login)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusAccepted, renameResponse{Message: RenameMessage,
		URL: httpapi.BaseURL(r.Context()) + "/orgs/" + org.Login})
	return nil
}

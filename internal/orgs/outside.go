package orgs

import (
	"context"
	"errors"
	"net/http"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/collaborators"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/store"
)

// ConvertToOutside makes an active member of the organization an outside
// collaborator, in one transaction: keep (collaborators'
// KeepTeamAccessTx) makes them a collaborator on each repository their
// teams give them, then the membership goes (organization
// member_removed; its teams with it). A user who is not an active member
// is a 403, and so is the last owner.
func (s *Service) ConvertToOutside(ctx context.Context, org, user, actor *accounts.Account,
	keep func(ctx context.Context, tx *store.Tx, org, user, actor *accounts.Account) error) error {
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		cur, err := getMembership(ctx, tx, org, user)
		if errors.Is(err, store.ErrNotFound) || err == nil && cur.State != StateActive {
			return apierr.Forbidden("%s is not a member of the %s organization.", user.Login, org.Login)
		}
		if err != nil {
			return err
		}
		if cur.Role == accounts.RoleOwner {
			if err := refuseLastOwner(ctx, tx, org, http.StatusForbidden); err != nil {
				return err
			}
		}
		if err := keep(ctx, tx, org, user, actor); err != nil {
			return err
		}
		if err := accounts.RemoveMember(ctx, tx, org.ID, user.ID); err != nil {
			return err
		}
		return s.emit(ctx, tx, actor, org, map[string]any{"action": "member_removed", "membership": toMembershipJSON(httpapi.BaseURL(ctx), cur)})
	})
}

// listOutsideCollaborators answers GET /orgs/{org}/outside_collaborators
// [?filter=all|2fa_disabled], paged.
func (h *Handler) listOutsideCollaborators(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	filter := r.URL.Query().Get("filter")
	if filter != "" && filter != "all" && filter != "2fa_disabled" {
		return apierr.Invalid("", "filter", apierr.CodeInvalid)
	}
	ctx := r.Context()
	list, total, err := collaborators.OutsideCollaborators(ctx, h.Service.DB, accounts.OrgFrom(ctx), filter == "2fa_disabled",
		page.Limit(), page.Offset())
	if err != nil {
		return err
	}
	base := httpapi.BaseURL(ctx)
	out := make([]accounts.SimpleUser, 0, len(list))
	for _, a := range list {
		out = append(out, accounts.ToSimpleUser(base, a))
	}
	httpapi.SetLinks(w, r, page, total)
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// convertToOutside answers PUT /orgs/{org}/outside_collaborators/{username}:
// 204 once converted; with {"async": true} the platform queues the job
// and answers 202, which forgeapi answers after converting at once.
func (h *Handler) convertToOutside(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Async *bool `json:"async"`
	}
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	user, err := h.pathUser(r)
	if err != nil {
		return err
	}
	actor, err := h.caller(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	if err := h.Service.ConvertToOutside(ctx, accounts.OrgFrom(ctx), user, actor, h.Collaborators.KeepTeamAccessTx); err != nil {
		return err
	}
	if body.Async != nil && *body.Async {
		httpapi.WriteJSON(w, http.StatusAccepted, struct{}{})
		return nil
	}
	httpapi.NoContent(w)
	return nil
}

// removeOutsideCollaborator answers DELETE
// /orgs/{org}/outside_collaborators/{username}: the user leaves every
// repository of the organization (204, also when they had none); a member
// of the organization is the platform's 422.
func (h *Handler) removeOutsideCollaborator(w http.ResponseWriter, r *http.Request) error {
	user, err := h.pathUser(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	org := accounts.OrgFrom(ctx)
	role, err := accounts.MemberRole(ctx, h.Service.DB, org.ID, user.ID)
	if err != nil {
		return err
	}
	if role != "" {
		return apierr.Unprocessable("You cannot specify an organization member to remove as an outside collaborator.")
	}
	actor, err := h.caller(r)
	if err != nil {
		return err
	}
	if err := h.Collaborators.RemoveFromOrg(ctx, org, user, actor); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

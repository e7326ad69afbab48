package orgs

import (
	"errors"
	"net/http"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/store"
)

// caller returns the authenticated user's account.
func (h *Handler) caller(r *http.Request) (*accounts.Account, error) {
	return accounts.ByID(r.Context(), h.Service.DB, auth.PrincipalFrom(r.Context()).UserID())
}

// writeMembership answers a membership; store.ErrNotFound is a 404.
func writeMembership(w http.ResponseWriter, r *http.Request, m *Membership, err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return apierr.NotFound()
	}
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toMembershipJSON(httpapi.BaseURL(r.Context()), m))
	return nil
}

func (h *Handler) getMembership(w http.ResponseWriter, r *http.Request) error {
	u, err := h.pathUser(r)
	if err != nil {
		return err
	}
	m, err := h.Service.GetMembership(r.Context(), accounts.OrgFrom(r.Context()), u)
	return writeMembership(w, r, m, err)
}

// membershipRequest is the body of PUT /orgs/{org}/memberships/{username}.
type membershipRequest struct {
	Role *string `json:"role"`
}

// setMembership answers PUT /orgs/{org}/memberships/{username}: a member
// gets the role at once; anyone else is invited with it (pending).
func (h *Handler) setMembership(w http.ResponseWriter, r *http.Request) error {
	var body membershipRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	role := accounts.RoleMember
	if body.Role != nil {
		switch *body.Role {
		case "admin":
			role = accounts.RoleOwner
		case "member":
		default:
			return apierr.Invalid("Membership", "role", apierr.CodeInvalid)
		}
	}
	u, err := h.pathUser(r)
	if err != nil {
		return err
	}
	actor, err := h.caller(r)
	if err != nil {
		return err
	}
	m, err := h.Service.SetMembership(r.Context(), accounts.OrgFrom(r.Context()), u, actor, role)
	return writeMembership(w, r, m, err)
}

// removeMembership answers DELETE /orgs/{org}/memberships/{username}
// (a member or an invitation) and DELETE /orgs/{org}/members/{username}.
func (h *Handler) removeMembership(w http.ResponseWriter, r *http.Request) error {
	u, err := h.pathUser(r)
	if err != nil {
		return err
	}
	actor, err := h.caller(r)
	if err != nil {
		return err
	}
	err = h.Service.RemoveMembership(r.Context(), accounts.OrgFrom(r.Context()), u, actor)
	if errors.Is(err, store.ErrNotFound) {
		return apierr.NotFound()
	}
	if err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

// removeMember answers DELETE /orgs/{org}/members/{username}: as
// removing the membership, but an invitation is not a member (404).
func (h *Handler) removeMember(w http.ResponseWriter, r *http.Request) error {
	u, err := h.pathUser(r)
	if err != nil {
		return err
	}
	role, err := accounts.MemberRole(r.Context(), h.Service.DB, accounts.OrgFrom(r.Context()).ID, u.ID)
	if err != nil {
		return err
	}
	if role == "" {
		return apierr.NotFound()
	}
	return h.removeMembership(w, r)
}

func (h *Handler) listInvitations(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	list, total, err := h.Service.Invitations(r.Context(), accounts.OrgFrom(r.Context()), page.Limit(), page.Offset())
	if err != nil {
		return err
	}
	base := httpapi.BaseURL(r.Context())
	out := make([]invitationJSON, 0, len(list))
	for _, m := range list {
		out = append(out, toInvitationJSON(base, m))
	}
	httpapi.SetLinks(w, r, page, total)
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// listOwnMemberships answers GET /user/memberships/orgs (state: active,
// pending, or both when absent).
func (h *Handler) listOwnMemberships(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	state := r.URL.Query().Get("state")
	if state != "" && state != StateActive && state != StatePending {
		return apierr.Invalid("", "state", apierr.CodeInvalid)
	}
	user, err := h.caller(r)
	if err != nil {
		return err
	}
	list, err := h.Service.UserMemberships(r.Context(), user, state, page.Limit(), page.Offset())
	if err != nil {
		return err
	}
	base := httpapi.BaseURL(r.Context())
	out := make([]membershipJSON, 0, len(list))
	for _, m := range list {
		out = append(out, toMembershipJSON(base, m))
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h *Handler) getOwnMembership(w http.ResponseWriter, r *http.Request) error {
	user, err := h.caller(r)
	if err != nil {
		return err
	}
	m, err := h.Service.GetMembership(r.Context(), accounts.OrgFrom(r.Context()), user)
	return writeMembership(w, r, m, err)
}

// acceptRequest is the body of PATCH /user/memberships/orgs/{org}.
type acceptRequest struct {
	State *string `json:"state"`
}

// acceptMembership answers PATCH /user/memberships/orgs/{org}: the state
// "active" accepts a pending invitation.
func (h *Handler) acceptMembership(w http.ResponseWriter, r *http.Request) error {
	var body acceptRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	switch {
	case body.State == nil:
		return apierr.Invalid("Membership", "state", apierr.CodeMissingField)
	case *body.State != StateActive:
		return apierr.Invalid("Membership", "state", apierr.CodeInvalid)
	}
	user, err := h.caller(r)
	if err != nil {
		return err
	}
	m, err := h.Service.Accept(r.Context(), accounts.OrgFrom(r.Context()), user)
	return writeMembership(w, r, m, err)
}

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

// membersRead is what a fine-grained token needs to see concealed
// memberships.
var membersRead = auth.Perm("members:read")

// isMember reports whether the caller sees the route's organization from
// inside: a member or owner (the guard's role; installation tokens on it
// too), with, for a fine-grained token, the Members permission.
func isMember(r *http.Request) bool {
	p := auth.PrincipalFrom(r.Context())
	if p.FineGrained() && !p.Token.Grant.Satisfies(membersRead) {
		return false
	}
	return auth.RoleFrom(r.Context()) >= auth.RoleRead
}

// memberFilter reads the filter and role of GET /orgs/{org}/members: a
// caller outside the organization sees public members only, and only
// owners filter on two-factor authentication.
func memberFilter(r *http.Request, page httpapi.Page) (accounts.MemberFilter, error) {
	q := r.URL.Query()
	f := accounts.MemberFilter{PublicOnly: !isMember(r), Limit: page.Limit(), Offset: page.Offset()}
	var fields apierr.Fields
	switch q.Get("filter") {
	case "", "all":
	case "2fa_disabled":
		f.NoTwoFactor = isMember(r) && auth.RoleFrom(r.Context()) >= auth.RoleAdmin
	default:
		fields.Add("", "filter", apierr.CodeInvalid)
	}
	switch q.Get("role") {
	case "", "all":
	case "admin":
		f.Role = accounts.RoleOwner
	case "member":
		f.Role = accounts.RoleMember
	default:
		fields.Add("", "role", apierr.CodeInvalid)
	}
	return f, fields.Err()
}

// writeMembers answers a page of members as simple users.
func (h *Handler) writeMembers(w http.ResponseWriter, r *http.Request, page httpapi.Page, f accounts.MemberFilter) error {
	list, total, err := accounts.Members(r.Context(), h.Service.DB, accounts.OrgFrom(r.Context()).ID, f)
	if err != nil {
		return err
	}
	base := httpapi.BaseURL(r.Context())
	out := make([]accounts.SimpleUser, 0, len(list))
	for _, a := range list {
		out = append(out, accounts.ToSimpleUser(base, a))
	}
	httpapi.SetLinks(w, r, page, total)
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h *Handler) listMembers(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	f, err := memberFilter(r, page)
	if err != nil {
		return err
	}
	return h.writeMembers(w, r, page, f)
}

func (h *Handler) listPublicMembers(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	return h.writeMembers(w, r, page, accounts.MemberFilter{PublicOnly: true, Limit: page.Limit(), Offset: page.Offset()})
}

// pathUser returns the account {username} names; a 404 for none.
func (h *Handler) pathUser(r *http.Request) (*accounts.Account, error) {
	u, err := accounts.ByLogin(r.Context(), h.Service.DB, r.PathValue("username"))
	if errors.Is(err, store.ErrNotFound) || (err == nil && u.IsOrg()) {
		return nil, apierr.NotFound()
	}
	return u, err
}

// checkMember answers GET /orgs/{org}/members/{username}: to a member of
// the organization 204 when the user is a member too and 404 when not; to
// anyone else a 302 to the public membership check, as the platform.
func (h *Handler) checkMember(w http.ResponseWriter, r *http.Request) error {
	org := accounts.OrgFrom(r.Context())
	if !isMember(r) {
		w.Header().Set("Location", httpapi.LinkURL(r, "/orgs/"+org.Login+"/public_members/"+r.PathValue("username"), nil))
		w.WriteHeader(http.StatusFound)
		return nil
	}
	u, err := h.pathUser(r)
	if err != nil {
		return err
	}
	role, err := accounts.MemberRole(r.Context(), h.Service.DB, org.ID, u.ID)
	if err != nil {
		return err
	}
	if role == "" {
		return apierr.NotFound()
	}
	httpapi.NoContent(w)
	return nil
}

// checkPublicMember answers 204 when the user shows a membership of the
// organization, 404 otherwise.
func (h *Handler) checkPublicMember(w http.ResponseWriter, r *http.Request) error {
	u, err := h.pathUser(r)
	if err != nil {
		return err
	}
	public, err := accounts.IsPublicMember(r.Context(), h.Service.DB, accounts.OrgFrom(r.Context()).ID, u.ID)
	if err != nil {
		return err
	}
	if !public {
		return apierr.NotFound()
	}
	httpapi.NoContent(w)
	return nil
}

func (h *Handler) publicize(w http.ResponseWriter, r *http.Request) error {
	return h.setPublic(w, r, true)
}

func (h *Handler) conceal(w http.ResponseWriter, r *http.Request) error {
	return h.setPublic(w, r, false)
}

// setPublic shows or conceals the caller's own membership: 204; a 403
// for another user's membership, which nobody may change.
func (h *Handler) setPublic(w http.ResponseWriter, r *http.Request, public bool) error {
	u, err := h.pathUser(r)
	if err != nil {
		return err
	}
	if u.ID != auth.PrincipalFrom(r.Context()).UserID() {
		return apierr.Forbidden("You can only publicize or conceal your own membership.")
	}
	err = accounts.SetMemberPublic(r.Context(), h.Service.DB, accounts.OrgFrom(r.Context()).ID, u.ID, public)
	if errors.Is(err, store.ErrNotFound) {
		return apierr.Forbidden("You are not a member of this organization.")
	}
	if err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

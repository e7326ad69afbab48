package orgs

import (
	"net/http"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
)

// writeOrgs answers a list of organizations as organization-simple.
func writeOrgs(w http.ResponseWriter, r *http.Request, list []*accounts.Account) {
	base := httpapi.BaseURL(r.Context())
	out := make([]accounts.SimpleOrg, 0, len(list))
	for _, a := range list {
		out = append(out, accounts.ToSimpleOrg(base, a))
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
}

// listAllOrgs answers GET /organizations: every organization of the
// server in the order of their ids, from the id after `since`, with a
// Link to the next page (since the page's last id).
func (h *Handler) listAllOrgs(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	since, err := httpapi.ParseSince(r)
	if err != nil {
		return err
	}
	list, err := accounts.OrgsSince(r.Context(), h.Service.DB, since, page.PerPage)
	if err != nil {
		return err
	}
	if len(list) > 0 {
		httpapi.SetNextSince(w, r, page, len(list), list[len(list)-1].ID)
	}
	writeOrgs(w, r, list)
	return nil
}

// listOwnOrgs answers GET /user/orgs: the organizations the caller
// belongs to, concealed memberships included. Classic and OAuth tokens
// need the user or read:org scope (403 otherwise, as the platform); a
// fine-grained token sees only its resource owner.
func (h *Handler) listOwnOrgs(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	p := auth.PrincipalFrom(r.Context())
	if p.ScopeBased() && !p.Token.Scopes.GrantsAny([]string{"user", "read:org"}) {
		return apierr.Forbidden("Listing your organizations needs the user or read:org scope.")
	}
	list, err := accounts.OrgsOfMember(r.Context(), h.Service.DB, p.UserID(), false, page.Limit(), page.Offset())
	if err != nil {
		return err
	}
	if p.FineGrained() {
		list = onlyResourceOwner(list, p.Token.ResourceOwnerID)
	}
	writeOrgs(w, r, list)
	return nil
}

// onlyResourceOwner keeps the organization a fine-grained token is for.
func onlyResourceOwner(list []*accounts.Account, ownerID int64) []*accounts.Account {
	out := []*accounts.Account{}
	for _, a := range list {
		if a.ID == ownerID {
			out = append(out, a)
		}
	}
	return out
}

// listUserOrgs answers GET /users/{username}/orgs: the organizations
// whose membership the user shows, whoever asks.
func (h *Handler) listUserOrgs(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	list, err := accounts.OrgsOfMember(r.Context(), h.Service.DB, accounts.UserFrom(r.Context()).ID, true, page.Limit(), page.Offset())
	if err != nil {
		return err
	}
	writeOrgs(w, r, list)
	return nil
}

// deleteOrg answers DELETE /orgs/{org} (owners): 202 with an empty
// object; the organization and its repositories are deleted in the
// background (see Deleter).
func (h *Handler) deleteOrg(w http.ResponseWriter, r *http.Request) error {
	actor, err := h.caller(r)
	if err != nil {
		return err
	}
	if err := h.Service.RequestDeletion(r.Context(), accounts.OrgFrom(r.Context()), actor); err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusAccepted, struct{}{})
	return nil
}

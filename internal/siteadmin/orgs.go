package siteadmin

import (
	"context"
	"errors"
	"net/http"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/store"
)

// NewOrg is what POST /admin/organizations creates.
type NewOrg struct {
	Login       string
	Admin       string // the login of the user who owns it
	ProfileName string
}

// CreateOrg creates the organization with the admin user as its owner,
// in one transaction. A login invalid or taken is a 422, and so is an
// admin who is not a user. (The platform's description has no
// organization created event, which forgeapi therefore does not send.)
func (s *Service) CreateOrg(ctx context.Context, n NewOrg) (*accounts.Account, error) {
	var org *accounts.Account
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		owner, err := accounts.UserByLogin(ctx, tx, n.Admin)
		if errors.Is(err, store.ErrNotFound) {
			return apierr.Invalid("Organization", "admin", apierr.CodeInvalid)
		}
		if err != nil {
			return err
		}
		org, err = accounts.Create(ctx, tx, accounts.NewAccount{Type: accounts.TypeOrg, Login: n.Login, Name: n.ProfileName})
		if err != nil {
			return err
		}
		return accounts.SetMember(ctx, tx, org.ID, owner.ID, accounts.RoleOwner)
	})
	return org, err
}

// newOrgRequest is the body of POST /admin/organizations.
type newOrgRequest struct {
	Login       *string `json:"login"`
	Admin       *string `json:"admin"`
	ProfileName *string `json:"profile_name"`
}

// createOrg serves POST /admin/organizations: 201 with the organization.
func (h *Handler) createOrg(w http.ResponseWriter, r *http.Request) error {
	var req newOrgRequest
	if err := httpapi.DecodeJSON(r, &req); err != nil {
		return err
	}
	var fields apierr.Fields
	if req.Login == nil {
		fields.Add("Organization", "login", apierr.CodeMissingField)
	}
	if req.Admin == nil {
		fields.Add("Organization", "admin", apierr.CodeMissingField)
	}
	if err := fields.Err(); err != nil {
		return err
	}
	n := NewOrg{Login: *req.Login, Admin: *req.Admin}
	if req.ProfileName != nil {
		n.ProfileName = *req.ProfileName
	}
	org, err := h.Service.CreateOrg(r.Context(), n)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusCreated, accounts.ToSimpleOrg(httpapi.BaseURL(r.Context()), org))
	return nil
}

package accounts

import (
	"net/http"
	"strings"

	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/store"
)

// The length limits of profile fields, in characters.
const (
	MaxNameLength        = 255
	MaxProfileLength     = 255 // company, blog, location, email, billing_email
	MaxBioLength         = 160
	MaxTwitterLength     = 15
	MaxOrgDescriptionLen = 1000
)

// profileRequest holds the profile fields PATCH /user and PATCH
// /orgs/{org} share; nil fields were not sent.
type profileRequest struct {
	Name            *string `json:"name"`
	Email           *string `json:"email"`
	Blog            *string `json:"blog"`
	TwitterUsername *string `json:"twitter_username"`
	Company         *string `json:"company"`
	Location        *string `json:"location"`
}

// check adds the field errors of the shared fields to f.
func (p profileRequest) check(f *apierr.Fields, resource string) {
	for _, c := range []struct {
		field string
		v     *string
		max   int
	}{{"name", p.Name, MaxNameLength}, {"email", p.Email, MaxProfileLength}, {"blog", p.Blog, MaxProfileLength},
		{"twitter_username", p.TwitterUsername, MaxTwitterLength}, {"company", p.Company, MaxProfileLength},
		{"location", p.Location, MaxProfileLength}} {
		if c.v != nil {
			f.MaxLength(resource, c.field, *c.v, c.max)
		}
	}
	if p.Email != nil && *p.Email != "" && !strings.Contains(*p.Email, "@") {
		f.Add(resource, "email", apierr.CodeInvalid)
	}
}

// apply sets the shared fields that were sent on the profile.
func (p profileRequest) apply(prof *Profile) {
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	set(&prof.Blog, p.Blog)
	set(&prof.TwitterUsername, p.TwitterUsername)
	set(&prof.Company, p.Company)
	set(&prof.Location, p.Location)
}

// userUpdateRequest is the body of PATCH /user.
type userUpdateRequest struct {
	profileRequest
	Hireable *bool   `json:"hireable"`
	Bio      *string `json:"bio"`
}

// updateAuthenticatedUser answers PATCH /user: the profile fields sent
// change (the public email must be one of the user's addresses); the
// answer is the private user object.
func (h *Handler) updateAuthenticatedUser(w http.ResponseWriter, r *http.Request) error {
	var body userUpdateRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	var f apierr.Fields
	body.check(&f, "User")
	if body.Bio != nil {
		f.MaxLength("User", "bio", *body.Bio, MaxBioLength)
	}
	if err := f.Err(); err != nil {
		return err
	}
	id := auth.PrincipalFrom(r.Context()).UserID()
	err := h.DB.Tx(r.Context(), func(tx *store.Tx) error {
		if e := body.Email; e != nil && *e != "" {
			mine, err := HasEmail(r.Context(), tx, id, *e)
			if err != nil {
				return err
			}
			if !mine {
				return apierr.Custom("User", "email", "%s is not one of your email addresses (see /user/emails).", *e)
			}
		}
		prof, err := ProfileOf(r.Context(), tx, id)
		if err != nil {
			return err
		}
		body.apply(&prof)
		if body.Bio != nil {
			prof.Bio = *body.Bio
		}
		if body.Hireable != nil {
			prof.Hireable = body.Hireable
		}
		if err := SaveProfile(r.Context(), tx, id, prof); err != nil {
			return err
		}
		_, err = Update(r.Context(), tx, id, AccountUpdate{Name: body.Name, Email: body.Email})
		return err
	})
	if err != nil {
		return err
	}
	return h.getAuthenticatedUser(w, r)
}

// orgUpdateRequest is the body of PATCH /orgs/{org}. The platform's
// other settings (pages, projects, security products for new
// repositories) are not kept by forgeapi and are ignored.
type orgUpdateRequest struct {
	profileRequest
	Description                  *string `json:"description"`
	BillingEmail                 *string `json:"billing_email"`
	DefaultRepositoryPermission  *string `json:"default_repository_permission"`
	MembersCanCreateRepositories *bool   `json:"members_can_create_repositories"`
}

// updateOrg answers PATCH /orgs/{org} (owners): profile fields, the
// members' base repository permission (which takes effect on every
// repository of the organization at once) and whether members may
// create repositories.
func (h *Handler) updateOrg(w http.ResponseWriter, r *http.Request) error {
	var body orgUpdateRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	var f apierr.Fields
	body.check(&f, "Organization")
	if body.Description != nil {
		f.MaxLength("Organization", "description", *body.Description, MaxOrgDescriptionLen)
	}
	if body.BillingEmail != nil {
		f.MaxLength("Organization", "billing_email", *body.BillingEmail, MaxProfileLength)
	}
	if p := body.DefaultRepositoryPermission; p != nil && *p != BaseNone && *p != BaseRead && *p != BaseWrite && *p != BaseAdmin {
		f.Add("Organization", "default_repository_permission", apierr.CodeInvalid)
	}
	if err := f.Err(); err != nil {
		return err
	}
	org := OrgFrom(r.Context())
	var updated *Account
	err := h.DB.Tx(r.Context(), func(tx *store.Tx) error {
		prof, err := ProfileOf(r.Context(), tx, org.ID)
		if err != nil {
			return err
		}
		body.apply(&prof)
		if body.BillingEmail != nil {
			prof.BillingEmail = *body.BillingEmail
		}
		if err := SaveProfile(r.Context(), tx, org.ID, prof); err != nil {
			return err
		}
		updated, err = Update(r.Context(), tx, org.ID, AccountUpdate{Name: body.Name, Email: body.Email,
			Description: body.Description, BaseRepoPermission: body.DefaultRepositoryPermission,
			MembersCanCreateRepos: body.MembersCanCreateRepositories})
		if err != nil || h.OrgUpdated == nil {
			return err
		}
		return h.OrgUpdated(r.Context(), tx, org, updated)
	})
	if err != nil {
		return err
	}
	return h.writeOrg(w, r, updated)
}

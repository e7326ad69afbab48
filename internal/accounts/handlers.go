package accounts

import (
	"context"
	"net/http"

	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// Handler serves the accounts endpoints.
type Handler struct {
	DB *store.DB
	// OrgUpdated, when set, runs in the transaction of PATCH /orgs/{org}
	// with the organization before and after the change (the audit log
	// records the settings changed).
	OrgUpdated func(ctx context.Context, tx store.Q, before, after *Account) error
}

func (h *Handler) getAuthenticatedUser(w http.ResponseWriter, r *http.Request) error {
	p := auth.PrincipalFrom(r.Context())
	a, err := ByID(r.Context(), h.DB, p.Account.ID)
	if err != nil {
		return err
	}
	u, err := h.toUser(r.Context(), a)
	if err != nil {
		return err
	}
	c, err := countsOf(r.Context(), h.DB, a.ID)
	if err != nil {
		return err
	}
	u.UserViewType = "private"
	httpapi.WriteJSON(w, http.StatusOK, PrivateUser{User: u, TotalPrivateRepos: c.privateRepos,
		OwnedPrivateRepos: c.privateRepos, TwoFactorAuthentication: a.HasTOTP})
	return nil
}

func (h *Handler) getUser(w http.ResponseWriter, r *http.Request) error {
	u, err := h.toUser(r.Context(), UserFrom(r.Context()))
	if err != nil {
		return err
	}
	httpapi.SetLastModified(w, u.UpdatedAt.Time)
	httpapi.WriteJSON(w, http.StatusOK, u)
	return nil
}

func (h *Handler) getOrg(w http.ResponseWriter, r *http.Request) error {
	org := OrgFrom(r.Context())
	httpapi.SetLastModified(w, org.UpdatedAt)
	return h.writeOrg(w, r, org)
}

// writeOrg answers the organization as organization-full, with the
// owners' fields to its owners.
func (h *Handler) writeOrg(w http.ResponseWriter, r *http.Request, a *Account) error {
	c, err := countsOf(r.Context(), h.DB, a.ID)
	if err != nil {
		return err
	}
	prof, err := ProfileOf(r.Context(), h.DB, a.ID)
	if err != nil {
		return err
	}
	base := httpapi.BaseURL(r.Context())
	so := ToSimpleOrg(base, a)
	out := Organization{
		Login: so.Login, ID: so.ID, NodeID: so.NodeID, URL: so.URL, ReposURL: so.ReposURL, EventsURL: so.EventsURL,
		HooksURL: so.HooksURL, IssuesURL: so.IssuesURL, MembersURL: so.MembersURL, PublicMembersURL: so.PublicMembersURL,
		AvatarURL: so.AvatarURL, Description: so.Description, Name: optional(a.Name), Email: optional(a.Email),
		Company: optional(prof.Company), Blog: prof.Blog, Location: optional(prof.Location), TwitterUsername: optional(prof.TwitterUsername),
		HasOrganizationProjects: true, HasRepositoryProjects: true, PublicRepos: c.publicRepos,
		Followers: c.followers, Following: c.following, HTMLURL: HTMLURL(base, a),
		CreatedAt: wire.T(a.CreatedAt), UpdatedAt: wire.T(a.UpdatedAt), Type: a.Type,
	}
	if auth.RoleFrom(r.Context()) >= auth.RoleAdmin {
		out.OrgOwnerFields = &OrgOwnerFields{TotalPrivateRepos: c.privateRepos, OwnedPrivateRepos: c.privateRepos,
			BillingEmail: optional(prof.BillingEmail), DefaultRepositoryPermission: a.BaseRepoPermission,
			MembersCanCreateRepositories: a.MembersCanCreateRepos}
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h *Handler) toUser(ctx context.Context, a *Account) (User, error) {
	c, err := countsOf(ctx, h.DB, a.ID)
	if err != nil {
		return User{}, err
	}
	prof, err := ProfileOf(ctx, h.DB, a.ID)
	if err != nil {
		return User{}, err
	}
	return User{
		SimpleUser: ToSimpleUser(httpapi.BaseURL(ctx), a), UserViewType: "public",
		Name: optional(a.Name), Email: optional(a.Email),
		Company: optional(prof.Company), Blog: prof.Blog, Location: optional(prof.Location), Hireable: prof.Hireable,
		Bio: optional(prof.Bio), TwitterUsername: optional(prof.TwitterUsername),
		PublicRepos: c.publicRepos, Followers: c.followers, Following: c.following,
		CreatedAt: wire.T(a.CreatedAt), UpdatedAt: wire.T(a.UpdatedAt),
	}, nil
}

type counts struct {
	publicRepos, privateRepos, followers, following int
}

func countsOf(ctx context.Context, q store.Q, id int64) (counts, error) {
	var c counts
	err := q.QueryRowContext(ctx, `
		SELECT (SELECT count(*) FROM repositories WHERE owner_id = $1 AND NOT private),
		       (SELECT count(*) FROM repositories WHERE owner_id = $1 AND private),
		       (SELECT count(*) FROM follows WHERE followee_id = $1),
		       (SELECT count(*) FROM follows WHERE follower_id = $1)`, id).
		Scan(&c.publicRepos, &c.privateRepos, &c.followers, &c.following)
	return c, err
}

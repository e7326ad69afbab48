package collaborators

import (
	"context"
	"errors"
	"net/http"
	"slices"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// access is one user's permission on a repository and where it comes
// from.
type access struct {
	userID int64
	perm   string
	direct bool // the owner of a user's repository, or a collaborator
	member bool // a member of the owning organization
}

// accessList returns everyone with access to the repository, by user id:
// the owner of a user's repository (admin), the owning organization's
// owners (admin) and members (its base permission), collaborators, and
// the members of teams that hold a permission on it, and the holders of
// organization roles; each with the highest permission of these.
func accessList(ctx context.Context, q store.Q, repo *repos.Repository) ([]access, error) {
	byUser := map[int64]*access{}
	give := func(userID int64, perm string, direct, member bool) {
		a := byUser[userID]
		if a == nil {
			a = &access{userID: userID}
			byUser[userID] = a
		}
		a.perm, a.direct, a.member = higher(a.perm, perm), a.direct || direct, a.member || member
	}
	if !repo.Owner.IsOrg() {
		give(repo.Owner.ID, repos.CollaboratorAdmin, true, false)
	} else if err := scanPairs(ctx, q, `SELECT user_id, role FROM org_members WHERE org_id = $1`, repo.Owner.ID, func(id int64, role string) {
		perm := basePermission(repo.Owner)
		if role == accounts.RoleOwner {
			perm = repos.CollaboratorAdmin
		}
		give(id, perm, false, true)
	}); err != nil {
		return nil, err
	}
	if err := scanPairs(ctx, q, `SELECT user_id, permission FROM repo_collaborators WHERE repository_id = $1`, repo.ID, func(id int64, perm string) {
		give(id, perm, true, false)
	}); err != nil {
		return nil, err
	}
	// Members of the teams that hold a permission on it (not direct).
	if err := scanPairs(ctx, q, `SELECT tm.user_id, tr.permission FROM team_repos tr JOIN team_members tm ON tm.team_id = tr.team_id
		WHERE tr.repository_id = $1`, repo.ID, func(id int64, perm string) {
		give(id, perm, false, true)
	}); err != nil {
		return nil, err
	}
	// Holders of organization roles, which reach every repository of it.
	if err := scanPairs(ctx, q, orgRoleHolders, repo.Owner.ID, func(id int64, base string) {
		give(id, fromRoleName(base), false, true)
	}); err != nil {
		return nil, err
	}
	out := make([]access, 0, len(byUser))
	for _, a := range byUser {
		if a.perm != "" {
			out = append(out, *a)
		}
	}
	slices.SortFunc(out, func(a, b access) int { return int(a.userID - b.userID) })
	return out, nil
}

// orgRoleHolders is the query of the organization's ($1) members who
// hold a role with a base role (read, triage, write, maintain, admin),
// directly or through a team or a team above theirs: the organization
// roles' part of repo_grants from the organization's side.
const orgRoleHolders = `SELECT u.user_id, o.base_role FROM org_role_users u JOIN org_roles o ON o.id = u.role_id
		WHERE u.org_id = $1 AND o.base_role IS NOT NULL
	UNION ALL
	SELECT tm.user_id, o.base_role FROM teams t JOIN org_role_teams rt ON rt.team_id = t.id JOIN org_roles o ON o.id = rt.role_id
		JOIN team_ancestors ta ON ta.ancestor_id = t.id JOIN team_members tm ON tm.team_id = ta.team_id
		WHERE t.org_id = $1 AND o.base_role IS NOT NULL`

// scanPairs runs a query of (id, text) rows with one argument.
func scanPairs(ctx context.Context, q store.Q, query string, arg int64, each func(int64, string)) error {
	rows, err := q.QueryContext(ctx, query, arg)
	if err != nil {
		return store.Normalize(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var s string
		if err := rows.Scan(&id, &s); err != nil {
			return store.Normalize(err)
		}
		each(id, s)
	}
	return store.Normalize(rows.Err())
}

// list answers GET /repos/{owner}/{repo}/collaborators: affiliation
// outside (collaborators who are not members of the owning
// organization), direct (collaborators, and the owner of a user's
// repository) or all (everyone with access, the default); permission
// keeps those whose highest permission it is.
func (h *Handler) list(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	affiliation, perm := q.Get("affiliation"), q.Get("permission")
	var f apierr.Fields
	if affiliation != "" && affiliation != "outside" && affiliation != "direct" && affiliation != "all" {
		f.Add("", "affiliation", apierr.CodeInvalid)
	}
	if perm != "" && !slices.Contains(Permissions, perm) {
		f.Add("", "permission", apierr.CodeInvalid)
	}
	if err := f.Err(); err != nil {
		return err
	}
	ctx := r.Context()
	repo := repos.From(ctx)
	all, err := accessList(ctx, h.Service.DB, repo)
	if err != nil {
		return err
	}
	kept := slices.DeleteFunc(all, func(a access) bool {
		return affiliation == "direct" && !a.direct || affiliation == "outside" && (a.member || !a.direct) ||
			perm != "" && a.perm != perm
	})
	base := httpapi.BaseURL(ctx)
	out := []collaboratorJSON{}
	for _, a := range httpapi.Slice(page, kept) {
		user, err := accounts.ByID(ctx, h.Service.DB, a.userID)
		if err != nil {
			return err
		}
		out = append(out, toCollaboratorJSON(base, user, a.perm))
	}
	httpapi.SetLinks(w, r, page, len(kept))
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// permissionOf is the user's highest permission on the repository ("" for
// none), from the same sources as accessList.
func permissionOf(ctx context.Context, q store.Q, repo *repos.Repository, userID int64) (string, error) {
	if repo.Owner.ID == userID {
		return repos.CollaboratorAdmin, nil
	}
	perm, err := repos.GrantedPermission(ctx, q, repo.ID, userID)
	if err != nil || !repo.Owner.IsOrg() {
		return perm, err
	}
	switch role, err := accounts.MemberRole(ctx, q, repo.Owner.ID, userID); {
	case err != nil:
		return "", err
	case role == accounts.RoleOwner:
		return repos.CollaboratorAdmin, nil
	case role == accounts.RoleMember:
		return higher(perm, basePermission(repo.Owner)), nil
	}
	return perm, nil
}

// user returns the user {username} names: a 404 for none or an
// organization.
func (h *Handler) user(r *http.Request) (*accounts.Account, error) {
	u, err := accounts.ByLogin(r.Context(), h.Service.DB, r.PathValue("username"))
	if errors.Is(err, store.ErrNotFound) || err == nil && u.IsOrg() {
		return nil, apierr.NotFound()
	}
	return u, err
}

// check answers GET .../collaborators/{username}: 204 for a user with
// access, 404 otherwise.
func (h *Handler) check(w http.ResponseWriter, r *http.Request) error {
	u, err := h.user(r)
	if err != nil {
		return err
	}
	perm, err := permissionOf(r.Context(), h.Service.DB, repos.From(r.Context()), u.ID)
	if err != nil {
		return err
	}
	if perm == "" {
		return apierr.NotFound()
	}
	httpapi.NoContent(w)
	return nil
}

// requestedPermission is the collaborator permission a request names: one of
// Permissions, or the name of a custom repository role of the owning
// organization, which gives its base role; anything else is a 422.
func (h *Handler) requestedPermission(ctx context.Context, repo *repos.Repository, name string) (string, error) {
	if slices.Contains(Permissions, name) {
		return name, nil
	}
	if repo.Owner.IsOrg() {
		perm, err := repos.CustomRolePermission(ctx, h.Service.DB, repo.Owner.ID, name)
		if err != nil || perm != "" {
			return perm, err
		}
	}
	return "", apierr.Invalid("Collaborator", "permission", apierr.CodeInvalid)
}

// permission answers GET .../collaborators/{username}/permission: the
// user's legacy permission and role name (read for anyone on a public
// repository), with the user as a collaborator object.
func (h *Handler) permission(w http.ResponseWriter, r *http.Request) error {
	u, err := h.user(r)
	if err != nil {
		return err
	}
	repo := repos.From(r.Context())
	perm, err := permissionOf(r.Context(), h.Service.DB, repo, u.ID)
	if err != nil {
		return err
	}
	if !repo.Private {
		perm = higher(perm, repos.CollaboratorPull)
	}
	httpapi.WriteJSON(w, http.StatusOK, permissionJSON{Permission: LegacyPermission(perm), RoleName: RoleName(perm),
		User: toCollaboratorJSON(httpapi.BaseURL(r.Context()), u, perm)})
	return nil
}

// addRequest is the body of PUT .../collaborators/{username}.
type addRequest struct {
	Permission *string `json:"permission"`
}

// add answers PUT .../collaborators/{username}: 201 with the invitation
// of a user who has to accept it, 204 when a collaborator's permission
// changed or a member of the owning organization was added at once.
func (h *Handler) add(w http.ResponseWriter, r *http.Request) error {
	var body addRequest
	if r.ContentLength != 0 {
		if err := httpapi.DecodeJSON(r, &body); err != nil {
			return err
		}
	}
	ctx := r.Context()
	perm := repos.CollaboratorPush
	if body.Permission != nil {
		var err error
		if perm, err = h.requestedPermission(ctx, repos.From(ctx), *body.Permission); err != nil {
			return err
		}
	}
	u, err := h.user(r)
	if err != nil {
		return err
	}
	actor, err := accounts.ByID(ctx, h.Service.DB, auth.PrincipalFrom(ctx).UserID())
	if err != nil {
		return err
	}
	repo := repos.From(ctx)
	inv, err := h.Service.Set(ctx, repo, u, actor, perm)
	if err != nil || inv == nil {
		if err == nil {
			httpapi.NoContent(w)
		}
		return err
	}
	j, err := toInvitationJSON(ctx, h.Service.DB, httpapi.BaseURL(ctx), inv, auth.RoleFrom(ctx))
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusCreated, j)
	return nil
}

// remove answers DELETE .../collaborators/{username}: an admin removes
// anyone, a collaborator themselves (403 otherwise); a user who is
// neither a collaborator nor invited is a 404.
func (h *Handler) remove(w http.ResponseWriter, r *http.Request) error {
	u, err := h.user(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	caller := auth.PrincipalFrom(ctx).UserID()
	if auth.RoleFrom(ctx) < auth.RoleAdmin && u.ID != caller {
		return apierr.Forbidden("Must have admin rights to Repository.")
	}
	actor, err := accounts.ByID(ctx, h.Service.DB, caller)
	if err != nil {
		return err
	}
	if err := h.Service.Remove(ctx, repos.From(ctx), u, actor); errors.Is(err, store.ErrNotFound) {
		return apierr.NotFound()
	} else if err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

// writeInvitations answers a page of invitations.
func (h *Handler) writeInvitations(w http.ResponseWriter, r *http.Request, byInvitee bool, id int64) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	list, err := invitations(ctx, h.Service.DB, byInvitee, id, page.Limit(), page.Offset())
	if err != nil {
		return err
	}
	more := len(list) > page.Limit()
	base := httpapi.BaseURL(ctx)
	out := make([]invitationJSON, 0, len(list))
	for _, inv := range list[:min(len(list), page.Limit())] {
		role := auth.RoleFrom(ctx)
		if byInvitee {
			role = auth.RoleNone // the invitee has no access yet
		}
		j, err := toInvitationJSON(ctx, h.Service.DB, base, inv, role)
		if err != nil {
			return err
		}
		out = append(out, j)
	}
	httpapi.SetLinksMore(w, r, page, more)
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// repoInvitations answers GET /repos/{owner}/{repo}/invitations.
func (h *Handler) repoInvitations(w http.ResponseWriter, r *http.Request) error {
	return h.writeInvitations(w, r, false, repos.From(r.Context()).ID)
}

// userInvitations answers GET /user/repository_invitations.
func (h *Handler) userInvitations(w http.ResponseWriter, r *http.Request) error {
	return h.writeInvitations(w, r, true, auth.PrincipalFrom(r.Context()).UserID())
}

// updateInvitationRequest is the body of PATCH .../invitations/{id}.
type updateInvitationRequest struct {
	Permissions *string `json:"permissions"`
}

// updateInvitation answers PATCH /repos/{owner}/{repo}/invitations/{id}:
// the invitation with its new permission (read, triage, write, maintain,
// admin).
func (h *Handler) updateInvitation(w http.ResponseWriter, r *http.Request) error {
	id, err := httpapi.PathInt64(r, "invitation_id")
	if err != nil {
		return err
	}
	var body updateInvitationRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.Permissions == nil {
		return apierr.Invalid("RepositoryInvitation", "permissions", apierr.CodeMissingField)
	}
	perm := fromRoleName(*body.Permissions)
	if perm == "" {
		return apierr.Invalid("RepositoryInvitation", "permissions", apierr.CodeInvalid)
	}
	ctx := r.Context()
	inv, err := h.Service.UpdateInvitation(ctx, repos.From(ctx).ID, id, perm)
	if errors.Is(err, store.ErrNotFound) {
		return apierr.NotFound()
	} else if err != nil {
		return err
	}
	j, err := toInvitationJSON(ctx, h.Service.DB, httpapi.BaseURL(ctx), inv, auth.RoleFrom(ctx))
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, j)
	return nil
}

// cancelInvitation answers DELETE /repos/{owner}/{repo}/invitations/{id}.
func (h *Handler) cancelInvitation(w http.ResponseWriter, r *http.Request) error {
	repoID := repos.From(r.Context()).ID
	return h.deleteInvitation(w, r, func(inv *Invitation) bool { return inv.Repo.ID == repoID })
}

// decline answers DELETE /user/repository_invitations/{id}.
func (h *Handler) decline(w http.ResponseWriter, r *http.Request) error {
	userID := auth.PrincipalFrom(r.Context()).UserID()
	return h.deleteInvitation(w, r, func(inv *Invitation) bool { return inv.Invitee.ID == userID })
}

func (h *Handler) deleteInvitation(w http.ResponseWriter, r *http.Request, allow func(*Invitation) bool) error {
	id, err := httpapi.PathInt64(r, "invitation_id")
	if err != nil {
		return err
	}
	if err := h.Service.Delete(r.Context(), id, allow); errors.Is(err, store.ErrNotFound) {
		return apierr.NotFound()
	} else if err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

// accept answers PATCH /user/repository_invitations/{id}: the caller
// becomes a collaborator.
func (h *Handler) accept(w http.ResponseWriter, r *http.Request) error {
	id, err := httpapi.PathInt64(r, "invitation_id")
	if err != nil {
		return err
	}
	ctx := r.Context()
	user, err := accounts.ByID(ctx, h.Service.DB, auth.PrincipalFrom(ctx).UserID())
	if err != nil {
		return err
	}
	if err := h.Service.Accept(ctx, id, user); errors.Is(err, store.ErrNotFound) {
		return apierr.NotFound()
	} else if err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

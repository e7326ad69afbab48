package teams

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"forgeapi/internal/access"
	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// optionalID is a JSON id that may be null: Set reports whether the
// field was sent, null reads as 0.
type optionalID struct {
	Set bool
	ID  int64
}

// UnmarshalJSON implements json.Unmarshaler.
func (o *optionalID) UnmarshalJSON(b []byte) error {
	o.Set = true
	if string(b) == "null" {
		o.ID = 0
		return nil
	}
	return json.Unmarshal(b, &o.ID)
}

// teamRequest is the body of POST and PATCH /orgs/{org}/teams[/{team_slug}].
type teamRequest struct {
	Name                *string    `json:"name"`
	Description         *string    `json:"description"`
	Privacy             *string    `json:"privacy"`
	NotificationSetting *string    `json:"notification_setting"`
	Permission          *string    `json:"permission"`
	ParentTeamID        optionalID `json:"parent_team_id"`
	Maintainers         []string   `json:"maintainers"`
	RepoNames           []string   `json:"repo_names"`
}

func (b *teamRequest) fields() Fields {
	f := Fields{Name: b.Name, Description: b.Description, Privacy: b.Privacy, NotificationSetting: b.NotificationSetting,
		Permission: b.Permission}
	if b.ParentTeamID.Set {
		f.ParentID = &b.ParentTeamID.ID
	}
	return f
}

// team resolves {team_slug} in the organization to a team the caller can
// see (404 otherwise).
func (h *Handler) team(r *http.Request) (*Team, error) {
	ctx := r.Context()
	t, err := BySlug(ctx, h.Service.DB, accounts.OrgFrom(ctx), r.PathValue("team_slug"))
	if err != nil {
		return nil, err
	}
	ok, err := h.visible(ctx, t)
	if err != nil || !ok {
		return nil, errors.Join(err, store.ErrNotFound)
	}
	return t, nil
}

// visible reports whether the caller can see the team: owners see every
// team, members closed ones and the secret ones they belong to.
func (h *Handler) visible(ctx context.Context, t *Team) (bool, error) {
	role := auth.RoleFrom(ctx)
	if role >= auth.RoleAdmin || t.Privacy == PrivacyClosed && role >= auth.RoleRead {
		return true, nil
	}
	p := auth.PrincipalFrom(ctx)
	if p.Anonymous() {
		return false, nil
	}
	mine, err := MemberRole(ctx, h.Service.DB, t.ID, p.Account.ID)
	return mine != "", err
}

// manages reports whether the caller is an owner of the organization or
// a maintainer of the team.
func (h *Handler) manages(ctx context.Context, t *Team) (bool, error) {
	if auth.RoleFrom(ctx) >= auth.RoleAdmin {
		return true, nil
	}
	mine, err := MemberRole(ctx, h.Service.DB, t.ID, auth.PrincipalFrom(ctx).Account.ID)
	return mine == RoleMaintainer, err
}

// managedTeam is team for the routes that change it: 403 unless the
// caller manages it.
func (h *Handler) managedTeam(r *http.Request) (*Team, error) {
	t, err := h.team(r)
	if err != nil {
		return nil, err
	}
	ok, err := h.manages(r.Context(), t)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apierr.Forbidden("You must be an organization owner or team maintainer to do this.")
	}
	return t, nil
}

func (h *Handler) toFull(ctx context.Context, t *Team) (fullJSON, error) {
	parent, err := parentOf(ctx, h.Service.DB, t)
	if err != nil {
		return fullJSON{}, err
	}
	members, repoCount, err := counts(ctx, h.Service.DB, t.ID)
	if err != nil {
		return fullJSON{}, err
	}
	base := httpapi.BaseURL(ctx)
	return fullJSON{teamJSON: toTeamJSON(base, t, parent), MembersCount: members, ReposCount: repoCount,
		CreatedAt: wire.T(t.CreatedAt), UpdatedAt: wire.T(t.UpdatedAt), Organization: toOrganization(base, t.Org)}, nil
}

func (h *Handler) writeFull(w http.ResponseWriter, r *http.Request, status int, t *Team) error {
	out, err := h.toFull(r.Context(), t)
	if err != nil {
		return err
	}
	if status == http.StatusCreated {
		httpapi.WriteCreated(w, out.URL, out)
		return nil
	}
	httpapi.WriteJSON(w, status, out)
	return nil
}

// list answers GET /orgs/{org}/teams: the teams the caller can see, by
// name.
func (h *Handler) list(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	org := accounts.OrgFrom(ctx)
	all, err := orgTeams(ctx, h.Service.DB, org)
	if err != nil {
		return err
	}
	var seen []*Team
	for _, t := range all {
		if ok, err := h.visible(ctx, t); err != nil {
			return err
		} else if ok {
			seen = append(seen, t)
		}
	}
	return h.writeTeams(w, r, page, seen)
}

// writeTeams answers a page of teams as team objects.
func (h *Handler) writeTeams(w http.ResponseWriter, r *http.Request, page httpapi.Page, list []*Team) error {
	ctx := r.Context()
	base := httpapi.BaseURL(ctx)
	out := []teamJSON{}
	for _, t := range httpapi.Slice(page, list) {
		parent, err := parentOf(ctx, h.Service.DB, t)
		if err != nil {
			return err
		}
		out = append(out, toTeamJSON(base, t, parent))
	}
	httpapi.SetLinks(w, r, page, len(list))
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h *Handler) create(w http.ResponseWriter, r *http.Request) error {
	var body teamRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	ctx := r.Context()
	actor, err := h.caller(r)
	if err != nil {
		return err
	}
	t, err := h.Service.Create(ctx, accounts.OrgFrom(ctx), actor,
		New{Fields: body.fields(), Maintainers: body.Maintainers, RepoNames: body.RepoNames})
	if err != nil {
		return err
	}
	return h.writeFull(w, r, http.StatusCreated, t)
}

func (h *Handler) get(w http.ResponseWriter, r *http.Request) error {
	t, err := h.team(r)
	if err != nil {
		return err
	}
	return h.writeFull(w, r, http.StatusOK, t)
}

func (h *Handler) update(w http.ResponseWriter, r *http.Request) error {
	t, err := h.managedTeam(r)
	if err != nil {
		return err
	}
	var body teamRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	actor, err := h.caller(r)
	if err != nil {
		return err
	}
	t, err = h.Service.Update(r.Context(), t, actor, body.fields())
	if err != nil {
		return err
	}
	return h.writeFull(w, r, http.StatusOK, t)
}

func (h *Handler) delete(w http.ResponseWriter, r *http.Request) error {
	t, err := h.managedTeam(r)
	if err != nil {
		return err
	}
	actor, err := h.caller(r)
	if err != nil {
		return err
	}
	if err := h.Service.Delete(r.Context(), t, actor); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

// members answers GET .../members: the team's members by login, filtered
// by role (member, maintainer or all). As on the platform it includes the
// members of its child teams (at any depth): those who are not members of
// the team itself are listed with inherited true and role member.
func (h *Handler) members(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	roleFilter := r.URL.Query().Get("role")
	if roleFilter != "" && roleFilter != RoleMember && roleFilter != RoleMaintainer && roleFilter != "all" {
		return apierr.Invalid("", "role", apierr.CodeInvalid)
	}
	t, err := h.team(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	list, err := members(ctx, h.Service.DB, t.ID, roleFilter)
	if err != nil {
		return err
	}
	base := httpapi.BaseURL(ctx)
	out := []memberJSON{}
	for _, m := range httpapi.Slice(page, list) {
		user, err := accounts.ByID(ctx, h.Service.DB, m.userID)
		if err != nil {
			return err
		}
		out = append(out, memberJSON{SimpleUser: accounts.ToSimpleUser(base, user), Role: m.role, Inherited: m.inherited})
	}
	httpapi.SetLinks(w, r, page, len(list))
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// pathUser resolves {username}.
func (h *Handler) pathUser(r *http.Request) (*accounts.Account, error) {
	return accounts.ByLogin(r.Context(), h.Service.DB, r.PathValue("username"))
}

func (h *Handler) membershipJSON(r *http.Request, t *Team, user *accounts.Account, role, state string) membershipJSON {
	return membershipJSON{URL: toSimpleJSON(httpapi.BaseURL(r.Context()), t).URL + "/memberships/" + user.Login, Role: role, State: state}
}

func (h *Handler) getMembership(w http.ResponseWriter, r *http.Request) error {
	t, err := h.team(r)
	if err != nil {
		return err
	}
	user, err := h.pathUser(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	state := StateActive
	role, err := MemberRole(ctx, h.Service.DB, t.ID, user.ID)
	if err == nil && role == "" {
		state = StatePending
		role, err = pendingRole(ctx, h.Service.DB, t.ID, user.ID)
	}
	if err == nil && role == "" {
		// A member of a child team is a member of the team, as on the platform.
		var inherited bool
		if inherited, err = inheritedMember(ctx, h.Service.DB, t.ID, user.ID); inherited {
			state, role = StateActive, RoleMember
		}
	}
	if err != nil {
		return err
	}
	if role == "" {
		return apierr.NotFound()
	}
	httpapi.WriteJSON(w, http.StatusOK, h.membershipJSON(r, t, user, role, state))
	return nil
}

func (h *Handler) setMembership(w http.ResponseWriter, r *http.Request) error {
	t, err := h.managedTeam(r)
	if err != nil {
		return err
	}
	var body struct {
		Role *string `json:"role"`
	}
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	role := deref(body.Role, RoleMember)
	user, err := h.pathUser(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	if auth.RoleFrom(ctx) < auth.RoleAdmin {
		if orgRole, err := accounts.MemberRole(ctx, h.Service.DB, t.Org.ID, user.ID); err != nil {
			return err
		} else if orgRole == "" {
			return apierr.Forbidden("Only organization owners can add users outside the organization to a team.")
		}
	}
	actor, err := h.caller(r)
	if err != nil {
		return err
	}
	state, err := h.Service.SetMembership(ctx, t, user, actor, role)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, h.membershipJSON(r, t, user, role, state))
	return nil
}

func (h *Handler) removeMembership(w http.ResponseWriter, r *http.Request) error {
	t, err := h.managedTeam(r)
	if err != nil {
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
	if err := h.Service.RemoveMembership(r.Context(), t, user, actor); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

// pathRepo resolves {owner}/{repo} to a repository the caller can read
// and returns the caller's role on it (404 otherwise).
func (h *Handler) pathRepo(r *http.Request) (*repos.Repository, auth.Role, error) {
	ctx := r.Context()
	repo, err := repos.ByOwnerAndName(ctx, h.Service.DB, r.PathValue("owner"), r.PathValue("repo"))
	if err != nil {
		return nil, auth.RoleNone, err
	}
	role, err := access.RepoRole(ctx, h.Service.DB, auth.PrincipalFrom(ctx), repo)
	if err == nil && role == auth.RoleNone {
		err = store.ErrNotFound
	}
	return repo, role, err
}

// repos answers GET .../repos: the team's repositories the caller can
// read, by name.
func (h *Handler) repos(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	t, err := h.team(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	grants, err := repoGrants(ctx, h.Service.DB, t.ID)
	if err != nil {
		return err
	}
	p := auth.PrincipalFrom(ctx)
	type shown struct {
		repo *repos.Repository
		perm string
	}
	var list []shown
	for _, g := range grants {
		repo, err := repos.ByID(ctx, h.Service.DB, g.repoID)
		if err != nil {
			return err
		}
		if role, err := access.RepoRole(ctx, h.Service.DB, p, repo); err != nil {
			return err
		} else if role != auth.RoleNone {
			list = append(list, shown{repo, g.perm})
		}
	}
	urls := repos.URLsOf(ctx)
	out := []teamRepoJSON{}
	for _, s := range httpapi.Slice(page, list) {
		st, err := repos.StatsOf(ctx, h.Service.DB, s.repo.ID)
		if err != nil {
			return err
		}
		out = append(out, toTeamRepoJSON(urls, s.repo, st, s.perm))
	}
	httpapi.SetLinks(w, r, page, len(list))
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// checkRepo answers GET .../repos/{owner}/{repo}: 204 when the team has a
// permission on the repository (the repository with the team's
// permissions when asked for application/vnd.github.v3.repository+json),
// 404 otherwise.
func (h *Handler) checkRepo(w http.ResponseWriter, r *http.Request) error {
	t, err := h.team(r)
	if err != nil {
		return err
	}
	repo, _, err := h.pathRepo(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	perm, err := InheritedRepoPermission(ctx, h.Service.DB, t.ID, repo.ID)
	if err != nil {
		return err
	}
	if perm == "" {
		return apierr.NotFound()
	}
	if !wantsRepository(r) {
		httpapi.NoContent(w)
		return nil
	}
	st, err := repos.StatsOf(ctx, h.Service.DB, repo.ID)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toTeamRepoJSON(repos.URLsOf(ctx), repo, st, perm))
	return nil
}

// wantsRepository reports whether the request asks for the repository
// object (the repository media type).
func wantsRepository(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		if strings.Contains(strings.ToLower(v), "repository+json") {
			return true
		}
	}
	return false
}

func (h *Handler) setRepo(w http.ResponseWriter, r *http.Request) error {
	t, err := h.team(r)
	if err != nil {
		return err
	}
	repo, role, err := h.pathRepo(r)
	if err != nil {
		return err
	}
	if role < auth.RoleAdmin {
		return apierr.Forbidden("You must have admin rights to the repository to add it to a team.")
	}
	var body struct {
		Permission *string `json:"permission"`
	}
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	actor, err := h.caller(r)
	if err != nil {
		return err
	}
	if err := h.Service.SetRepo(r.Context(), t, repo, actor, deref(body.Permission, "")); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

func (h *Handler) removeRepo(w http.ResponseWriter, r *http.Request) error {
	t, err := h.team(r)
	if err != nil {
		return err
	}
	repo, role, err := h.pathRepo(r)
	if err != nil {
		return err
	}
	if role < auth.RoleAdmin {
		if ok, err := h.manages(r.Context(), t); err != nil {
			return err
		} else if !ok {
			return apierr.Forbidden("You must be an organization owner or team maintainer, or have admin rights to the repository.")
		}
	}
	actor, err := h.caller(r)
	if err != nil {
		return err
	}
	if err := h.Service.RemoveRepo(r.Context(), t, repo, actor); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

// userTeams answers GET /user/teams: the teams the user belongs to in
// every organization (a fine-grained token: in its resource owner), as
// team-full objects.
func (h *Handler) userTeams(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	p := auth.PrincipalFrom(ctx)
	var owner int64
	if p.FineGrained() {
		owner = p.Token.ResourceOwnerID
	}
	refs, err := memberTeams(ctx, h.Service.DB, p.Account.ID, owner)
	if err != nil {
		return err
	}
	out := []fullJSON{}
	for _, x := range httpapi.Slice(page, refs) {
		org, err := accounts.ByID(ctx, h.Service.DB, x.orgID)
		if err != nil {
			return err
		}
		if access.SAMLRefusal(p, org) != nil {
			continue
		}
		t, err := ByID(ctx, h.Service.DB, org, x.teamID)
		if err != nil {
			return err
		}
		j, err := h.toFull(ctx, t)
		if err != nil {
			return err
		}
		out = append(out, j)
	}
	httpapi.SetLinks(w, r, page, len(refs))
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// repoTeams answers GET /repos/{owner}/{repo}/teams: the teams with a
// permission on the repository that the caller can see.
func (h *Handler) repoTeams(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	repo := repos.From(ctx)
	var seen []*Team
	if repo.Owner.IsOrg() {
		p := auth.PrincipalFrom(ctx)
		orgRole, err := access.OrgRole(ctx, h.Service.DB, p, repo.Owner)
		if err != nil {
			return err
		}
		all, err := repoTeams(ctx, h.Service.DB, repo)
		if err != nil {
			return err
		}
		orgCtx := auth.WithRole(ctx, orgRole)
		for _, t := range all {
			if ok, err := h.visible(orgCtx, t); err != nil {
				return err
			} else if ok {
				seen = append(seen, t)
			}
		}
	}
	return h.writeTeams(w, r, page, seen)
}

// caller is the authenticated user's account: the actor of a change.
func (h *Handler) caller(r *http.Request) (*accounts.Account, error) {
	return accounts.ByID(r.Context(), h.Service.DB, auth.PrincipalFrom(r.Context()).UserID())
}

package access

import (
	"context"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

func (g *Guard) checkRepo(ctx context.Context, p *auth.Principal, rule auth.Rule, owner, name string, write bool) (context.Context, error) {
	repo, standing, err := g.repository(ctx, owner, name, p.UserID())
	if err != nil {
		return nil, notFoundOr(err)
	}
	role := repoRole(p, repo, standing)
	if role == auth.RoleNone {
		return nil, apierr.NotFound()
	}
	if err := SAMLRefusal(p, repo.Owner); err != nil {
		return nil, err
	}
	if p.Anonymous() && (write || !rule.Public) {
		return nil, apierr.Unauthorized("Requires authentication")
	}
	if write {
		if err := writeRefusal(p, rule.Permissions, selectsRepo(repo)); err != nil {
			return nil, err
		}
	}
	if err := checkTokenLimits(p, rule, tokenScope{public: !repo.Private, write: write}); err != nil {
		return nil, err
	}
	if p.ScopeBased() && write && len(rule.Scopes) == 0 && !p.Token.Scopes.GrantsAny([]string{"repo", "public_repo"}) {
		return nil, apierr.Forbidden("This token lacks the scope this endpoint needs; accepted scopes: repo, public_repo.")
	}
	if role < rule.Role {
		return nil, roleRefusal(rule.Role)
	}
	// A lock for migration refuses writes to the repository (rules that
	// need push or admin). A user's own star or subscription, which any
	// reader may change, is not a write to the repository.
	if write && rule.Role >= auth.RoleWrite && repo.MigrationLocked {
		return nil, repos.ErrLocked()
	}
	if write && repo.Archived && rule.Role < auth.RoleAdmin && !ownChoice(rule) {
		return nil, repos.ErrArchived()
	}
	return withRole(repos.WithRepo(ctx, repo), role), nil
}

// ownChoice reports whether the rule's writes are the caller's own
// choices about a repository (a star, a subscription), which an archived
// repository still takes: every permission it accepts is starring or
// watching.
func ownChoice(rule auth.Rule) bool {
	if len(rule.Permissions) == 0 {
		return false
	}
	for _, set := range rule.Permissions {
		for _, need := range set {
			if need.Name != "starring" && need.Name != "watching" {
				return false
			}
		}
	}
	return true
}

func roleRefusal(need auth.Role) error {
	if need >= auth.RoleAdmin {
		return apierr.Forbidden("Must have admin rights to Repository.")
	}
	return apierr.Forbidden("Must have push access to repository.")
}

// RepoRole is the principal's role on the repository after the limits of
// its credentials: RoleNone means the repository is hidden from it.
//
// Users: the owner and owners of the owning organization are admins,
// other organization members have the organization's base repository
// permission (read unless changed), collaborators and members of teams
// their granted permission (repos.GrantedPermission; the highest of
// these); anyone reads a public repository.
// Classic and OAuth tokens see private repositories only with the repo
// scope. Fine-grained tokens act on the repositories they select (capped
// by the user's own role; an installation acts as its bot with admin
// standing, limited by its permissions), and read other public ones.
func RepoRole(ctx context.Context, q store.Q, p *auth.Principal, repo *repos.Repository) (auth.Role, error) {
	var st repos.Standing
	if needsStanding(p, repo) {
		var err error
		if repo.Owner.IsOrg() {
			if st.OrgRole, err = accounts.MemberRole(ctx, q, repo.Owner.ID, p.Account.ID); err != nil {
				return auth.RoleNone, err
			}
		}
		if st.Collaborator, err = repos.GrantedPermission(ctx, q, repo.ID, p.Account.ID); err != nil {
			return auth.RoleNone, err
		}
	}
	return repoRole(p, repo, st), nil
}

// needsStanding reports whether repoRole depends on the principal's role
// in the organization that owns the repository or on their collaborator
// permission.
func needsStanding(p *auth.Principal, repo *repos.Repository) bool {
	return !p.Anonymous() && (p.Token == nil || p.Token.Kind != auth.KindInstallation) && repo.Owner.ID != p.Account.ID
}

// repoRole is RepoRole given the user's standing (as
// repos.ByOwnerAndNameWithMembership reports it; ignored when
// needsStanding is false).
func repoRole(p *auth.Principal, repo *repos.Repository, st repos.Standing) auth.Role {
	public := auth.RoleNone
	if !repo.Private {
		public = auth.RoleRead
	}
	if p.Anonymous() {
		return public
	}
	if p.Token != nil && p.Token.Kind == auth.KindInstallation {
		if p.Token.Selects(repo.ID, repo.Owner.ID) {
			return auth.RoleAdmin
		}
		return public
	}
	role := max(userRepoRole(p.Account.ID, repo, st.OrgRole), CollaboratorRole(st.Collaborator), public)
	switch {
	case p.FineGrained() && !p.Token.Selects(repo.ID, repo.Owner.ID):
		return public
	case p.ScopeBased() && repo.Private && !p.Token.Scopes.Grants("repo"):
		return auth.RoleNone
	}
	return role
}

func userRepoRole(userID int64, repo *repos.Repository, memberRole string) auth.Role {
	if repo.Owner.ID == userID {
		return auth.RoleAdmin
	}
	if !repo.Owner.IsOrg() {
		return auth.RoleNone
	}
	switch memberRole {
	case accounts.RoleOwner:
		return auth.RoleAdmin
	case accounts.RoleMember:
		return BaseRole(repo.Owner)
	}
	return auth.RoleNone
}

// BaseRole is the role the organization's members have on its
// repositories: its base repository permission (default read).
func BaseRole(org *accounts.Account) auth.Role {
	switch org.BaseRepoPermission {
	case accounts.BaseNone:
		return auth.RoleNone
	case accounts.BaseWrite:
		return auth.RoleWrite
	case accounts.BaseAdmin:
		return auth.RoleAdmin
	}
	return auth.RoleRead
}

// CollaboratorRole is the role a collaborator's permission gives: pull
// and triage read, push and maintain write, admin administers.
func CollaboratorRole(perm string) auth.Role {
	switch perm {
	case repos.CollaboratorPull, repos.CollaboratorTriage:
		return auth.RoleRead
	case repos.CollaboratorPush, repos.CollaboratorMaintain:
		return auth.RoleWrite
	case repos.CollaboratorAdmin:
		return auth.RoleAdmin
	}
	return auth.RoleNone
}

// ListedRepoRole is RepoRole for the repository lists: it also hides the
// repositories of an organization that refuses the principal
// (SAMLRefusal), which a route naming one of them answers with 403.
func ListedRepoRole(ctx context.Context, q store.Q, p *auth.Principal, repo *repos.Repository) (auth.Role, error) {
	if SAMLRefusal(p, repo.Owner) != nil {
		return auth.RoleNone, nil
	}
	return RepoRole(ctx, q, p, repo)
}

// UserRepoRole is the role the user a has on repo by their own standing
// (owner, organization membership, collaborator permission, a public
// repository), whatever token they may use: RepoRole of a principal
// without a token.
func UserRepoRole(ctx context.Context, q store.Q, a *accounts.Account, repo *repos.Repository) (auth.Role, error) {
	return RepoRole(ctx, q, &auth.Principal{Account: &auth.Account{ID: a.ID, Login: a.Login, Type: a.Type}}, repo)
}

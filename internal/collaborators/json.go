package collaborators

import (
	"context"

	"forgeapi/internal/accounts"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// permissionFlags is the collaborator object's permissions hash.
type permissionFlags struct {
	Pull     bool `json:"pull"`
	Triage   bool `json:"triage"`
	Push     bool `json:"push"`
	Maintain bool `json:"maintain"`
	Admin    bool `json:"admin"`
}

// collaboratorJSON is the platform's collaborator object: a simple user
// with their permissions and role name on the repository.
type collaboratorJSON struct {
	accounts.SimpleUser
	Permissions permissionFlags `json:"permissions"`
	RoleName    string          `json:"role_name"`
}

func toCollaboratorJSON(base string, a *accounts.Account, perm string) collaboratorJSON {
	return collaboratorJSON{SimpleUser: accounts.ToSimpleUser(base, a), Permissions: flags(perm), RoleName: RoleName(perm)}
}

// permissionJSON answers GET .../collaborators/{username}/permission.
type permissionJSON struct {
	Permission string           `json:"permission"`
	RoleName   string           `json:"role_name"`
	User       collaboratorJSON `json:"user"`
}

// invitationJSON is the platform's repository-invitation object.
type invitationJSON struct {
	ID          int64                `json:"id"`
	NodeID      string               `json:"node_id"`
	Repository  repos.JSON           `json:"repository"`
	Invitee     *accounts.SimpleUser `json:"invitee"`
	Inviter     *accounts.SimpleUser `json:"inviter"`
	Permissions string               `json:"permissions"`
	CreatedAt   wire.Time            `json:"created_at"`
	Expired     bool                 `json:"expired"`
	URL         string               `json:"url"`
	HTMLURL     string               `json:"html_url"`
}

// toInvitationJSON renders an invitation; the repository carries the
// viewer's role on it.
func toInvitationJSON(ctx context.Context, q store.Q, base string, inv *Invitation, role auth.Role) (invitationJSON, error) {
	st, err := repos.StatsOf(ctx, q, inv.Repo.ID)
	if err != nil {
		return invitationJSON{}, err
	}
	invitee := accounts.ToSimpleUser(base, inv.Invitee)
	j := invitationJSON{ID: inv.ID, NodeID: wire.NodeID("RepositoryInvitation", inv.ID),
		Repository: repos.ToJSON(repos.URLs{Base: base, SSHPort: httpapi.SSHPort(ctx)}, inv.Repo, st, role), Invitee: &invitee, Permissions: RoleName(inv.Permission),
		CreatedAt: wire.T(inv.CreatedAt), URL: base + "/user/repository_invitations/" + wire.Itoa(inv.ID),
		HTMLURL: accounts.WebBase(base) + "/" + inv.Repo.FullName() + "/invitations"}
	if inv.Inviter != nil {
		inviter := accounts.ToSimpleUser(base, inv.Inviter)
		j.Inviter = &inviter
	}
	return j, nil
}

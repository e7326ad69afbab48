package collaborators

import (
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
)

// Handler serves the collaborators and repository invitations endpoints.
type Handler struct {
	Service *Service
}

// Routes is the collaborators route table. Listing and checking
// collaborators needs push access (fine-grained: Metadata read), a
// permission check read access; adding, removing and the repository's
// invitations need admin rights (Administration), except that a
// collaborator may remove themselves. A user's own invitations take
// classic and OAuth tokens with the repo scope; fine-grained tokens do not
// reach them, as on the platform.
func (h *Handler) Routes() []httpapi.Route {
	repo := func(role auth.Role, perm string) auth.Rule {
		return auth.Rule{Target: auth.TargetRepo, Role: role, Permissions: auth.Perm(perm), TokenTypes: auth.AllTokenTypes}
	}
	self := auth.Rule{Target: auth.TargetSelf, Scopes: []string{"repo"}}
	listSelf := self
	listSelf.Unauthorized401 = true // the one the platform documents a 401 for
	return []httpapi.Route{
		{Method: "GET", Pattern: "/repos/{owner}/{repo}/collaborators", Handle: h.list, Auth: repo(auth.RoleWrite, "metadata:read")},
		{Method: "GET", Pattern: "/repos/{owner}/{repo}/collaborators/{username}", Handle: h.check, Auth: repo(auth.RoleWrite, "metadata:read")},
		{Method: "PUT", Pattern: "/repos/{owner}/{repo}/collaborators/{username}", Handle: h.add, Auth: repo(auth.RoleAdmin, "administration:write")},
		{Method: "DELETE", Pattern: "/repos/{owner}/{repo}/collaborators/{username}", Handle: h.remove,
			Auth: auth.Rule{Target: auth.TargetRepo, Role: auth.RoleRead, Permissions: auth.Perm("administration:write"),
				TokenTypes: auth.AllTokenTypes, Extra: "A collaborator may remove themselves; removing anyone else needs admin rights."}},
		{Method: "GET", Pattern: "/repos/{owner}/{repo}/collaborators/{username}/permission", Handle: h.permission, Auth: repo(auth.RoleRead, "metadata:read")},
		{Method: "GET", Pattern: "/repos/{owner}/{repo}/invitations", Handle: h.repoInvitations, Auth: repo(auth.RoleAdmin, "administration:read")},
		{Method: "PATCH", Pattern: "/repos/{owner}/{repo}/invitations/{invitation_id}", Handle: h.updateInvitation, Auth: repo(auth.RoleAdmin, "administration:write")},
		{Method: "DELETE", Pattern: "/repos/{owner}/{repo}/invitations/{invitation_id}", Handle: h.cancelInvitation, Auth: repo(auth.RoleAdmin, "administration:write")},
		{Method: "GET", Pattern: "/user/repository_invitations", Handle: h.userInvitations, Auth: listSelf},
		{Method: "PATCH", Pattern: "/user/repository_invitations/{invitation_id}", Handle: h.accept, Auth: self},
		{Method: "DELETE", Pattern: "/user/repository_invitations/{invitation_id}", Handle: h.decline, Auth: self},
	}
}

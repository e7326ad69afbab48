package collaborators

import (
	"forgeapi/internal/accounts"
	"forgeapi/internal/repos"
)

// Permissions is what a PUT .../collaborators/{username} body may ask for
// (the platform's default is push).
var Permissions = []string{repos.CollaboratorPull, repos.CollaboratorTriage, repos.CollaboratorPush,
	repos.CollaboratorMaintain, repos.CollaboratorAdmin}

// rank orders permissions: 0 for none, up to 5 for admin.
func rank(perm string) int {
	for i, p := range Permissions {
		if p == perm {
			return i + 1
		}
	}
	return 0
}

// higher returns the higher of two permissions.
func higher(a, b string) string {
	if rank(b) > rank(a) {
		return b
	}
	return a
}

// RoleName is the platform's role name of a permission (read, triage,
// write, maintain, admin), "none" for none.
func RoleName(perm string) string {
	switch perm {
	case repos.CollaboratorPull:
		return "read"
	case repos.CollaboratorPush:
		return "write"
	case "":
		return "none"
	}
	return perm
}

// LegacyPermission is the platform's legacy base role of a permission:
// admin, write (push and maintain), read (pull and triage), or none.
func LegacyPermission(perm string) string {
	switch perm {
	case repos.CollaboratorAdmin:
		return "admin"
	case repos.CollaboratorPush, repos.CollaboratorMaintain:
		return "write"
	case repos.CollaboratorPull, repos.CollaboratorTriage:
		return "read"
	}
	return "none"
}

// fromRoleName is the permission of an invitation's role name (read,
// write, or the permission itself); "" for a name that is none.
func fromRoleName(name string) string {
	switch name {
	case "read":
		return repos.CollaboratorPull
	case "write":
		return repos.CollaboratorPush
	case repos.CollaboratorTriage, repos.CollaboratorMaintain, repos.CollaboratorAdmin:
		return name
	}
	return ""
}

// basePermission is the permission an organization's base repository
// permission gives its members ("" for none).
func basePermission(org *accounts.Account) string {
	switch org.BaseRepoPermission {
	case accounts.BaseNone:
		return ""
	case accounts.BaseWrite:
		return repos.CollaboratorPush
	case accounts.BaseAdmin:
		return repos.CollaboratorAdmin
	}
	return repos.CollaboratorPull
}

// flags is the collaborator object's permissions hash of a permission.
func flags(perm string) permissionFlags {
	r := rank(perm)
	return permissionFlags{Pull: r >= 1, Triage: r >= 2, Push: r >= 3, Maintain: r >= 4, Admin: r >= 5}
}

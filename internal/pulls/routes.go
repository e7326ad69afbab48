package pulls

import (
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
)

// Routes is the pull requests route table. Reading needs read access
// (classic and OAuth tokens: repo for private repositories; fine-grained:
// Pull requests read; public repositories anonymously). Anyone who can
// read a repository opens pull requests (public_repo or repo; Pull
// requests write); their authors edit them, anyone else needs push
// access, which the handler checks. Merging needs push access and, for
// fine-grained tokens, Contents write, as on the platform.
func (h *Handler) Routes() []httpapi.Route {
	rule := func(role auth.Role, public bool, extra string, perms ...string) auth.Rule {
		return auth.Rule{Target: auth.TargetRepo, Role: role, Public: public, Permissions: auth.Perm(perms...),
			TokenTypes: auth.AllTokenTypes, Extra: extra}
	}
	read := rule(auth.RoleRead, true, "", "pull_requests:read")
	write := rule(auth.RoleRead, false, "", "pull_requests:write")
	author := rule(auth.RoleRead, false, "Authors may change their own; anyone else needs push access.", "pull_requests:write")
	merge := rule(auth.RoleWrite, false, "", "contents:write")
	const repo = "/repos/{owner}/{repo}"
	const pull = repo + "/pulls/{pull_number}"
	return []httpapi.Route{
		{Method: "GET", Pattern: repo + "/pulls", Handle: h.list, Auth: read},
		{Method: "POST", Pattern: repo + "/pulls", Handle: h.create, Auth: write},
		{Method: "GET", Pattern: pull, Handle: h.get, Auth: read},
		{Method: "PATCH", Pattern: pull, Handle: h.update, Auth: author},
		{Method: "GET", Pattern: pull + "/commits", Handle: h.listCommits, Auth: read},
		{Method: "GET", Pattern: pull + "/files", Handle: h.listFiles, Auth: read},
		{Method: "GET", Pattern: pull + "/merge", Handle: h.checkMerged, Auth: read},
		{Method: "PUT", Pattern: pull + "/merge", Handle: h.merge, Auth: merge},
	}
}

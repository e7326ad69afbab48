// Package repocontent serves what a repository holds, read from the same
// bare git repositories that git push and git clone use: contents (files,
// directories, symlinks and submodules at any revision, as JSON or raw),
// the README, branches, commits (history, one commit with its patches, a
// comparison of two revisions; also as a diff, a patch or a commit's
// SHA alone), with the platform's shapes. Its reads go
// through git/gitread; it writes nothing.
package repocontent

import (
	"forgeapi/internal/auth"
	"forgeapi/internal/git/gitdiff"
	"forgeapi/internal/githost"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
)

// Handler serves the repository contents endpoints.
type Handler struct {
	Repos *repos.Service
	// Git records the contents writes as pushes (ServerPush).
	Git *githost.Handler
	// open keeps repositories open between requests.
	open openCache
	// listings keeps directory listings rendered (see listingCache).
	listings listingCache
}

// Routes is the contents route table. Public repositories are read
// anonymously; private ones need read access (classic and OAuth tokens:
// repo). Fine-grained tokens need Contents (read) for contents, the
// README, raw files and commits, Metadata (read) for branches.
func (h *Handler) Routes() []httpapi.Route {
	contents := auth.Rule{Target: auth.TargetRepo, Role: auth.RoleRead, Public: true,
		Permissions: auth.Perm("contents:read"), TokenTypes: auth.AllTokenTypes}
	write := auth.Rule{Target: auth.TargetRepo, Role: auth.RoleWrite,
		Permissions: auth.Perm("contents:write"), TokenTypes: auth.AllTokenTypes}
	metadata := auth.Rule{Target: auth.TargetRepo, Role: auth.RoleRead, Public: true,
		Permissions: auth.Perm("metadata:read"), TokenTypes: auth.AllTokenTypes}
	return []httpapi.Route{
		{Method: "GET", Pattern: "/repos/{owner}/{repo}/contents", Handle: h.getContents, Auth: contents},
		{Method: "GET", Pattern: "/repos/{owner}/{repo}/contents/{path...}", Handle: h.getContents, Auth: contents},
		{Method: "PUT", Pattern: "/repos/{owner}/{repo}/contents/{path...}", Handle: h.putContents, Auth: write,
			MaxBody: MaxWriteSize*4/3 + 1<<20},
		{Method: "DELETE", Pattern: "/repos/{owner}/{repo}/contents/{path...}", Handle: h.deleteContents, Auth: write},
		{Method: "GET", Pattern: "/repos/{owner}/{repo}/readme", Handle: h.getReadme, Auth: contents},
		{Method: "GET", Pattern: "/repos/{owner}/{repo}/readme/{dir...}", Handle: h.getReadme, Auth: contents},
		{Method: "GET", Pattern: "/raw/{owner}/{repo}/{ref}/{path...}", Handle: h.getRaw, Auth: contents, Stream: true},
		{Method: "GET", Pattern: "/repos/{owner}/{repo}/commits", Handle: h.listCommits, Auth: contents},
		{Method: "GET", Pattern: "/repos/{owner}/{repo}/commits/{ref}", Handle: h.getCommit, Auth: contents,
			StreamMedia: gitdiff.Media()},
		{Method: "GET", Pattern: "/repos/{owner}/{repo}/compare/{basehead}", Handle: h.compare, Auth: contents,
			StreamMedia: gitdiff.Media()},
		{Method: "GET", Pattern: "/repos/{owner}/{repo}/git/ref/{ref...}", Handle: h.getRef, Auth: contents},
		{Method: "GET", Pattern: "/repos/{owner}/{repo}/git/matching-refs/{ref...}", Handle: h.listMatchingRefs, Auth: contents},
		{Method: "GET", Pattern: "/repos/{owner}/{repo}/git/refs", Handle: h.listRefs, Auth: contents},
		{Method: "GET", Pattern: "/repos/{owner}/{repo}/git/refs/{ref...}", Handle: h.getRefs, Auth: contents},
		{Method: "POST", Pattern: "/repos/{owner}/{repo}/git/refs", Handle: h.createRef, Auth: write},
		{Method: "PATCH", Pattern: "/repos/{owner}/{repo}/git/refs/{ref...}", Handle: h.updateRef, Auth: write},
		{Method: "DELETE", Pattern: "/repos/{owner}/{repo}/git/refs/{ref...}", Handle: h.deleteRef, Auth: write},
		{Method: "GET", Pattern: "/repos/{owner}/{repo}/git/commits/{sha}", Handle: h.getGitCommit, Auth: contents},
		{Method: "GET", Pattern: "/repos/{owner}/{repo}/git/trees/{sha...}", Handle: h.getTree, Auth: contents},
		{Method: "GET", Pattern: "/repos/{owner}/{repo}/git/blobs/{sha}", Handle: h.getBlob, Auth: contents},
		{Method: "GET", Pattern: "/repos/{owner}/{repo}/tags", Handle: h.listTags, Auth: metadata},
		{Method: "GET", Pattern: "/repos/{owner}/{repo}/branches", Handle: h.listBranches, Auth: metadata},
		{Method: "GET", Pattern: "/repos/{owner}/{repo}/branches/{branch...}", Handle: h.getBranch, Auth: metadata},
		{Method: "POST", Pattern: "/repos/{owner}/{repo}/branches/{branch}/rename", Handle: h.renameBranch,
			Auth: auth.Rule{Target: auth.TargetRepo, Role: auth.RoleWrite, Permissions: auth.Perm("contents:write", "administration:write"),
				TokenTypes: auth.AllTokenTypes, Extra: "Admin rights (and, for fine-grained tokens, Administration write) to rename the default branch; admin rights for a protected branch."}},
		{Method: "GET", Pattern: "/repos/{owner}/{repo}/commits/{commit_sha}/branches-where-head", Handle: h.branchesWhereHead, Auth: contents},
	}
}

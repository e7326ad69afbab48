// Package gitdata serves the git database writes of the platform's git
// data API: blobs, trees (from a base tree, nested paths, deletions),
// commits (parents, authors and committers with dates, a signature kept
// as the commit's gpgsig header) and annotated tags, written into the
// repository's bare git directory as git writes them (git/gitwrite), and
// annotated tags read back. Writing an object moves no reference: a
// client then creates or updates one (POST or PATCH .../git/refs, served
// by repocontent), which is a push with its events, protections and
// rulesets. The other git data reads (refs, commits, trees, blobs) are
// repocontent's.
package gitdata

import (
	"forgeapi/internal/auth"
	"forgeapi/internal/git/gitwrite"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
)

// MaxBlobSize is the largest blob POST .../git/blobs writes (its decoded
// content), and the largest content of one entry of POST .../git/trees:
// the platform's 100 MB. Each route's body limit follows it.
const MaxBlobSize = 100 << 20

// maxBody is the body limit of the blob and tree writes: MaxBlobSize in
// base64, and room for the rest of the body.
const maxBody = MaxBlobSize*4/3 + 1<<20

// Handler serves the git database writes.
type Handler struct {
	Repos *repos.Service
	// WebFlow signs the commits written without a signature of their
	// own, as the platform's web-flow commits; nil signs none.
	WebFlow gitwrite.Signer
}

// Routes is the git data route table. Writing needs write access to the
// repository (classic and OAuth tokens: repo or public_repo; fine-grained
// and app tokens: Contents write); reading a tag needs read access
// (public repositories anonymously; fine-grained: Contents read).
func (h *Handler) Routes() []httpapi.Route {
	read := auth.Rule{Target: auth.TargetRepo, Role: auth.RoleRead, Public: true,
		Permissions: auth.Perm("contents:read"), TokenTypes: auth.AllTokenTypes}
	write := auth.Rule{Target: auth.TargetRepo, Role: auth.RoleWrite,
		Permissions: auth.Perm("contents:write"), TokenTypes: auth.AllTokenTypes}
	const git = "/repos/{owner}/{repo}/git"
	return []httpapi.Route{
		{Method: "POST", Pattern: git + "/blobs", Handle: h.createBlob, Auth: write, MaxBody: maxBody},
		{Method: "POST", Pattern: git + "/trees", Handle: h.createTree, Auth: write, MaxBody: maxBody},
		{Method: "POST", Pattern: git + "/commits", Handle: h.createCommit, Auth: write},
		{Method: "POST", Pattern: git + "/tags", Handle: h.createTag, Auth: write},
		{Method: "GET", Pattern: git + "/tags/{tag_sha}", Handle: h.getTag, Auth: read},
	}
}

package gists

import (
	"net/http"

	"forgeapi/internal/auth"
	"forgeapi/internal/githost"
	"forgeapi/internal/httpapi"
)

// Handler serves the gists API, and (Register) the gists' git
// repositories and raw files.
type Handler struct {
	Service *Service
	// Git serves git requests (Register); unused by Routes.
	Git *githost.Handler
}

// Routes is the gists route table. Anyone reads a gist, secret ones by
// their id; the lists show secret gists to their owner only. Changes need
// an authenticated user: classic and OAuth tokens with the gist scope,
// fine-grained and app user tokens with the user permission Gists (write);
// only a gist's owner edits or deletes it, anyone who reads it stars,
// forks and comments on it, and authors edit and delete their comments
// (the gist's owner deletes any). Installation tokens read, but act for
// no user and change nothing.
func (h *Handler) Routes() []httpapi.Route {
	const tokens = auth.UAT | auth.FPAT
	read := auth.Rule{Public: true, Permissions: auth.Perm("gists:read"), TokenTypes: auth.AllTokenTypes}
	write := auth.Rule{Target: auth.TargetSelf, Scopes: []string{"gist"}, Permissions: auth.Perm("gists:write"), TokenTypes: tokens}
	owner := write
	owner.Extra = "Only the gist's owner."
	author := write
	author.Extra = "The comment's author; the gist's owner deletes any."
	starred := auth.Rule{Target: auth.TargetSelf, Unauthorized401: true, Permissions: auth.Perm("gists:read"), TokenTypes: tokens}
	user := auth.Rule{Target: auth.TargetUser, Public: true, Permissions: auth.Perm("gists:read"), TokenTypes: auth.AllTokenTypes}
	const gist = "/gists/{gist_id}"
	return []httpapi.Route{
		{Method: "POST", Pattern: "/gists", Handle: h.create, Auth: write},
		{Method: "GET", Pattern: "/gists", Handle: h.listOwn, Auth: read},
		{Method: "GET", Pattern: "/gists/public", Handle: h.listPublic, Auth: read},
		{Method: "GET", Pattern: "/gists/starred", Handle: h.listStarred, Auth: starred},
		{Method: "GET", Pattern: "/users/{username}/gists", Handle: h.listUser, Auth: user},
		{Method: "GET", Pattern: gist, Handle: h.get, Auth: read},
		{Method: "PATCH", Pattern: gist, Handle: h.update, Auth: owner},
		// POST is PATCH, as the platform still takes it (gh 2.23 edits gists so).
		{Method: "POST", Pattern: gist, Handle: h.update, Auth: owner},
		{Method: "DELETE", Pattern: gist, Handle: h.delete, Auth: owner},
		{Method: "GET", Pattern: gist + "/commits", Handle: h.listCommits, Auth: read},
		{Method: "GET", Pattern: gist + "/{sha}", Handle: h.getRevision, Auth: read},
		{Method: "GET", Pattern: gist + "/star", Handle: h.checkStar, Auth: read},
		{Method: "PUT", Pattern: gist + "/star", Handle: h.star, Auth: write},
		{Method: "DELETE", Pattern: gist + "/star", Handle: h.unstar, Auth: write},
		{Method: "GET", Pattern: gist + "/forks", Handle: h.listForks, Auth: read},
		{Method: "POST", Pattern: gist + "/forks", Handle: h.fork, Auth: write},
		{Method: "GET", Pattern: gist + "/comments", Handle: h.listComments, Auth: read},
		{Method: "POST", Pattern: gist + "/comments", Handle: h.createComment, Auth: write},
		{Method: "GET", Pattern: gist + "/comments/{comment_id}", Handle: h.getComment, Auth: read},
		{Method: "PATCH", Pattern: gist + "/comments/{comment_id}", Handle: h.updateComment, Auth: author},
		{Method: "DELETE", Pattern: gist + "/comments/{comment_id}", Handle: h.deleteComment, Auth: author},
	}
}

// GitPatterns are the routes of the gists' git repositories at
// /gist/{id}.git (also without ".git"), more specific than githost's
// repository routes, and of their raw files.
var GitPatterns = []string{
	"GET /gist/{gist}/info/refs",
	"POST /gist/{gist}/git-upload-pack",
	"POST /gist/{gist}/git-receive-pack",
}

// RawPattern is the route of a gist file's bytes (raw_url).
const RawPattern = "GET /gist/{owner}/{gist}/raw/{blob}/{file}"

// Register adds the git routes (as streams, as githost's) and the raw
// file route to a server.
func (h *Handler) Register(mux interface {
	HandleStream(string, http.Handler)
	Handle(string, http.Handler)
}) {
	for _, p := range GitPatterns {
		mux.HandleStream(p, http.HandlerFunc(h.serveGit))
	}
	mux.Handle(RawPattern, http.HandlerFunc(h.raw))
}

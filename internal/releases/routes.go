package releases

import (
	"net/http"

	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
)

// Handler serves the releases endpoints.
type Handler struct {
	Service *Service
	// Reactions, when set, lists a release's reactions: GET
	// .../releases/{release_id}/reactions shares its pattern with the
	// assets' list (see listAssets), so the reactions area hands its
	// handler over instead of declaring a route.
	Reactions httpapi.HandlerFunc
}

// Routes is the releases route table. Reading needs read access (public
// repositories anonymously; fine-grained and app tokens: Contents read);
// drafts, and their assets, are shown to callers with push access only.
// Writing needs push access (Contents write). Assets are uploaded at the
// release's upload_url, /api/uploads/repos/... on the web root (the
// self-managed edition's upload path), and at the API's own path; their
// body streams into the blob store, up to Service.MaxAsset bytes.
// Browser downloads (browser_download_url, on the web root) are the
// asset API's octet-stream answer (see Service.DownloadPath).
//
// GET .../releases/{release_id}/{assets} is the list of a release's
// assets: a narrower pattern would collide with .../releases/assets/{asset_id}.
func (h *Handler) Routes() []httpapi.Route {
	rule := func(role auth.Role, public bool, perm, extra string) auth.Rule {
		return auth.Rule{Target: auth.TargetRepo, Role: role, Public: public, Permissions: auth.Perm(perm),
			TokenTypes: auth.AllTokenTypes, Extra: extra}
	}
	read := rule(auth.RoleRead, true, "contents:read", "Drafts are shown to callers with push access only.")
	write := rule(auth.RoleWrite, false, "contents:write", "")
	const rel = "/repos/{owner}/{repo}/releases"
	upload := httpapi.Route{Method: "POST", Handle: h.upload, Auth: write, MaxBody: h.Service.MaxAsset(), StreamBody: true}
	uploads := []string{rel + "/{release_id}/assets", "/api/uploads" + rel + "/{release_id}/assets"}
	routes := []httpapi.Route{
		{Method: "GET", Pattern: rel, Handle: h.list, Auth: read},
		{Method: "POST", Pattern: rel, Handle: h.create, Auth: write},
		{Method: "POST", Pattern: rel + "/generate-notes", Handle: h.generateNotes, Auth: write},
		{Method: "GET", Pattern: rel + "/latest", Handle: h.latest, Auth: read},
		{Method: "GET", Pattern: rel + "/tags/{tag}", Handle: h.byTag, Auth: read},
		{Method: "GET", Pattern: rel + "/tags/{tag}/{rest...}", Handle: h.byTag, Auth: read},
		{Method: "GET", Pattern: rel + "/{release_id}", Handle: h.get, Auth: read},
		{Method: "PATCH", Pattern: rel + "/{release_id}", Handle: h.update, Auth: write},
		{Method: "DELETE", Pattern: rel + "/{release_id}", Handle: h.delete, Auth: write},
		{Method: "GET", Pattern: rel + "/{release_id}/{assets}", Handle: h.listAssets, Auth: read},
		{Method: "GET", Pattern: rel + "/assets/{asset_id}", Handle: h.getAsset, Auth: read, Stream: true},
		{Method: "PATCH", Pattern: rel + "/assets/{asset_id}", Handle: h.updateAsset, Auth: write},
		{Method: "DELETE", Pattern: rel + "/assets/{asset_id}", Handle: h.deleteAsset, Auth: write},
	}
	for _, p := range uploads {
		rt := upload
		rt.Pattern = p
		routes = append(routes, rt)
	}
	return routes
}

// Register adds the plain handler of the signed download URLs
// (SignedPathPrefix) that the asset API redirects to.
func (h *Handler) Register(mux interface{ Handle(string, http.Handler) }) {
	mux.Handle("GET "+SignedPathPrefix+"{asset_id}/{name}", http.HandlerFunc(h.signedDownload))
}

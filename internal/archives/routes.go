package archives

import (
	"errors"
	"net/http"
	"net/url"
	"time"

	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// DownloadPrefix is the path under the web root (without /api/v3) where
// the download URLs are served.
const DownloadPrefix = "/_codeload/"

// Handler serves the archive links and the downloads.
type Handler struct {
	Repos  *repos.Service
	Signer *Signer
	Cache  *Cache
}

// Routes is the archives route table: the links, which need read access
// to the repository (public ones anonymously; fine-grained: Contents
// read). The downloads they redirect to are registered by Register.
func (h *Handler) Routes() []httpapi.Route {
	contents := auth.Rule{Target: auth.TargetRepo, Role: auth.RoleRead, Public: true,
		Permissions: auth.Perm("contents:read"), TokenTypes: auth.AllTokenTypes}
	const repo = "/repos/{owner}/{repo}"
	link := func(f Format) httpapi.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) error { return h.link(w, r, f) }
	}
	return []httpapi.Route{
		{Method: "GET", Pattern: repo + "/tarball", Handle: link(Tarball), Auth: contents},
		{Method: "GET", Pattern: repo + "/tarball/{ref...}", Handle: link(Tarball), Auth: contents},
		{Method: "GET", Pattern: repo + "/zipball", Handle: link(Zipball), Auth: contents},
		{Method: "GET", Pattern: repo + "/zipball/{ref...}", Handle: link(Zipball), Auth: contents},
	}
}

// Register serves the downloads on mux, outside the API (as git and the
// blob downloads are).
func (h *Handler) Register(mux interface{ Handle(string, http.Handler) }) {
	mux.Handle("GET "+DownloadPrefix+"{owner}/{repo}/{format}/{sha}", http.HandlerFunc(h.download))
}

// link answers GET .../tarball/{ref} and .../zipball/{ref}: 302 to the
// download of the commit ref names (a branch, which may hold '/', a tag,
// a SHA; the default branch without one). A ref that names no commit, and
// an empty repository, are a 404.
func (h *Handler) link(w http.ResponseWriter, r *http.Request, f Format) error {
	repo := repos.From(r.Context())
	ref := r.PathValue("ref")
	if ref == "" {
		ref = repo.DefaultBranch
	}
	g, err := gitread.Open(h.Repos.GitDir(repo.ID))
	if err != nil {
		return err
	}
	sha, err := g.Resolve(ref)
	g.Close()
	if errors.Is(err, gitread.ErrRevisionNotFound) {
		return apierr.NotFound()
	} else if err != nil {
		return err
	}
	u := httpapi.WebBase(httpapi.BaseURL(r.Context())) + DownloadPrefix + url.PathEscape(repo.Owner.Login) + "/" +
		url.PathEscape(repo.Name) + "/" + f.segment() + "/" + sha
	if repo.Private {
		u += "?" + h.Signer.Query(repo.ID, sha, f)
	}
	w.Header().Set("Location", u)
	w.WriteHeader(http.StatusFound)
	return nil
}

// download serves GET /_codeload/{owner}/{repo}/legacy.tar.gz/{sha} (and
// legacy.zip): the archive of the commit, built on the first request and
// served from the cache after, with Range and conditional requests. A
// private repository needs the link's unexpired signature; without it,
// as for what does not exist, the answer is a 404.
func (h *Handler) download(w http.ResponseWriter, r *http.Request) {
	if err := h.serve(w, r); err != nil {
		httpapi.WriteError(w, r, err)
	}
}

func (h *Handler) serve(w http.ResponseWriter, r *http.Request) error {
	f, ok := formatOfSegment(r.PathValue("format"))
	sha := r.PathValue("sha")
	if !ok || !fullSHA(sha) {
		return apierr.NotFound()
	}
	repo, err := repos.ByOwnerAndName(r.Context(), h.Repos.DB, r.PathValue("owner"), r.PathValue("repo"))
	if errors.Is(err, store.ErrNotFound) {
		return apierr.NotFound()
	} else if err != nil {
		return err
	}
	if repo.Private && !h.Signer.Valid(r.URL.Query(), repo.ID, sha, f) {
		return apierr.NotFound()
	}
	name := Name(repo, sha)
	file, err := h.Cache.Open(r.Context(), h.Repos.GitDir(repo.ID), entry{repoID: repo.ID, sha: sha, format: f, prefix: name + "/"})
	if err != nil {
		if !exists(h.Repos.GitDir(repo.ID), sha) {
			return apierr.NotFound()
		}
		return err
	}
	defer file.Close()
	hd := w.Header()
	hd.Set("Content-Type", f.contentType())
	hd.Set("Content-Disposition", "attachment; filename="+name+f.ext())
	hd.Set("ETag", `"`+f.String()+"-"+sha+`"`)
	if repo.Private {
		hd.Set("Cache-Control", "private, no-store")
	}
	hd.Set("X-Content-Type-Options", "nosniff")
	// No Last-Modified: the ETag names the archive (a commit's archive
	// never changes).
	http.ServeContent(w, r, "", time.Time{}, file)
	return nil
}

// exists reports whether the repository holds the commit sha.
func exists(gitDir, sha string) bool {
	g, err := gitread.Open(gitDir)
	if err != nil {
		return false
	}
	defer g.Close()
	_, err = g.Resolve(sha)
	return err == nil
}

// fullSHA reports whether s is a full lowercase hex object name.
func fullSHA(s string) bool {
	if len(s) != 40 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

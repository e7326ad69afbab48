package web

import (
	"net/http"
	"strings"

	"forgeapi/internal/apierr"
	"forgeapi/internal/console"
)

// Register parses the templates and adds the routes of the owners' and
// repositories' pages to mux. The deeper addresses of a repository
// (/{owner}/{repo}/{rest...}) are git's route: it hands them to
// RepoPages.
func (h *Handler) Register(mux interface{ Handle(string, http.Handler) }) {
	h.pages = parsePages()
	h.css = stylesheet()
	mux.Handle("GET "+StylesheetPath, http.HandlerFunc(h.serveStylesheet))
	mux.Handle("GET /{owner}", h.ownerOrFile())
	mux.Handle("GET /search", h.browser(h.search))
	mux.Handle("GET /{owner}/{repo}", h.browser(h.repoHome))
	// Forms post under the console's prefix: a POST pattern at
	// /{owner}/{repo}/... collides with the API's.
	mux.Handle("POST "+console.RepoPrefix+"/{owner}/{repo}/issues", h.Console.Page(h.createIssue))
	mux.Handle("POST "+console.RepoPrefix+"/{owner}/{repo}/issues/{number}/comments", h.Console.Page(h.createComment))
	mux.Handle("POST "+console.RepoPrefix+"/{owner}/{repo}/issues/{number}", h.Console.Page(h.editIssue))
	mux.Handle("POST "+console.RepoPrefix+"/{owner}/{repo}/issues/{number}/state", h.Console.Page(h.issueState))
	mux.Handle("POST "+console.RepoPrefix+"/{owner}/{repo}/pull/{number}/merge", h.Console.Page(h.mergePull))
	mux.Handle("POST "+console.RepoPrefix+"/{owner}/{repo}/pull/{number}/reviews", h.Console.Page(h.reviewPull))
	mux.Handle("POST "+console.RepoPrefix+"/{owner}/{repo}/pull/{number}/comments", h.Console.Page(h.lineCommentPull))
}

// ownerOrFile serves GET /{owner}: a file of Files when the name has a
// dot (no login has one), else the owner's page.
func (h *Handler) ownerOrFile() http.Handler {
	page := h.browser(h.owner)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if name := r.PathValue("owner"); h.Files != nil && strings.Contains(name, ".") {
			h.Files(w, r, name)
			return
		}
		page.ServeHTTP(w, r)
	})
}

// RepoPages serves GET /{owner}/{repo}/{rest...} (the path values owner,
// repo and rest are the route's): the raw address of a file for any
// client, the other pages for browsers (among them the console's pages
// of the repository's hooks at the platform's settings/hooks), and the
// API's JSON 404 for anything else. The diff and patch addresses come
// here from a browser with a session (see HasSession); others are the
// API's.
func (h *Handler) RepoPages() http.Handler {
	pages := h.Console.Page(h.repoPage)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hooks, ok := h.Console.RepoHooksPages(r); ok && wantsPage(r) {
			hooks.ServeHTTP(w, r)
			return
		}
		if strings.HasPrefix(r.PathValue("rest"), "raw/") || wantsPage(r) || HasSession(r) {
			pages.ServeHTTP(w, r)
			return
		}
		apiNotFound(w, r)
	})
}

// repoPage dispatches the addresses under a repository by their first
// segment.
func (h *Handler) repoPage(w http.ResponseWriter, r *http.Request, x console.Visitor) error {
	v, err := h.visitRepo(r.Context(), x, r.PathValue("owner"), r.PathValue("repo"))
	if isNotFound(err) {
		if moved, rerr := h.redirectRenamed(w, r, x); moved || rerr != nil {
			return rerr
		}
	}
	if err != nil {
		return err
	}
	kind, rest, _ := strings.Cut(r.PathValue("rest"), "/")
	if name, f, ok := changeFormat(rest); ok && (kind == "pull" || kind == "commit" || kind == "compare") {
		return h.change(w, r, v, kind, name, f)
	}
	switch kind {
	case "tree":
		return h.tree(w, r, v, rest)
	case "blob":
		return h.blob(w, r, v, rest)
	case "raw":
		return h.raw(w, r, v, rest)
	case "commits":
		return h.commits(w, r, v, rest)
	case "commit":
		return h.commit(w, r, v, rest)
	case "compare":
		return h.compare(w, r, v, rest)
	case "issues":
		return h.issuePages(w, r, v, rest)
	case "pulls":
		return h.pullList(w, r, v, rest)
	case "pull":
		return h.pullPages(w, r, v, rest)
	case "milestone":
		return h.milestone(w, r, v, rest)
	case "releases":
		return h.releasePages(w, r, v, rest)
	}
	return apierr.NotFound()
}

// HasSession reports whether a request comes with the console's session
// cookie and no API credentials: a browser's, which the pages serve with
// the session's access (a private repository's diff_url, say).
func HasSession(r *http.Request) bool {
	c, err := r.Cookie(console.SessionCookie)
	return err == nil && c.Value != "" && r.Header.Get("Authorization") == ""
}

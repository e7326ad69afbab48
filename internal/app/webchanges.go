package app

import (
	"net/http"
	"net/url"
	"strings"

	"forgeapi/internal/apierr"
	"forgeapi/internal/git/gitdiff"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/releases"
	"forgeapi/internal/web"
)

// webChanges serves the web addresses of a repository's changes as plain
// text: a pull request's diff_url and patch_url
// (/{owner}/{repo}/pull/{number}.diff and .patch), a commit's
// (/{owner}/{repo}/commit/{sha}.diff) and a comparison's
// (/{owner}/{repo}/compare/{basehead}.diff). Each is the API's answer to
// the resource's diff or patch media type (httpapi.Server.Reroute: the
// API's credentials and access rules, anonymous callers on public
// repositories, its limits and JSON errors), as text/plain. It is
// githost's Web: the path values owner, repo and rest are its.
//
// It also serves release assets' browser_download_url
// (/{owner}/{repo}/releases/download/{tag}/{name}) as the asset API's
// octet-stream answer (releases.Service.DownloadPath).
//
// Any other address under a repository is a web page (internal/web's
// RepoPages: pages for browsers, the JSON 404 for API clients), and so
// are the diff and patch addresses asked with the console's session
// (web.HasSession), which the pages serve with the session's access.
type webChanges struct {
	api      *httpapi.Server
	releases *releases.Service
	pages    http.Handler
}

func (h webChanges) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.releases != nil && strings.HasPrefix(r.PathValue("rest"), "releases/download/") {
		h.releaseDownload(w, r)
		return
	}
	path, f, ok := changePath(r.PathValue("owner"), r.PathValue("repo"), r.PathValue("rest"))
	if h.pages != nil && (!ok || web.HasSession(r)) { // a browser's session opens its private repositories' diffs
		h.pages.ServeHTTP(w, r)
		return
	}
	if !ok {
		r.Pattern = "" // metrics count it as unmatched
		httpapi.WriteError(w, r, apierr.NotFound())
		return
	}
	h.api.Reroute(&plainText{ResponseWriter: w}, r, path, "application/vnd.github."+string(f))
}

// releaseDownload answers a release asset's browser_download_url.
func (h webChanges) releaseDownload(w http.ResponseWriter, r *http.Request) {
	path, ok, err := h.releases.DownloadPath(r.Context(), r.PathValue("owner"), r.PathValue("repo"), r.PathValue("rest"))
	if err == nil && !ok {
		err = apierr.NotFound()
	}
	if err != nil {
		r.Pattern = ""
		httpapi.WriteError(w, r, err)
		return
	}
	h.api.Reroute(w, r, path, "application/octet-stream")
}

// changePath returns the API path (escaped) of the change that the web
// path /{owner}/{repo}/{rest} shows, and its format; ok is false when
// rest is none of pull/{number}, commit/{sha} or compare/{basehead} with
// .diff or .patch after it.
func changePath(owner, repo, rest string) (path string, f gitdiff.Format, ok bool) {
	kind, name, _ := strings.Cut(rest, "/")
	for _, format := range []gitdiff.Format{gitdiff.Diff, gitdiff.Patch} {
		if n, found := strings.CutSuffix(name, "."+string(format)); found && n != "" {
			name, f = n, format
		}
	}
	if f == "" {
		return "", "", false
	}
	api := "/repos/" + url.PathEscape(owner) + "/" + url.PathEscape(repo)
	switch {
	case kind == "pull" && isNumber(name):
		return api + "/pulls/" + name, f, true
	case kind == "commit" && !strings.Contains(name, "/"):
		return api + "/commits/" + url.PathEscape(name), f, true
	case kind == "compare":
		// A basehead may hold slashes (branch names): escaped, it is the
		// one path segment the API reads.
		return api + "/compare/" + url.PathEscape(name), f, true
	}
	return "", "", false
}

// isNumber reports whether s is decimal digits.
func isNumber(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// plainText answers a 200 as text/plain (the web's type of a diff and a
// patch) whatever Content-Type the API's handler set; other answers keep
// theirs (JSON errors).
type plainText struct {
	http.ResponseWriter
	wrote bool
}

func (p *plainText) WriteHeader(code int) {
	if !p.wrote && code == http.StatusOK {
		p.Header().Set("Content-Type", "text/plain; charset=utf-8")
	}
	p.wrote = true
	p.ResponseWriter.WriteHeader(code)
}

func (p *plainText) Write(b []byte) (int, error) {
	if !p.wrote {
		p.WriteHeader(http.StatusOK)
	}
	return p.ResponseWriter.Write(b)
}

// Unwrap lets the API layer find its recorder of the response.
func (p *plainText) Unwrap() http.ResponseWriter { return p.ResponseWriter }

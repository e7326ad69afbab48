// Package web serves the pages behind every html_url that forgeapi's
// JSON carries: a user's or organization's page with its repositories, a
// repository (README, file tree, branches, tags, clone URLs), its trees,
// files (highlighted, with line anchors and a raw link), commits, a
// commit's and a comparison's diff, issues, pull requests (conversation,
// commits, files changed) and releases.
//
// It is one web layer with internal/console: the console's session,
// sign-in, layout, security headers and error page (console.Handler.Page
// and Render). Pages are server-rendered html/template, no JavaScript.
// A visitor sees what the API would show them: the access rules are the
// API's (access.RepoRole for the signed-in user, or anonymous), and a
// repository the visitor may not read is the 404 page, as the API's 404,
// with a sign-in link for anonymous visitors.
//
// The addresses share the host root with the API and with git: the
// pages answer requests that accept text/html (browsers); API clients
// keep the API's JSON 404 for paths no route serves. The raw address of
// a file answers any client.
package web

import (
	"context"
	"embed"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"forgeapi/internal/access"
	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/codesearch"
	"forgeapi/internal/commitcomments"
	"forgeapi/internal/console"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/issues"
	"forgeapi/internal/pulls"
	"forgeapi/internal/releases"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

//go:embed templates/*.html
var templateFiles embed.FS

// StylesheetPath is where the pages' own stylesheet (file listings,
// diffs and the highlighter's classes) is served, beside the console's.
const StylesheetPath = "/console/static/web.css"

// Handler serves the pages. Register it once, after the console's.
type Handler struct {
	DB       *store.DB
	Console  *console.Handler
	Repos    *repos.Service
	Issues   *issues.Service
	Pulls    *pulls.Service
	Releases *releases.Service
	// CommitComments shows the comments of a commit on its page.
	CommitComments *commitcomments.Service
	// Code searches code for the search page; nil leaves code search out.
	Code *codesearch.Handler
	// Files serves, for any client, the single-segment addresses that are
	// files rather than owners' pages (a login has no dot: LOGIN.keys,
	// LOGIN.gpg); nil leaves them to the owner's page.
	Files func(w http.ResponseWriter, r *http.Request, name string)

	pages map[string]*template.Template
	css   []byte
}

// wantsPage reports whether the request asks for HTML: a browser's
// navigation, never an API client's.
func wantsPage(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "text/html")
}

// browser wraps a page for browsers; other clients get the API's JSON
// 404, as for any path no route serves.
func (h *Handler) browser(fn console.PageFunc) http.Handler {
	page := h.Console.Page(fn)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !wantsPage(r) {
			apiNotFound(w, r)
			return
		}
		page.ServeHTTP(w, r)
	})
}

func apiNotFound(w http.ResponseWriter, r *http.Request) {
	r.Pattern = "" // the metrics count it as unmatched
	httpapi.WriteError(w, r, apierr.NotFound())
}

// repoVisit is a visitor on a repository they may read.
type repoVisit struct {
	x    console.Visitor
	repo *repos.Repository
	role auth.Role
}

// formTarget reads the repository and the issue or pull request number
// of a form's path (/console/{owner}/{repo}/.../{number}/...) for the
// signed-in visitor: signIn refuses an anonymous one, a repository the
// visitor cannot see is visitRepo's refusal, a number that is not one is
// 404.
func (h *Handler) formTarget(ctx context.Context, x console.Visitor, r *http.Request, signIn error) (*repoVisit, int64, error) {
	if x.Login() == "" {
		return nil, 0, signIn
	}
	v, err := h.visitRepo(ctx, x, r.PathValue("owner"), r.PathValue("repo"))
	if err != nil {
		return nil, 0, err
	}
	n, err := strconv.ParseInt(r.PathValue("number"), 10, 64)
	if err != nil || n <= 0 {
		return nil, 0, apierr.NotFound()
	}
	return v, n, nil
}

// visitRepo returns the repository when the visitor may read it, else
// the 404 (the same for a repository that does not exist).
func (h *Handler) visitRepo(ctx context.Context, x console.Visitor, owner, name string) (*repoVisit, error) {
	repo, err := repos.ByOwnerAndName(ctx, h.DB, owner, name)
	if err != nil {
		return nil, hidden(x, err)
	}
	role, err := access.RepoRole(ctx, h.DB, x.Principal(), repo)
	if err != nil {
		return nil, err
	}
	if role == auth.RoleNone {
		return nil, hidden(x, store.ErrNotFound)
	}
	return &repoVisit{x: x, repo: repo, role: role}, nil
}

// redirectRenamed answers a request for a repository's old name (its
// owner's or its own, before a rename or transfer) with a 301 to the same
// page under the repository's name now, when the visitor may read it; it
// reports whether it did. The API follows renames the same way.
func (h *Handler) redirectRenamed(w http.ResponseWriter, r *http.Request, x console.Visitor) (bool, error) {
	ctx := r.Context()
	repo, err := repos.Renamed(ctx, h.DB, r.PathValue("owner"), r.PathValue("repo"))
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if role, err := access.RepoRole(ctx, h.DB, x.Principal(), repo); err != nil || role == auth.RoleNone {
		return false, err
	}
	to := "/" + url.PathEscape(repo.Owner.Login) + "/" + url.PathEscape(repo.Name)
	if rest := r.PathValue("rest"); rest != "" {
		to += "/" + escapePath(rest)
	}
	if r.URL.RawQuery != "" {
		to += "?" + r.URL.RawQuery
	}
	http.Redirect(w, r, to, http.StatusMovedPermanently)
	return true, nil
}

// isNotFound reports whether err is a 404 (hidden's, or apierr's).
func isNotFound(err error) bool {
	var ae *apierr.Error
	return errors.As(err, &ae) && ae.Status == http.StatusNotFound
}

// hidden is the 404 of what the visitor may not see (or what is not
// there): with a hint to sign in for an anonymous visitor.
func hidden(x console.Visitor, err error) error {
	if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	if x.Login() == "" {
		return apierr.New(http.StatusNotFound, "This page does not exist, or you may need to sign in to see it.")
	}
	return apierr.New(http.StatusNotFound, "This page does not exist, or you may not see it.")
}

// account reads an account by login; hidden when there is none.
func (h *Handler) account(ctx context.Context, x console.Visitor, login string) (*accounts.Account, error) {
	a, err := accounts.ByLogin(ctx, h.DB, login)
	if err != nil {
		return nil, hidden(x, err)
	}
	return a, nil
}

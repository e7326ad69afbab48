// Package console serves forgeapi's web console: server-rendered pages
// (html/template, embedded templates and one stylesheet, no JavaScript)
// for people rather than programs. It holds the sign-in pages (password,
// then a one-time password for accounts with two-factor authentication),
// the pages of the OAuth web application flow and device flow (consent at
// GET /login/oauth/authorize, the code entry at /login/device; the
// flows themselves are internal/oauthweb's), a repository's and an
// organization's webhooks with their Recent Deliveries and Redeliver,
// personal access tokens and authorized OAuth apps.
//
// Pages authenticate with a session cookie (server-side sessions, see
// sessions.go), never with the API's Authorization header, and the API
// never reads the cookie: the API needs no CSRF defence and the pages
// have one (a token on every form, checked on every POST). Errors are
// HTML pages, never the API's JSON, and bad input is a 4xx page, never a
// 500.
package console

import (
	"context"
	"embed"
	"errors"
	"html/template"
	"log/slog"
	"net/http"
	"time"

	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/oauth"
	"forgeapi/internal/oauthweb"
	"forgeapi/internal/store"
	"forgeapi/internal/webhooks"
)

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static/console.css
var stylesheet []byte

// Paths of the console. The API is served at the host root too, and git
// at /{owner}/{repo}/..., so a repository's settings cannot have their own
// pattern at the platform's /{owner}/{repo}/settings/hooks (it collides
// with GET /repos/{owner}/{repo}/hooks): their forms post under
// RepoPrefix, and their pages are served at the platform's path from
// git's route (RepoHooksPages) as well as under RepoPrefix.
const (
	LoginPath        = "/login"
	SessionPath      = "/session"
	TwoFactorPath    = "/sessions/two-factor"
	LogoutPath       = "/logout"
	SettingsPath     = "/settings"
	TokensPath       = "/settings/tokens"
	ApplicationsPath = "/settings/applications"
	AuthorizePath    = "/login/oauth/authorize"
	DevicePath       = "/login/device"
	DeviceDecidePath = "/login/device/confirm"
	RepoPrefix       = "/console"       // RepoPrefix/{owner}/{repo}/settings/hooks (the forms)
	OrgPrefix        = "/organizations" // OrgPrefix/{org}/settings/hooks (the platform's path)
	StylesheetPath   = "/console/static/console.css"
)

// Config configures the console. The zero value of each duration is its
// documented default.
type Config struct {
	// SessionTTL is how long a session lasts after sign-in: 0 means
	// DefaultSessionTTL.
	SessionTTL time.Duration
}

// DefaultSessionTTL is a session's lifetime: two weeks, as the platform's.
const DefaultSessionTTL = 14 * 24 * time.Hour

// otpTTL bounds the wait between the password and the one-time password.
const otpTTL = 10 * time.Minute

// Handler serves the console's pages.
type Handler struct {
	DB       *store.DB
	Authn    *auth.Authenticator
	Webhooks *webhooks.Service
	OAuth    *oauth.Service
	OAuthWeb *oauthweb.Service
	Config   Config
	// Announcement, when set, reads the installation's announcement that
	// every page shows ("" for none).
	Announcement func(context.Context) (string, error)
	Now          func() time.Time // default time.Now
	Logger       *slog.Logger     // default slog.Default()

	pages     map[string]*template.Template
	repoHooks *http.ServeMux // RepoHooksPages
}

func (h *Handler) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

func (h *Handler) logger() *slog.Logger {
	if h.Logger != nil {
		return h.Logger
	}
	return slog.Default()
}

func (h *Handler) sessionTTL() time.Duration {
	if h.Config.SessionTTL > 0 {
		return h.Config.SessionTTL
	}
	return DefaultSessionTTL
}

func serveStylesheet(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	w.Header().Set("Cache-Control", "public, max-age=3600")
	_, _ = w.Write(stylesheet)
}

// pageFunc serves one page for a visit; an error it returns is rendered
// as the error page (see errorPage).
type pageFunc func(w http.ResponseWriter, r *http.Request, v *visit) error

// page wraps a pageFunc: it sets the pages' security headers, reads the
// session, checks the CSRF token of every POST and renders errors.
func (h *Handler) page(fn pageFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hdr := w.Header()
		hdr.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; frame-ancestors 'none'")
		hdr.Set("X-Frame-Options", "DENY")
		hdr.Set("X-Content-Type-Options", "nosniff")
		hdr.Set("Referrer-Policy", "same-origin")
		hdr.Set("Cache-Control", "no-store")
		v, err := h.newVisit(w, r)
		if err == nil && r.Method == http.MethodPost {
			err = v.checkCSRF(r)
		}
		if err == nil {
			err = fn(w, r, v)
		}
		if err != nil {
			h.renderError(w, r, v, err)
		}
	})
}

// pageError is an error shown to the visitor as is, with its status.
type pageError struct {
	Status  int
	Title   string
	Message string
}

func (e *pageError) Error() string { return e.Message }

func notFound() error {
	return &pageError{Status: http.StatusNotFound, Title: "Not found", Message: "This page does not exist, or you may not see it."}
}

func badRequest(msg string) error {
	return &pageError{Status: http.StatusBadRequest, Title: "Bad request", Message: msg}
}

// renderError renders err as the error page: a pageError or an
// *apierr.Error with its status and message, anything else (logged) as a
// 500 that says nothing of it. store.ErrNotFound is a 404.
func (h *Handler) renderError(w http.ResponseWriter, r *http.Request, v *visit, err error) {
	var pe *pageError
	var ae *apierr.Error
	switch {
	case errors.As(err, &pe):
	case errors.As(err, &ae):
		pe = &pageError{Status: ae.Status, Title: http.StatusText(ae.Status), Message: ae.Message}
		for k, vals := range ae.Header {
			if k == "Retry-After" {
				w.Header()[k] = vals
			}
		}
	case errors.Is(err, store.ErrNotFound):
		pe = notFound().(*pageError)
	case errors.Is(err, context.Canceled):
		return
	default:
		h.logger().ErrorContext(r.Context(), "console page", "path", r.URL.Path, "err", err)
		pe = &pageError{Status: http.StatusInternalServerError, Title: "Something went wrong",
			Message: "The server could not show this page. Try again later."}
	}
	if v == nil {
		v = &visit{}
	}
	h.render(w, r, v, pe.Status, "error", pe)
}

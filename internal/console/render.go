package console

import (
	"bytes"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"forgeapi/internal/markdown"
)

// layoutData is what every page's template gets: the layout's parts
// (title, the signed-in user, the CSRF token of its forms) and the page's
// own data in Page.
type layoutData struct {
	Title string
	User  *session
	CSRF  string
	Page  any
	// Announcement is the installation's announcement, rendered ("" for
	// none).
	Announcement template.HTML
}

var layoutFuncs = template.FuncMap{
	"join": strings.Join,
	"time": func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") },
	"timep": func(t *time.Time) string {
		if t == nil {
			return "never"
		}
		return t.UTC().Format("2006-01-02 15:04:05 UTC")
	},
	"ms": func(seconds float64) string { return fmt.Sprintf("%.0f ms", seconds*1000) },
}

// parsePages parses each page's template with the layout; it panics on an
// error (the templates are embedded).
func parsePages() map[string]*template.Template {
	names, err := fs.Glob(templateFiles, "templates/*.html")
	if err != nil {
		panic(err)
	}
	pages := map[string]*template.Template{}
	for _, file := range names {
		name := strings.TrimSuffix(strings.TrimPrefix(file, "templates/"), ".html")
		if name == "layout" {
			continue
		}
		pages[name] = template.Must(template.New("layout.html").Funcs(layoutFuncs).ParseFS(templateFiles, "templates/layout.html", file))
	}
	return pages
}

// pageTitles are the titles of the pages whose data has none.
var pageTitles = map[string]string{
	"login": "Sign in", "two-factor": "Two-factor authentication", "settings": "Settings",
	"tokens": "Personal access tokens", "applications": "Authorized OAuth apps", "consent": "Authorize application",
	"device": "Device activation", "device-confirm": "Authorize device", "device-done": "Device activation",
	"hooks": "Webhooks", "hook": "Webhook", "deliveries": "Recent Deliveries", "delivery": "Delivery",
}

// titled is page data that names its page's title.
type titled interface{ PageTitle() string }

// render writes the named page with the status.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, v *visit, status int, name string, data any) {
	t, ok := h.pages[name]
	if !ok {
		h.logger().Error("console: no template", "name", name)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	title := pageTitles[name]
	if td, ok := data.(titled); ok {
		title = td.PageTitle()
	}
	h.execute(w, r, v, status, t, title, data)
}

// execute renders t in the layout with the status. It renders into a
// buffer first, so that a template error is a clean 500, never half a
// page.
func (h *Handler) execute(w http.ResponseWriter, r *http.Request, v *visit, status int, t *template.Template, title string, data any) {
	var buf bytes.Buffer
	page := layoutData{Title: title, User: v.User(), CSRF: v.csrf, Page: data, Announcement: h.announcement(r)}
	if err := t.Execute(&buf, page); err != nil {
		h.logger().ErrorContext(r.Context(), "console: render", "page", title, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// announcement renders the installation's announcement (Markdown, raw
// HTML left out) for the layout: "" when there is none, or when it cannot
// be read (logged: the page is served without it).
func (h *Handler) announcement(r *http.Request) template.HTML {
	if h.Announcement == nil {
		return ""
	}
	text, err := h.Announcement(r.Context())
	var out []byte
	if err == nil && text != "" {
		out, err = markdown.Render([]byte(text), markdown.Options{})
	}
	if err != nil {
		h.logger().WarnContext(r.Context(), "console: the announcement", "err", err)
		return ""
	}
	return template.HTML(out) // the renderer leaves raw HTML out
}

// PageTitle is the error page's title.
func (e *pageError) PageTitle() string { return e.Title }

// seeOther redirects after a POST (303: the browser follows with GET).
func seeOther(w http.ResponseWriter, r *http.Request, to string) error {
	http.Redirect(w, r, to, http.StatusSeeOther)
	return nil
}

package console

import (
	"html/template"
	"io/fs"
	"net/http"

	"forgeapi/internal/auth"
)

// Visitor is what a page of another web package (internal/web) knows of
// its visitor: the console's session, read by Handler.Page.
type Visitor struct{ v *visit }

// Principal returns the visitor as the access rules see a person: the
// signed-in user, or an anonymous principal.
func (x Visitor) Principal() *auth.Principal {
	if x.v == nil || x.v.User() == nil {
		return &auth.Principal{}
	}
	return x.v.principal()
}

// Login is the signed-in user's login, "" for an anonymous visitor.
func (x Visitor) Login() string {
	if x.v == nil || x.v.User() == nil {
		return ""
	}
	return x.v.User().login
}

// PageFunc serves one page of another web package; an error it returns is
// rendered as the console's error page (an *apierr.Error with its status
// and message, store.ErrNotFound as a 404, anything else a 500 that says
// nothing of it).
type PageFunc func(w http.ResponseWriter, r *http.Request, x Visitor) error

// Page wraps fn as the console's own pages are: the security headers, the
// session, the CSRF check of every POST and the error page. Register must
// have run first (it parses the error page).
func (h *Handler) Page(fn PageFunc) http.Handler {
	return h.page(func(w http.ResponseWriter, r *http.Request, v *visit) error { return fn(w, r, Visitor{v}) })
}

// ParsePage parses a page of another web package: the console's layout
// (its header, stylesheet and a "head" block the page may fill) with the
// files of fsys that patterns name, which define "content". funcs are
// added to the layout's. It panics on an error (templates are embedded).
func ParsePage(funcs template.FuncMap, fsys fs.FS, patterns ...string) *template.Template {
	t := template.Must(template.New("layout.html").Funcs(layoutFuncs).Funcs(funcs).ParseFS(templateFiles, "templates/layout.html"))
	return template.Must(t.ParseFS(fsys, patterns...))
}

// Render writes a page parsed by ParsePage with the status and title, in
// the layout (the visitor's name, the CSRF token of its forms); data is
// the page's own, as .Page in the templates.
func (h *Handler) Render(w http.ResponseWriter, r *http.Request, x Visitor, status int, t *template.Template, title string, data any) {
	v := x.v
	if v == nil {
		v = &visit{}
	}
	h.execute(w, r, v, status, t, title, data)
}

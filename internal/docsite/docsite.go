// Package docsite serves the documentation pages of package docs as
// HTML: GET /docs/ is the index page, GET /docs/{page} a page by name
// (with or without ".md"). The pages are rendered with
// goldmark (GitHub-flavoured tables), links between pages rewritten to
// the served URLs, and a small embedded stylesheet. They are rendered
// once, on the first request. Unknown pages answer the API's JSON 404.
package docsite

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"net/http"
	"strings"
	"sync"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"forgeapi/docs"
	"forgeapi/internal/apierr"
	"forgeapi/internal/httpapi"
)

// Prefix is the URL path under which the pages are served.
const Prefix = "/docs/"

//go:embed style.css
var style string

// Site serves the pages, rendered on the first request (servers that
// tests start by the hundred never pay for it).
type Site struct {
	once  sync.Once
	pages map[string][]byte // name -> complete HTML document
	err   error
}

// New returns the site of the pages of package docs.
func New() *Site { return &Site{} }

// Page returns the HTML document of the named page, and false when there
// is no such page.
func (s *Site) Page(name string) ([]byte, bool, error) {
	s.once.Do(func() { s.pages, s.err = render() })
	page, ok := s.pages[name]
	return page, ok, s.err
}

// render renders every page of package docs.
func render() (map[string][]byte, error) {
	md := goldmark.New(
		goldmark.WithExtensions(extension.Table, extension.Strikethrough),
		goldmark.WithParserOptions(parser.WithAutoHeadingID(),
			parser.WithASTTransformers(util.Prioritized(linkRewriter{}, 100))),
	)
	pages := map[string][]byte{}
	for _, name := range docs.Pages() {
		src, _ := docs.Source(name)
		var body bytes.Buffer
		if err := md.Convert(src, &body); err != nil {
			return nil, fmt.Errorf("render docs/%s.md: %w", name, err)
		}
		var page bytes.Buffer
		err := pageTemplate.Execute(&page, pageData{Title: title(src, name), Style: template.CSS(style),
			Body: template.HTML(body.String()), Index: name == docs.Index})
		if err != nil {
			return nil, fmt.Errorf("render docs/%s.md: %w", name, err)
		}
		pages[name] = page.Bytes()
	}
	return pages, nil
}

// Register adds the documentation routes to a server.
func (s *Site) Register(mux interface{ Handle(string, http.Handler) }) {
	mux.Handle("GET /docs", http.RedirectHandler(Prefix, http.StatusMovedPermanently))
	mux.Handle("GET "+Prefix+"{$}", s.handler(func(*http.Request) string { return docs.Index }))
	mux.Handle("GET "+Prefix+"{page}", s.handler(func(r *http.Request) string {
		return strings.TrimSuffix(r.PathValue("page"), ".md")
	}))
}

func (s *Site) handler(pageName func(*http.Request) string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		page, ok, err := s.Page(pageName(r))
		switch {
		case err != nil:
			httpapi.WriteError(w, r, err)
			return
		case !ok:
			httpapi.WriteError(w, r, apierr.NotFound())
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "public, max-age=300")
		_, _ = w.Write(page)
	})
}

// title is the text of the page's first level-one heading, or its name.
func title(src []byte, name string) string {
	for _, line := range strings.Split(string(src), "\n") {
		if t, ok := strings.CutPrefix(line, "# "); ok {
			return strings.TrimSpace(t)
		}
	}
	return name
}

// linkRewriter points links to sibling pages ("webhooks.md#delivery") at
// their served URLs ("webhooks#delivery"), which resolve relative to both
// /docs/ and /docs/{page}. Other links are left alone.
type linkRewriter struct{}

func (linkRewriter) Transform(doc *ast.Document, _ text.Reader, _ parser.Context) {
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if link, ok := n.(*ast.Link); ok && entering {
			link.Destination = []byte(servedLink(string(link.Destination)))
		}
		return ast.WalkContinue, nil
	})
}

// servedLink rewrites one link destination.
func servedLink(dest string) string {
	if strings.Contains(dest, ":") || strings.HasPrefix(dest, "/") {
		return dest // absolute URL or path
	}
	file, fragment, _ := strings.Cut(dest, "#")
	name, ok := strings.CutSuffix(file, ".md")
	if !ok {
		return dest
	}
	if _, exists := docs.Source(name); !exists {
		return dest
	}
	if name == docs.Index {
		name = "./"
	}
	if fragment != "" {
		return name + "#" + fragment
	}
	return name
}

type pageData struct {
	Title string
	Style template.CSS
	Body  template.HTML
	Index bool
}

var pageTemplate = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} · forgeapi</title>
<style>{{.Style}}</style>
</head>
<body>
<nav>{{if not .Index}}<a href="./">forgeapi documentation</a>{{else}}forgeapi documentation{{end}}</nav>
<main>
{{.Body}}
</main>
</body>
</html>
`))

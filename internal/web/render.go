package web

import (
	"bytes"
	_ "embed"
	"html/template"
	"io/fs"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/alecthomas/chroma/v2/styles"

	"forgeapi/internal/console"
	"forgeapi/internal/issues"
)

//go:embed static/web.css
var baseCSS []byte

// funcs are the templates' helpers beyond the layout's.
var funcs = template.FuncMap{
	"date":        func(t time.Time) string { return t.UTC().Format("Jan 2, 2006") },
	"short":       shortSHA,
	"firstLine":   firstLine,
	"pathEscape":  escapePath,
	"bytes":       humanBytes,
	"inc":         func(n int) int { return n + 1 },
	"dec":         func(n int) int { return n - 1 },
	"states":      func() []string { return []string{"open", "closed", "all"} },
	"conv":        conversation,
	"commentForm": newCommentForm,
	"pullAction":  pullAction,
	"diffView":    diffView,
}

// conversation is what the "conversation" template shows: the opening
// post and the comments.
func conversation(is *issues.Issue, body any, comments []timelineEntry) map[string]any {
	return map[string]any{"Issue": is, "Body": body, "Comments": comments}
}

// shortSHA is the seven characters a SHA is shown by.
func shortSHA(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}

// parsePages parses each page's template with the console's layout; it
// panics on an error (the templates are embedded).
func parsePages() map[string]*template.Template {
	names, err := fs.Glob(templateFiles, "templates/*.html")
	if err != nil {
		panic(err)
	}
	pages := map[string]*template.Template{}
	for _, file := range names {
		name := strings.TrimSuffix(strings.TrimPrefix(file, "templates/"), ".html")
		if name == "parts" {
			continue
		}
		pages[name] = console.ParsePage(funcs, templateFiles, "templates/parts.html", file)
	}
	return pages
}

// render writes the named page with status 200 and its title.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, x console.Visitor, name, title string, data any) error {
	h.Console.Render(w, r, x, http.StatusOK, h.pages[name], title, data)
	return nil
}

// stylesheet is the pages' CSS: their own rules and the highlighter's
// classes (the GitHub style).
func stylesheet() []byte {
	var b bytes.Buffer
	b.Write(baseCSS)
	_ = highlighter.WriteCSS(&b, styles.Get("github"))
	return b.Bytes()
}

func (h *Handler) serveStylesheet(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	w.Header().Set("Cache-Control", "public, max-age=3600")
	_, _ = w.Write(h.css)
}

// humanBytes is a size as people read it.
func humanBytes(n int64) string {
	switch {
	case n >= 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MB"
	case n >= 1<<10:
		return strconv.FormatFloat(float64(n)/(1<<10), 'f', 1, 64) + " KB"
	}
	return strconv.FormatInt(n, 10) + " Bytes"
}

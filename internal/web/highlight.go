package web

import (
	"bytes"
	"html/template"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/alecthomas/chroma/v2/styles"
)

// maxHighlight is the largest file the blob page highlights; a larger
// one is shown by its raw link alone.
const maxHighlight = 512 << 10

// highlighter writes code with classes (the stylesheet holds the style:
// the pages' Content-Security-Policy allows no inline style) and a
// linkable number on each line: #L12 is line 12.
var highlighter = html.New(html.WithClasses(true), html.WithLineNumbers(true),
	html.WithLinkableLineNumbers(true, "L"), html.TabWidth(8))

// highlight renders a file's text as highlighted HTML, the lexer chosen
// by the file's name, else by its content, else plain text.
func highlight(name string, text []byte) (template.HTML, error) {
	lexer := lexers.Match(name)
	if lexer == nil {
		lexer = lexers.Analyse(string(text))
	}
	if lexer == nil {
		lexer = lexers.Fallback
	}
	it, err := chroma.Coalesce(lexer).Tokenise(nil, string(text))
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := highlighter.Format(&b, styles.Get("github"), it); err != nil {
		return "", err
	}
	return template.HTML(b.String()), nil // #nosec: chroma escapes the text
}

// isBinary reports whether data looks like a binary file (a NUL in its
// first 8,000 bytes, as git decides).
func isBinary(data []byte) bool {
	return bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0
}

// trustedHTML marks the output of internal/markdown, which leaves raw
// HTML out and escapes text, as safe.
func trustedHTML(b []byte) template.HTML { return template.HTML(b) } // #nosec

// Package markdown renders the platform's Markdown to HTML: CommonMark
// with GitHub's extensions (tables, strikethrough, autolinks, task
// lists) through goldmark, raw HTML left out, and in GFM mode, as in
// issues and comments, line breaks kept and @mentions and #123 references
// linked to what they name. It knows no database: the caller resolves the
// names a text mentions (Options.Resolve), once per text.
package markdown

import (
	"bytes"
	stdhtml "html"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// Options say how to render a text.
type Options struct {
	// GFM renders as comments are: single line breaks kept. Without it,
	// as files (README) are: a single line break joins the lines.
	GFM bool
	// Resolve, when set, is asked once about the logins and issue
	// numbers the text mentions, which are then linked; what it leaves
	// out stays plain text. The numbers are those of #123 references,
	// within the repository of the rendering's context. Without it
	// nothing is linked (POST /markdown's markdown mode).
	Resolve func(logins []string, numbers []int64) (Resolved, error)
}

// Resolved are the mentions a text's names resolve to.
type Resolved struct {
	// Users maps a mentioned login (as written) to the account's web
	// address.
	Users map[string]string
	// Issues maps an issue or pull request number to what it is.
	Issues map[int64]Issue
}

// Issue is the target of a #123 reference.
type Issue struct {
	URL         string // web address of the issue or pull request
	PullRequest bool
}

// Render renders src as HTML.
func Render(src []byte, opts Options) ([]byte, error) {
	ref := &references{resolve: opts.Resolve}
	parseOpts := []parser.Option{}
	rendererOpts := []goldmark.Option{}
	if opts.Resolve != nil {
		parseOpts = append(parseOpts, parser.WithASTTransformers(prioritized(ref)))
	}
	if opts.GFM {
		rendererOpts = append(rendererOpts, goldmark.WithRendererOptions(html.WithHardWraps()))
	}
	md := goldmark.New(append(rendererOpts,
		goldmark.WithExtensions(extension.GFM),
		goldmark.WithParserOptions(parseOpts...))...)
	var out bytes.Buffer
	if err := md.Convert(src, &out); err != nil {
		return nil, err
	}
	if ref.err != nil {
		return nil, ref.err
	}
	return out.Bytes(), nil
}

// mention finds @login (not inside a word or an address) and reference
// #123 (not inside a word, a path or an entity).
var (
	mention   = regexp.MustCompile(`(?:^|[^\w@/.+-])@([A-Za-z0-9](?:[A-Za-z0-9]|-[A-Za-z0-9]){0,38})\b`)
	reference = regexp.MustCompile(`(?:^|[^\w/&#])#([1-9][0-9]{0,9})\b`)
)

// link is one mention or reference found in a text node: the bytes
// [start, end) of the source it covers.
type link struct {
	start, end int
	login      string
	number     int64
}

// references is the AST transformer that links mentions and references.
type references struct {
	resolve func([]string, []int64) (Resolved, error)
	err     error
}

// Transform finds the candidates in the text nodes outside code and
// links, resolves them at once, and replaces each resolved one with a
// link.
func (r *references) Transform(doc *ast.Document, reader text.Reader, _ parser.Context) {
	if r.resolve == nil {
		return
	}
	src := reader.Source()
	found := map[*ast.Text][]link{}
	var order []*ast.Text
	var logins []string
	var numbers []int64
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		switch n.Kind() {
		case ast.KindCodeSpan, ast.KindLink, ast.KindAutoLink, ast.KindImage, ast.KindCodeBlock, ast.KindFencedCodeBlock, ast.KindHTMLBlock, ast.KindRawHTML:
			return ast.WalkSkipChildren, nil
		}
		t, ok := n.(*ast.Text)
		if !entering || !ok {
			return ast.WalkContinue, nil
		}
		links := candidates(src, t.Segment)
		if len(links) > 0 {
			found[t] = links
			order = append(order, t)
			for _, l := range links {
				if l.login != "" {
					logins = append(logins, l.login)
				} else {
					numbers = append(numbers, l.number)
				}
			}
		}
		return ast.WalkContinue, nil
	})
	if len(order) == 0 {
		return
	}
	resolved, err := r.resolve(unique(logins), unique(numbers))
	if err != nil {
		r.err = err
		return
	}
	for _, t := range order {
		replace(t, found[t], resolved)
	}
}

// candidates are the mentions and references in a text segment, in
// order.
func candidates(src []byte, seg text.Segment) []link {
	value := seg.Value(src)
	var out []link
	for _, m := range mention.FindAllSubmatchIndex(value, -1) {
		out = append(out, link{start: seg.Start + m[2] - 1, end: seg.Start + m[3], login: string(value[m[2]:m[3]])})
	}
	for _, m := range reference.FindAllSubmatchIndex(value, -1) {
		n, err := strconv.ParseInt(string(value[m[2]:m[3]]), 10, 64)
		if err == nil {
			out = append(out, link{start: seg.Start + m[2] - 1, end: seg.Start + m[3], number: n})
		}
	}
	slices.SortFunc(out, func(a, b link) int { return a.start - b.start })
	return out
}

// replace splits text node t around its resolved links.
func replace(t *ast.Text, links []link, res Resolved) {
	parent := t.Parent()
	seg := t.Segment
	pos := seg.Start
	var prev ast.Node = t
	insert := func(n ast.Node) {
		parent.InsertAfter(parent, prev, n)
		prev = n
	}
	replaced := false
	for _, l := range links {
		a := anchor(l, res)
		if a == nil {
			continue
		}
		if l.start > pos {
			insert(ast.NewTextSegment(text.NewSegment(pos, l.start)))
		}
		a.AppendChild(a, ast.NewTextSegment(text.NewSegment(l.start, l.end)))
		insert(a)
		pos, replaced = l.end, true
	}
	if !replaced {
		return
	}
	rest := ast.NewTextSegment(text.NewSegment(pos, seg.Stop))
	rest.SetSoftLineBreak(t.SoftLineBreak())
	rest.SetHardLineBreak(t.HardLineBreak())
	insert(rest)
	parent.RemoveChild(parent, t)
}

// anchor is the link of a resolved mention or reference, nil for one
// that names nothing.
func anchor(l link, res Resolved) *ast.Link {
	a := ast.NewLink()
	if l.login != "" {
		url, ok := res.Users[l.login]
		if !ok {
			return nil
		}
		a.Destination = []byte(url)
		a.SetAttributeString("class", []byte("user-mention notranslate"))
		a.SetAttributeString("data-hovercard-type", []byte("user"))
		return a
	}
	issue, ok := res.Issues[l.number]
	if !ok {
		return nil
	}
	kind := "issue"
	if issue.PullRequest {
		kind = "pull_request"
	}
	a.Destination = []byte(issue.URL)
	a.SetAttributeString("class", []byte("issue-link js-issue-link"))
	a.SetAttributeString("data-hovercard-type", []byte(kind))
	a.SetAttributeString("data-url", []byte(issue.URL))
	return a
}

func prioritized(t parser.ASTTransformer) util.PrioritizedValue { return util.Prioritized(t, 100) }

// unique is list without repeats, in first-seen order.
func unique[T comparable](list []T) []T {
	seen := make(map[T]bool, len(list))
	out := list[:0:0]
	for _, v := range list {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// Mentions returns the logins src mentions (@login outside code, links
// and addresses, as GFM rendering links them), each once, in order.
func Mentions(src []byte) ([]string, error) {
	var logins []string
	_, err := Render(src, Options{GFM: true, Resolve: func(found []string, _ []int64) (Resolved, error) {
		logins = found
		return Resolved{}, nil
	}})
	return logins, err
}

// PlainText is the text of rendered HTML without its markup: the
// platform's body_text of a Markdown body. Entities are decoded and
// runs of blank lines kept to one.
func PlainText(rendered []byte) string {
	var b strings.Builder
	inTag := false
	for _, c := range string(rendered) {
		switch {
		case c == '<':
			inTag = true
		case c == '>' && inTag:
			inTag = false
		case !inTag:
			b.WriteRune(c)
		}
	}
	text := stdhtml.UnescapeString(b.String())
	for strings.Contains(text, "\n\n\n") {
		text = strings.ReplaceAll(text, "\n\n\n", "\n\n")
	}
	return strings.TrimSpace(text)
}

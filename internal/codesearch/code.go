package codesearch

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"forgeapi/internal/access"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/search"
	"forgeapi/internal/store"
)

// codeKeys are the qualifiers a code search knows; others are words.
var codeKeys = []string{"repo", "user", "org", "path", "filename", "extension", "language", "in", "size"}

// languages are the extensions of the languages language: selects.
var languages = map[string][]string{
	"go": {"go"}, "javascript": {"js", "mjs", "cjs", "jsx"}, "typescript": {"ts", "tsx"}, "python": {"py"},
	"ruby": {"rb"}, "java": {"java"}, "c": {"c", "h"}, "c++": {"cc", "cpp", "cxx", "hpp", "hh"}, "cpp": {"cc", "cpp", "cxx", "hpp", "hh"},
	"c#": {"cs"}, "csharp": {"cs"}, "rust": {"rs"}, "shell": {"sh", "bash"}, "markdown": {"md", "markdown"},
	"html": {"html", "htm"}, "css": {"css"}, "json": {"json"}, "yaml": {"yml", "yaml"}, "php": {"php"},
	"swift": {"swift"}, "kotlin": {"kt", "kts"}, "scala": {"scala"}, "sql": {"sql"}, "toml": {"toml"},
}

// codeHit is a file found.
type codeHit struct {
	repoID                int64
	path, name, sha, head string
	size                  int64
	content               string
}

// codeItem is the platform's code-search-result-item.
type codeItem struct {
	Name        string               `json:"name"`
	Path        string               `json:"path"`
	SHA         string               `json:"sha"`
	URL         string               `json:"url"`
	GitURL      string               `json:"git_url"`
	HTMLURL     string               `json:"html_url"`
	Repository  *repos.JSON          `json:"repository"`
	Score       float64              `json:"score"`
	FileSize    int64                `json:"file_size"`
	TextMatches []search.TextMatches `json:"text_matches,omitempty"`
}

// searchCode answers GET /search/code: the files of the default branches
// of the repositories the caller sees whose content (or path, with
// in:path) holds every word and phrase; qualifiers repo:, user:, org:,
// path: (a directory), filename:, extension:, language: (by extension),
// in:file,path and size:. A query without words is a 422. sort=indexed
// orders by indexing time; best match otherwise (by repository and path).
// Past maxMatches files the answer is incomplete (boundMatches).
func (h *Handler) searchCode(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	req, err := h.readRequest(r, codeKeys)
	if err != nil {
		return err
	}
	matches := search.WantsTextMatches(r)
	found, err := h.findCode(ctx, req, r.URL.Query().Get("sort"), r.URL.Query().Get("order"), matches)
	if err != nil {
		return err
	}
	renderer := h.repoJSONs(ctx)
	ids := make([]int64, 0, len(found.hits))
	for _, c := range found.hits {
		ids = append(ids, c.repoID)
	}
	if err := renderer.prefetch(ctx, ids); err != nil {
		return err
	}
	items := make([]codeItem, 0, len(found.hits))
	for _, c := range found.hits {
		e, err := renderer.get(ctx, c.repoID)
		if err != nil {
			return err
		}
		item := codeItemOf(renderer.base, e, c)
		if matches {
			item.TextMatches = search.TextMatchesOf(item.URL, "FileContent", req.query,
				search.Property{Name: "content", Text: c.content}, search.Property{Name: "path", Text: c.path})
		}
		items = append(items, item)
	}
	httpapi.SetLinks(w, r, req.page, min(found.total, search.MaxResults))
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"total_count": found.total, "incomplete_results": found.incomplete, "items": items})
	return nil
}

// CodeFile is a file a code search found: its repository, path, and the
// head of the default branch it was indexed at.
type CodeFile struct {
	RepoID     int64
	Path, Head string
}

// SearchCode is GET /search/code's search for p (text with its
// qualifiers, best match, the page), for the web's search page: the files
// found and how many in all (at most maxMatches). Its refusals are the
// API's (422s of the query, or of a page past the first 1,000 results).
func (h *Handler) SearchCode(ctx context.Context, p *auth.Principal, text string, page httpapi.Page) ([]CodeFile, int, error) {
	if err := search.CheckText(text); err != nil {
		return nil, 0, err
	}
	if err := search.CheckDepth(page.Offset(), page.Limit()); err != nil {
		return nil, 0, err
	}
	readable, err := repos.ReadablePrivate(ctx, h.DB, p, access.ListedRepoRole)
	if err != nil {
		return nil, 0, err
	}
	req := request{query: search.Parse(text).Known(codeKeys...), page: page, readable: readable}
	found, err := h.findCode(ctx, req, "", "", false)
	if err != nil {
		return nil, 0, err
	}
	out := make([]CodeFile, len(found.hits))
	for i, c := range found.hits {
		out[i] = CodeFile{RepoID: c.repoID, Path: c.path, Head: c.head}
	}
	return out, found.total, nil
}

// codeFound is a page of a code search: its files, how many matched in
// all (at most maxMatches), and whether there were more.
type codeFound struct {
	hits       []codeHit
	total      int
	incomplete bool
}

// findCode runs a code search: the page of req's files (with their
// content when content is true) in the order of sort and order, among
// the first maxMatches files that match (boundMatches).
func (h *Handler) findCode(ctx context.Context, req request, sort, order string, content bool) (codeFound, error) {
	if !hasWords(req.query) {
		return codeFound{}, apierr.Custom("Search", "q", "The search must contain at least one word to look for in the code.")
	}
	orderBy, err := codeOrder(sort, order)
	if err != nil {
		return codeFound{}, err
	}
	matchSQL, args, err := h.matchQuery(req.query, req.readable)
	if err != nil {
		return codeFound{}, err
	}
	selected, total, incomplete, err := h.boundMatches(ctx, matchSQL, args)
	if err != nil {
		return codeFound{}, err
	}
	column := "''"
	if content {
		column = "f.content"
	}
	rows, err := h.DB.QueryContext(ctx, store.Dynamic+`SELECT f.repository_id, f.path, f.name, f.blob_sha, w.head_sha, f.size, `+
		column+codeFrom+selected+` ORDER BY `+orderBy+` LIMIT $1 OFFSET $2`, req.page.Limit(), req.page.Offset())
	if err != nil {
		return codeFound{}, store.Normalize(err)
	}
	defer rows.Close()
	found := codeFound{total: total, incomplete: incomplete}
	for rows.Next() {
		var c codeHit
		if err := rows.Scan(&c.repoID, &c.path, &c.name, &c.sha, &c.head, &c.size, &c.content); err != nil {
			return codeFound{}, err
		}
		found.hits = append(found.hits, c)
	}
	return found, rows.Err()
}

// maxMatches bounds the files a code search reads: as the platform's
// searches stop at their time limit and answer what they found with
// incomplete_results, forgeapi stops at the first maxMatches files the
// database's text engine yields (the most a search can page through),
// so that a word in every file of a large instance costs as much as one
// in a thousand files.
const maxMatches = search.MaxResults

// codeFrom is the FROM clause of the files and their repositories, up to
// the WHERE of the conditions; codeJoins its joins of the repositories.
const (
	codeJoins = ` JOIN code_search_work w ON w.repository_id = f.repository_id
	JOIN repositories r ON r.id = f.repository_id JOIN accounts a ON a.id = r.owner_id WHERE `
	codeFrom = ` FROM code_files f` + codeJoins
	// filesFirstJoins are codeJoins as lateral lookups of a file's
	// repository: the files are the outer loop whatever the planner
	// estimates (see matchQuery).
	filesFirstJoins = ` CROSS JOIN LATERAL (SELECT * FROM code_search_work w WHERE w.repository_id = f.repository_id OFFSET 0) w
	CROSS JOIN LATERAL (SELECT * FROM repositories r WHERE r.id = f.repository_id OFFSET 0) r
	CROSS JOIN LATERAL (SELECT * FROM accounts a WHERE a.id = r.owner_id OFFSET 0) a WHERE `
)

// matchQuery is the query of the ids of the first maxMatches+1 files q
// selects among the public repositories and the private ones of
// readable, with its arguments. On SQLite with a MATCH expression
// (codeConditions) code_files_fts is the outer loop, in rowid order: it
// yields the matches one by one and LIMIT stops it, whatever the number
// of files that match. On PostgreSQL the files are the outer loop too,
// each joined to its repository by lateral lookups (filesFirstJoins):
// the planner cannot tell how many files a LIKE of the trigram index
// selects (contents are too wide for its statistics) and, believing one,
// joined the repositories to every match, reading all of them (a word in
// every file of 1 GB: 17 s, against 0.2 s files first).
func (h *Handler) matchQuery(q search.Query, readable []int64) (string, []any, error) {
	where := repos.VisibleTo(readable)
	driver, err := h.codeConditions(where, q)
	if err != nil {
		return "", nil, err
	}
	from, order := codeFrom, ""
	switch {
	case driver != "":
		from, order = ` FROM code_files_fts x JOIN code_files f ON f.id = x.rowid`+codeJoins, ` ORDER BY x.rowid`
		where.Add("code_files_fts MATCH ?", false, driver)
	case h.DB.Dialect == store.Postgres:
		from = ` FROM code_files f` + filesFirstJoins
	}
	return `SELECT f.id` + from + where.String() + order + ` LIMIT ` + strconv.Itoa(maxMatches+1), where.Args, nil
}

// boundMatches reads the ids of the files query (matchQuery) selects, up
// to maxMatches, and returns the condition of the page's query (those
// ids), how many there are, and whether there were more (incomplete).
func (h *Handler) boundMatches(ctx context.Context, query string, args []any) (string, int, bool, error) {
	rows, err := h.DB.QueryContext(ctx, store.Dynamic+query, args...)
	if err != nil {
		return "", 0, false, store.Normalize(err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return "", 0, false, err
		}
		ids = append(ids, strconv.FormatInt(id, 10))
	}
	if err := rows.Err(); err != nil {
		return "", 0, false, err
	}
	incomplete := len(ids) > maxMatches
	if incomplete {
		ids = ids[:maxMatches]
	}
	if len(ids) == 0 {
		return "1 = 0", 0, false, nil
	}
	return "f.id IN (" + strings.Join(ids, ", ") + ")", len(ids), incomplete, nil
}

// codeItemOf renders a file found in the repository e.
func codeItemOf(base string, e *repoEntry, c codeHit) codeItem {
	full := e.repo.FullName()
	escaped := escapePath(c.path)
	return codeItem{
		Name: c.name, Path: c.path, SHA: c.sha,
		URL:        base + "/repos/" + full + "/contents/" + escaped + "?ref=" + c.head,
		GitURL:     base + "/repos/" + full + "/git/blobs/" + c.sha,
		HTMLURL:    httpapi.WebBase(base) + "/" + full + "/blob/" + c.head + "/" + escaped,
		Repository: e.json, Score: 1, FileSize: c.size,
	}
}

// escapePath escapes each element of a file's path for a URL.
func escapePath(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	return strings.Join(parts, "/")
}

// hasWords reports whether q has a word or phrase that is not negated.
func hasWords(q search.Query) bool {
	for _, t := range q.Terms {
		if !t.Negated && strings.TrimSpace(t.Text) != "" {
			return true
		}
	}
	return false
}

// codeOrder is the ORDER BY of sort and order.
func codeOrder(sort, order string) (string, error) {
	dir, err := search.Direction(order)
	if err != nil {
		return "", err
	}
	switch sort {
	case "", "best-match":
		return "f.repository_id ASC, f.path ASC", nil
	case "indexed":
		return "f.id" + dir, nil
	}
	return "", apierr.Invalid("Search", "sort", apierr.CodeInvalid)
}

// codeConditions adds the words (in the content, the path or both, as
// in: says) and the qualifiers. On SQLite the words of three characters
// and more, when one of them is not negated, are returned as the MATCH
// expression of code_files_fts (driver) instead, for the text index to
// drive the query (findCode).
func (h *Handler) codeConditions(where *search.Where, q search.Query) (driver string, err error) {
	inFile, inPath := true, true
	if v := q.Value("in"); v != "" {
		inFile, inPath = false, false
		for _, f := range strings.Split(strings.ToLower(v), ",") {
			inFile = inFile || f == "file"
			inPath = inPath || f == "path"
		}
		if !inFile && !inPath {
			return "", search.InvalidQualifier(search.Qualifier{Key: "in", Value: v})
		}
	}
	terms := q.Terms
	if h.DB.Dialect == store.SQLite {
		driver, terms = ftsDriver(terms, inFile, inPath)
	}
	for _, t := range terms {
		var parts []string
		var args []any
		if inFile {
			cond, arg := h.contentMatch(t.Text)
			parts, args = append(parts, cond), append(args, arg)
		}
		if inPath {
			parts, args = append(parts, h.like("lower(f.path)")), append(args, search.Like(t.Text))
		}
		where.Add("("+strings.Join(parts, " OR ")+")", t.Negated, args...)
	}
	for _, ql := range q.Qualifiers {
		if err := h.addCodeQualifier(where, ql); err != nil {
			return "", err
		}
	}
	return driver, nil
}

// ftsDriver is the MATCH expression of code_files_fts that selects the
// files holding the words of terms of three characters and more in their
// content (inFile), their path (inPath) or either (every word not
// negated, none of those negated), and the terms left for the other
// conditions; "" and every term when no such word is positive.
func ftsDriver(terms []search.Term, inFile, inPath bool) (string, []search.Term) {
	var columns []string
	if inFile {
		columns = append(columns, "content")
	}
	if inPath {
		columns = append(columns, "path")
	}
	return search.FTS5Match(terms, columns)
}

// contentMatch is the condition that a file's content holds text.
func (h *Handler) contentMatch(text string) (string, any) {
	cond, arg := h.textMatch("f.id", "code_files_fts", "f.content", text)
	if strings.Contains(cond, " MATCH ") { // code_files_fts indexes paths too
		arg = "{content} : " + arg.(string)
	}
	return cond, arg
}

// addCodeQualifier adds one qualifier's condition.
func (h *Handler) addCodeQualifier(where *search.Where, ql search.Qualifier) error {
	if ok, err := repos.AddPlaceQualifier(where, ql); ok || err != nil {
		return err
	}
	v := strings.ToLower(ql.Value)
	switch ql.Key {
	case "path":
		dir := strings.Trim(v, "/")
		if dir == "" {
			where.Add("f.path NOT LIKE '%/%'", ql.Negated)
			return nil
		}
		// the directory anywhere in the path, or the file itself
		where.Add("("+h.like("('/' || lower(f.path))")+" OR "+h.like("('/' || lower(f.path))")+")", ql.Negated,
			"%/"+likeText(dir)+"/%", "%/"+likeText(dir))
	case "filename":
		where.Add("(lower(f.name) = ? OR "+h.like("lower(f.name)")+")", ql.Negated, v, likeText(v)+".%")
	case "extension":
		where.Add("f.extension = ?", ql.Negated, strings.TrimPrefix(v, "."))
	case "language":
		exts := languages[v]
		if len(exts) == 0 {
			where.Add("1 = 0", ql.Negated)
			return nil
		}
		args := make([]any, len(exts))
		for i, e := range exts {
			args[i] = e
		}
		where.Add("f.extension IN ("+strings.TrimSuffix(strings.Repeat("?, ", len(exts)), ", ")+")", ql.Negated, args...)
	case "size":
		cond, args, ok := search.IntCondition("f.size", ql.Value)
		if !ok {
			return search.InvalidQualifier(ql)
		}
		where.Add(cond, ql.Negated, args...)
	}
	return nil
}

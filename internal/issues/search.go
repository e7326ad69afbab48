package issues

import (
	"context"
	"net/http"
	"regexp"
	"slices"
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

// searchKeys are the qualifiers an issue search knows; others are words.
var searchKeys = []string{"repo", "org", "user", "is", "type", "state", "author", "assignee", "mentions", "commenter",
	"involves", "label", "milestone", "no", "head", "base", "in", "created", "updated", "closed", "merged", "comments",
	"draft", "sort", "archived", "review-requested", "reviewed-by"}

// Search is an issue search: the query read, and the private
// repositories the caller may read (the public ones are searched too).
type Search struct {
	Query    search.Query
	Readable []int64
	Viewer   string // the caller's login, for @me; "" when anonymous
	Sort     string // comments, created, updated; "" for best match
	Desc     bool
	Limit    int
	Offset   int
	// Window, when set, picks the page from the total instead of Limit
	// and Offset: the results [start, end) (GraphQL's connections).
	Window func(total int) (start, end int, err error)
}

// NewSearch reads a search's query text, sort and order (sort and order
// may be "": a sort: qualifier or best match, descending) for the caller
// p; the private repositories p may read are looked up. A query that is
// empty or too long, or an unknown sort, is a 422.
func (svc *Service) NewSearch(ctx context.Context, p *auth.Principal, text, sort, order string) (Search, error) {
	if err := search.CheckText(text); err != nil {
		return Search{}, err
	}
	s := Search{Query: search.Parse(text).Known(searchKeys...)}
	var err error
	if s.Sort, s.Desc, err = searchOrder(sort, order, s.Query.Value("sort")); err != nil {
		return Search{}, err
	}
	if !p.Anonymous() {
		s.Viewer = p.Account.Login
		if s.Readable, err = repos.ReadablePrivate(ctx, svc.DB, p, access.ListedRepoRole); err != nil {
			return Search{}, err
		}
	}
	return s, nil
}

// Search returns a page of the issues and pull requests that s selects,
// completed as lists complete them, and how many it selects in all
// (Find's count: at most maxCounted).
func (svc *Service) Search(ctx context.Context, s Search) ([]*Issue, int, error) {
	found, err := svc.Find(ctx, s)
	return found.Issues, found.Total, err
}

// Found is a page of a search's results.
type Found struct {
	Issues []*Issue
	// Total is how many issues the search selects, counted up to
	// maxCounted.
	Total int
	// Incomplete is set when the search selects more than maxCounted:
	// Total is then maxCounted, and the results are those of the
	// maxCounted most recently created matches (as the platform answers
	// a search stopped at its time limit: the matches found so far, and
	// incomplete_results).
	Incomplete bool
	// Repos are the repositories of Issues, by id.
	Repos map[int64]*repos.Repository
}

// maxCounted is how many matches a search reads at most, newest first:
// the count stops there (Found.Incomplete). It is as deep as a search
// pages (search.MaxResults), so every page a client can ask for is
// among them. An exact count reads every match: a word in 100,000 of
// 1,000,000 issues cost a second.
const maxCounted = search.MaxResults

// Find returns a page of the issues and pull requests that s selects,
// completed as lists complete them, and how many it selects, counted up
// to maxCounted. It reads the ids of the first maxCounted+1 matches in
// creation order, newest first (on SQLite, with words, the text index
// yields them in that order and stops there), counts them, and takes the
// page from them.
func (svc *Service) Find(ctx context.Context, s Search) (Found, error) {
	q := &query{}
	driver, err := s.conditions(q, svc.DB.Dialect)
	if err != nil {
		return Found{}, err
	}
	ids, err := svc.newestMatches(ctx, driver, strings.Join(q.where, " AND "), q.args)
	if err != nil {
		return Found{}, err
	}
	if len(ids) > maxCounted && len(s.Query.Terms) == 0 {
		return svc.findAll(ctx, s, q)
	}
	found := Found{Incomplete: len(ids) > maxCounted}
	if found.Incomplete {
		ids = ids[:maxCounted]
	}
	found.Total = len(ids)
	if err := s.window(found.Total); err != nil {
		return Found{}, err
	}
	if s.Limit <= 0 || s.Offset >= len(ids) {
		found.Issues = []*Issue{}
		return found, nil
	}
	if found.Issues, err = svc.searchPage(ctx, s, ids); err != nil {
		return Found{}, err
	}
	found.Repos, err = svc.completeAcross(ctx, found.Issues)
	return found, err
}

// window sets s's Offset and Limit from its Window for total matches.
func (s *Search) window(total int) error {
	if s.Window == nil {
		return nil
	}
	start, end, err := s.Window(total)
	if err != nil {
		return err
	}
	s.Offset, s.Limit = start, end-start
	return nil
}

// searchFrom joins what a search's conditions read.
const searchFrom = ` FROM issues i JOIN repositories r ON r.id = i.repository_id JOIN accounts o ON o.id = r.owner_id
		LEFT JOIN pull_requests p ON p.issue_id = i.id WHERE `

// leanFrom is searchFrom when the conditions read issues only (no r.,
// o. or p.: the visibility test reads the private repositories' index,
// see conditions): every issue has its repository and owner, and at
// most one pull request, so the joins select the same ids; without them
// a word in 100 issues is not joined to every repository (PostgreSQL
// hashed all of them).
const leanFrom = ` FROM issues i WHERE `

// joinedAlias finds the aliases of searchFrom's joins in conditions.
var joinedAlias = regexp.MustCompile(`\b[rop]\.`)

// fromFor is the FROM of a search whose conditions are where.
func fromFor(where string) string {
	if joinedAlias.MatchString(where) {
		return searchFrom
	}
	return leanFrom
}

// findAll is Find for a search of more than maxCounted matches without
// words (qualifiers only: repo:, is:, label:...): the indexes count it
// exactly, as the platform does (a badge of a repository's open issues
// reads total_count), and the page is sorted among every match. A search
// with words stops at maxCounted instead (Find), where an exact count
// would read every match's text.
func (svc *Service) findAll(ctx context.Context, s Search, q *query) (Found, error) {
	where := strings.Join(q.where, " AND ")
	var found Found
	if err := svc.DB.QueryRowContext(ctx, store.Dynamic+`SELECT count(*)`+fromFor(where)+where, q.args...).Scan(&found.Total); err != nil {
		return Found{}, store.Normalize(err)
	}
	if err := s.window(found.Total); err != nil {
		return Found{}, err
	}
	if s.Limit <= 0 {
		found.Issues = []*Issue{}
		return found, nil
	}
	f := Filter{Sort: s.Sort, Desc: s.Desc}
	if f.Sort == "created" {
		f.Sort = "" // i.id, the order of creation
	}
	n := len(q.args)
	args := append(slices.Clone(q.args), s.Limit, s.Offset)
	list, err := collect(scanIssue)(svc.DB.QueryContext(ctx, store.Dynamic+`SELECT `+issueColumns+fromFor(where)+where+
		` ORDER BY `+f.order()+` LIMIT $`+strconv.Itoa(n+1)+` OFFSET $`+strconv.Itoa(n+2), args...))
	if err != nil {
		return Found{}, err
	}
	found.Issues = list
	found.Repos, err = svc.completeAcross(ctx, list)
	return found, err
}

// newestMatches returns the ids of the first maxCounted+1 issues the
// conditions select, newest first. With a driver (an FTS5 MATCH
// expression of issues_fts, SQLite) the text index is the outer loop:
// it yields rowids in descending order and the query stops at the
// limit, whatever the number of matches.
func (svc *Service) newestMatches(ctx context.Context, driver, where string, args []any) ([]int64, error) {
	from := fromFor(where)
	order := ` ORDER BY i.id DESC`
	if driver != "" {
		args = append(args, driver)
		joins := strings.TrimSuffix(strings.TrimPrefix(from, ` FROM issues i`), ` WHERE `) // "" for leanFrom
		from = ` FROM issues_fts f JOIN issues i ON i.id = f.rowid` + joins + ` WHERE issues_fts MATCH $` + strconv.Itoa(len(args)) + ` AND `
		order = ` ORDER BY f.rowid DESC`
	}
	rows, err := svc.DB.QueryContext(ctx, store.Dynamic+`SELECT i.id`+from+where+order+` LIMIT `+strconv.Itoa(maxCounted+1), args...)
	return collect(scanID)(rows, err)
}

// searchPage reads the page of s (Offset, Limit, Sort) among the issues
// of ids, which are newest first.
func (svc *Service) searchPage(ctx context.Context, s Search, ids []int64) ([]*Issue, error) {
	f := Filter{Sort: s.Sort, Desc: s.Desc}
	if f.Sort == "" || f.Sort == "created" { // i.id, the order of creation: ids are in it
		if !f.Desc {
			ids = slices.Clone(ids)
			slices.Reverse(ids)
		}
		ids = ids[s.Offset:min(len(ids), s.Offset+s.Limit)]
		byID, err := svc.issuesByID(ctx, ids)
		if err != nil {
			return nil, err
		}
		list := make([]*Issue, 0, len(ids))
		for _, id := range ids {
			if is := byID[id]; is != nil {
				list = append(list, is)
			}
		}
		return list, nil
	}
	args := make([]any, 0, len(ids)+2)
	for _, id := range ids {
		args = append(args, id)
	}
	args = append(args, s.Limit, s.Offset)
	return collect(scanIssue)(svc.DB.QueryContext(ctx, store.Dynamic+`SELECT `+issueColumns+` FROM issues i WHERE i.id IN `+
		in(len(ids))+` ORDER BY `+f.order()+` LIMIT $`+strconv.Itoa(len(ids)+1)+` OFFSET $`+strconv.Itoa(len(ids)+2), args...))
}

// issuesByID reads the issue rows of ids, by id.
func (svc *Service) issuesByID(ctx context.Context, ids []int64) (map[int64]*Issue, error) {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	list, err := collect(scanIssue)(svc.DB.QueryContext(ctx, store.Dynamic+`SELECT `+issueColumns+` FROM issues i WHERE i.id IN `+in(len(ids)), args...))
	if err != nil {
		return nil, err
	}
	out := make(map[int64]*Issue, len(list))
	for _, is := range list {
		out[is.ID] = is
	}
	return out, nil
}

// conditions adds the search's selection to q: the repositories the
// caller may read, then each qualifier and word (matched by dialect's
// text engine). On SQLite the words of three characters and more, when
// one of them is not negated and they are looked for in titles and
// bodies only, are returned as the MATCH expression of issues_fts
// (driver) instead, for the text index to drive the query (Find).
func (s Search) conditions(q *query, dialect store.Dialect) (driver string, err error) {
	// the repository is public: not among the private ones (the partial
	// index repositories_private), so that the search needs no join
	// (leanFrom) unless a qualifier reads the repository
	readable := "i.repository_id NOT IN (SELECT id FROM repositories WHERE private)"
	if len(s.Readable) > 0 {
		ids := make([]any, len(s.Readable))
		for i, id := range s.Readable {
			ids[i] = id
		}
		readable = "(" + readable + " OR i.repository_id IN (" + strings.TrimSuffix(strings.Repeat("?, ", len(ids)), ", ") + "))"
		q.add(readable, ids...)
	} else {
		q.add(readable)
	}
	in := s.fields()
	for _, ql := range s.Query.Qualifiers {
		cond, args, err := s.qualifier(ql, dialect)
		if err != nil {
			return "", err
		}
		if cond == "" {
			continue
		}
		if ql.Negated {
			cond = "NOT " + cond
		}
		q.add(cond, args...)
	}
	terms := s.Query.Terms
	match := issueTextMatch
	if s.oneRepository() {
		match = narrowMatch
	} else if dialect == store.SQLite {
		driver, terms = ftsDriver(terms, in)
	}
	for _, t := range terms {
		cond, args := textCondition(match, dialect, t.Text, in)
		if t.Negated {
			cond = "NOT " + cond
		}
		q.add(cond, args...)
	}
	return driver, nil
}

// ftsDriver is the MATCH expression of issues_fts that selects the
// issues holding the words of terms of three characters and more in the
// fields of in (every word not negated, none of those negated), and the
// terms left for textCondition; "" and every term when the text index
// cannot drive: no such word is positive, or in holds comments (another
// table) or no field of issues_fts.
func ftsDriver(terms []search.Term, in []string) (string, []search.Term) {
	var columns []string
	for _, field := range in {
		switch field {
		case "title", "body":
			if !slices.Contains(columns, field) {
				columns = append(columns, field)
			}
		default:
			return "", terms
		}
	}
	if len(columns) == 0 {
		return "", terms
	}
	return search.FTS5Match(terms, columns)
}

// fields are the fields the search's words are looked for in: the in:
// qualifier's, title and body by default.
func (s Search) fields() []string {
	if v := s.Query.Value("in"); v != "" {
		return strings.Split(strings.ToLower(v), ",")
	}
	return []string{"title", "body"}
}

// textMatches are the text-match media type's fragments of the issue's
// title and body (those of the fields searched) that hold the words.
func (s Search) textMatches(j *issueJSON) []search.TextMatches {
	var props []search.Property
	for _, field := range s.fields() {
		switch field {
		case "title":
			props = append(props, search.Property{Name: "title", Text: j.Title})
		case "body":
			if j.Body != nil {
				props = append(props, search.Property{Name: "body", Text: *j.Body})
			}
		}
	}
	return search.TextMatchesOf(j.URL, "Issue", s.Query, props...)
}

// oneRepository reports whether the search selects one repository's
// issues (a repo: qualifier not negated): few enough rows to read.
func (s Search) oneRepository() bool {
	for _, ql := range s.Query.Qualifiers {
		if ql.Key == "repo" && !ql.Negated {
			return true
		}
	}
	return false
}

// narrowMatch is search.TextMatch for a search of one repository: the
// column itself, lowercased, by LIKE. The text index answers "which
// rows of all hold the word", which costs what the word's rows across
// the instance cost (130 ms for a word in 100,000 issues); reading one
// repository's rows costs what they cost.
func narrowMatch(dialect store.Dialect, _, _, column, text string) (string, any) {
	if folded := foldedColumn(dialect, column); folded != "" {
		return search.LikeOp(dialect, "COALESCE("+folded+", '')"), search.Like(text)
	}
	return search.LikeOp(dialect, "lower(COALESCE("+column+", ''))"), search.Like(text)
}

// Folded is the SQL of the issues column (aliased i: i.title or i.body)
// lowercased, to test with LIKE against a lowercased pattern: on
// PostgreSQL the column that stores it lowercased (migration 00184; its
// trigram index covers it and no row is lowered when read), else
// lower(column). Both answer the same for ASCII text.
func Folded(dialect store.Dialect, column string) string {
	if folded := foldedColumn(dialect, column); folded != "" {
		return folded
	}
	return "lower(" + column + ")"
}

// foldedColumn is, on PostgreSQL, the column that stores a column of
// issues lowercased (migration 00184), which its trigram index covers
// and which a search tests without lowering every row it reads; "" for
// another column or dialect.
func foldedColumn(dialect store.Dialect, column string) string {
	if dialect != store.Postgres {
		return ""
	}
	switch column {
	case "i.title":
		return "i.title_folded"
	case "i.body":
		return "i.body_folded"
	}
	return ""
}

// textCondition is a word or phrase held by the fields of in (title,
// body, comments), case-insensitively, as match finds it: through the
// database's text indexes of issues' titles and bodies and of comments'
// bodies (issueTextMatch), or narrowMatch.
func textCondition(match func(store.Dialect, string, string, string, string) (string, any), dialect store.Dialect,
	text string, in []string) (string, []any) {
	var parts []string
	var args []any
	for _, field := range in {
		switch field {
		case "title":
			cond, arg := match(dialect, "i.id", "issues_fts", "i.title", text)
			parts, args = append(parts, cond), append(args, arg)
		case "body":
			cond, arg := match(dialect, "i.id", "issues_fts", "i.body", text)
			parts, args = append(parts, cond), append(args, arg)
		case "comments":
			cond, arg := match(dialect, "c.id", "issue_comments_fts", "c.body", text)
			parts, args = append(parts, `i.id IN (SELECT c.issue_id FROM issue_comments c WHERE `+cond+`)`), append(args, arg)
		}
	}
	if len(parts) == 0 {
		return "1 = 0", nil
	}
	return "(" + strings.Join(parts, " OR ") + ")", args
}

// issueTextMatch is search.TextMatch with issues_fts's column filters:
// issues_fts indexes both titles (i.title) and bodies (i.body), and a
// phrase looked for in one of them is filtered to its column. On
// PostgreSQL titles and bodies are matched in their folded columns
// (foldedColumn), which the trigram indexes cover.
func issueTextMatch(dialect store.Dialect, id, fts, column, text string) (string, any) {
	if folded := foldedColumn(dialect, column); folded != "" {
		return search.LikeOp(dialect, folded), search.Like(text)
	}
	cond, arg := search.TextMatch(dialect, id, fts, column, text)
	if filter := ftsColumn(column); filter != "" && strings.Contains(cond, " MATCH ") {
		arg = filter + arg.(string)
	}
	return cond, arg
}

// ftsColumn is the column filter of issues_fts for a column of issues,
// "" for another.
func ftsColumn(column string) string {
	switch column {
	case "i.title":
		return "{title} : "
	case "i.body":
		return "{body} : "
	}
	return ""
}

// qualifier is the condition of one qualifier in the dialect ("" for one
// that selects nothing by itself, as in: and sort:); a value that cannot
// be read is a 422 as the platform's.
func (s Search) qualifier(ql search.Qualifier, dialect store.Dialect) (string, []any, error) {
	v := ql.Value
	if v == "@me" {
		v = s.Viewer
	}
	lv := strings.ToLower(v)
	switch ql.Key {
	case "repo":
		owner, name, ok := strings.Cut(lv, "/")
		if !ok {
			return "", nil, search.InvalidQualifier(ql)
		}
		return `(lower(o.login) = ? AND lower(r.name) = ?)`, []any{owner, name}, nil
	case "org", "user":
		return `lower(o.login) = ?`, []any{lv}, nil
	case "is", "type", "state", "draft":
		return isCondition(ql.Key, lv)
	case "author":
		return `i.user_id IN (SELECT id FROM accounts WHERE lower(login) = ?)`, []any{lv}, nil
	case "assignee":
		return `EXISTS (SELECT 1 FROM issue_assignees ia JOIN accounts a ON a.id = ia.user_id WHERE ia.issue_id = i.id AND lower(a.login) = ?)`, []any{lv}, nil
	case "mentions":
		like := "%@" + lv + "%"
		return `(COALESCE(` + Folded(dialect, "i.body") + `, '') LIKE ? OR EXISTS (SELECT 1 FROM issue_comments c WHERE c.issue_id = i.id AND lower(c.body) LIKE ?))`, []any{like, like}, nil
	case "commenter":
		return `EXISTS (SELECT 1 FROM issue_comments c JOIN accounts a ON a.id = c.user_id WHERE c.issue_id = i.id AND lower(a.login) = ?)`, []any{lv}, nil
	case "involves":
		like := "%@" + lv + "%"
		return `(i.user_id IN (SELECT id FROM accounts WHERE lower(login) = ?) OR COALESCE(` + Folded(dialect, "i.body") + `, '') LIKE ?
			OR EXISTS (SELECT 1 FROM issue_assignees ia JOIN accounts a ON a.id = ia.user_id WHERE ia.issue_id = i.id AND lower(a.login) = ?)
			OR EXISTS (SELECT 1 FROM issue_comments c JOIN accounts a ON a.id = c.user_id WHERE c.issue_id = i.id AND lower(a.login) = ?))`,
			[]any{lv, like, lv, lv}, nil
	case "label":
		names := strings.Split(lv, ",")
		args := make([]any, len(names))
		for i, n := range names {
			args[i] = n
		}
		return `EXISTS (SELECT 1 FROM issue_labels il JOIN labels l ON l.id = il.label_id WHERE il.issue_id = i.id AND lower(l.name) IN (` +
			strings.TrimSuffix(strings.Repeat("?, ", len(args)), ", ") + `))`, args, nil
	case "milestone":
		return `i.milestone_id IN (SELECT m.id FROM milestones m WHERE lower(m.title) = ?)`, []any{lv}, nil
	case "no":
		switch lv {
		case "label":
			return `NOT EXISTS (SELECT 1 FROM issue_labels il WHERE il.issue_id = i.id)`, nil, nil
		case "milestone":
			return `i.milestone_id IS NULL`, nil, nil
		case "assignee":
			return `NOT EXISTS (SELECT 1 FROM issue_assignees ia WHERE ia.issue_id = i.id)`, nil, nil
		}
		return "", nil, search.InvalidQualifier(ql)
	case "review-requested":
		return `p.id IN (SELECT rr.pull_request_id FROM pull_request_review_requests rr JOIN accounts a ON a.id = rr.user_id
			WHERE lower(a.login) = ?)`, []any{lv}, nil
	case "reviewed-by":
		return `p.id IN (SELECT rv.pull_request_id FROM pull_request_reviews rv JOIN accounts a ON a.id = rv.user_id
			WHERE lower(a.login) = ? AND rv.state <> 'PENDING')`, []any{lv}, nil
	case "archived": // no repository is archived here
		switch lv {
		case "false":
			return `1 = 1`, nil, nil
		case "true":
			return `1 = 0`, nil, nil
		}
		return "", nil, search.InvalidQualifier(ql)
	case "head":
		return `lower(p.head_ref) = ?`, []any{lv}, nil
	case "base":
		return `lower(p.base_ref) = ?`, []any{lv}, nil
	case "comments":
		cond, args, ok := search.IntCondition("i.comments", ql.Value)
		if !ok {
			return "", nil, search.InvalidQualifier(ql)
		}
		return cond, args, nil
	case "created", "updated", "closed", "merged":
		column := map[string]string{"created": "i.created_at", "updated": "i.updated_at", "closed": "i.closed_at", "merged": "p.merged_at"}[ql.Key]
		cond, args, ok := search.DateCondition(column, v)
		if !ok {
			return "", nil, search.InvalidQualifier(ql)
		}
		return cond, args, nil
	}
	return "", nil, nil // in:, sort:
}

// isCondition reads is:, type:, state: and draft:.
func isCondition(key, v string) (string, []any, error) {
	switch key + ":" + v {
	case "is:issue", "type:issue":
		return `i.is_pull_request = ?`, []any{false}, nil
	case "is:pr", "type:pr":
		return `i.is_pull_request = ?`, []any{true}, nil
	case "is:open", "state:open":
		return `i.state = 'open'`, nil, nil
	case "is:closed", "state:closed":
		return `i.state = 'closed'`, nil, nil
	case "is:merged":
		return `p.merged_at IS NOT NULL`, nil, nil
	case "is:unmerged":
		return `(p.id IS NOT NULL AND p.merged_at IS NULL AND i.state = 'closed')`, nil, nil
	case "is:public":
		return `r.private = ?`, []any{false}, nil
	case "is:private":
		return `r.private = ?`, []any{true}, nil
	case "is:locked":
		return `i.locked = ?`, []any{true}, nil
	case "is:unlocked":
		return `i.locked = ?`, []any{false}, nil
	case "is:draft", "draft:true":
		return `p.draft = ?`, []any{true}, nil
	case "draft:false":
		return `p.draft = ?`, []any{false}, nil
	}
	return "", nil, search.InvalidQualifier(search.Qualifier{Key: key, Value: v})
}

// searchResultJSON is an issue search result: the issue with its score
// and, for the text-match media type, its text matches.
type searchResultJSON struct {
	issueJSON
	Score       float64              `json:"score"`
	TextMatches []search.TextMatches `json:"text_matches,omitempty"`
}

// searchIssues answers GET /search/issues: the issues and pull requests
// of the repositories the caller may read that q selects, with
// total_count and incomplete_results (Find: counted up to 1,000), sorted by sort (comments,
// created, updated; best match, which forgeapi orders by creation, by
// default) in order (desc by default), paged within the first 1,000;
// the text-match media type adds each item's text_matches.
func (h *Handler) searchIssues(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	qv := r.URL.Query()
	s, err := h.Service.NewSearch(ctx, auth.PrincipalFrom(ctx), qv.Get("q"), qv.Get("sort"), qv.Get("order"))
	if err != nil {
		return err
	}
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	if err := search.CheckDepth(page.Offset(), page.Limit()); err != nil {
		return err
	}
	s.Limit, s.Offset = page.Limit(), page.Offset()
	found, err := h.Service.Find(ctx, s)
	if err != nil {
		return err
	}
	base := httpapi.BaseURL(ctx)
	items := make([]issueJSON, len(found.Issues))
	for i, is := range found.Issues { // no repository object: search results have repository_url
		items[i] = toIssueJSON(urlsOf(base, found.Repos[is.RepoID]), is)
	}
	matches := search.WantsTextMatches(r)
	out := make([]searchResultJSON, len(items))
	for i, j := range items {
		if j.Body == nil {
			j.Body = new(string) // a search result's body is a string, as the description has it
		}
		out[i] = searchResultJSON{issueJSON: j, Score: 1}
		if matches {
			out[i].TextMatches = s.textMatches(&j)
		}
	}
	httpapi.SetLinks(w, r, page, min(found.Total, search.MaxResults))
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"total_count": found.Total, "incomplete_results": found.Incomplete, "items": out,
		"search_type": "lexical"})
	return nil
}

// searchOrder reads sort and order (or a sort: qualifier such as
// sort:updated-asc); a value the platform does not know is a 422.
func searchOrder(sort, order, qualifier string) (string, bool, error) {
	desc := order != "asc"
	if order != "" && order != "asc" && order != "desc" {
		return "", false, apierr.Invalid("Search", "order", apierr.CodeInvalid)
	}
	if sort == "" && qualifier != "" {
		sort, desc = qualifier, true
		if s, ok := strings.CutSuffix(qualifier, "-asc"); ok {
			sort, desc = s, false
		} else {
			sort = strings.TrimSuffix(qualifier, "-desc")
		}
	}
	switch sort {
	case "", "best-match", "created", "updated", "comments":
		if sort == "best-match" {
			sort = ""
		}
		return sort, desc, nil
	}
	return "", false, apierr.Invalid("Search", "sort", apierr.CodeInvalid)
}

package repos

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/search"
	"forgeapi/internal/store"
)

// searchKeys are the qualifiers a repository search knows; others are
// words, as on the platform.
var searchKeys = []string{"in", "user", "org", "repo", "is", "fork", "stars", "forks", "created", "pushed",
	"topic", "topics", "template", "archived", "mirror", "license", "language", "sort"}

// helpWantedIssues counts a repository's open issues labelled "help
// wanted": the help-wanted-issues sort.
const helpWantedIssues = `(SELECT count(*) FROM issues i JOIN issue_labels il ON il.issue_id = i.id
	JOIN labels l ON l.id = il.label_id
	WHERE i.repository_id = r.id AND i.state = 'open' AND NOT i.is_pull_request AND lower(l.name) = 'help wanted')`

// searchRepositories answers GET /search/repositories: Service.Search
// for the caller, as q, sort, order and the page ask.
func (h *Handler) searchRepositories(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	qv := r.URL.Query()
	text, page, err := httpapi.SearchRequest(r)
	if err != nil {
		return err
	}
	p := auth.PrincipalFrom(ctx)
	found, total, err := h.Service.Search(ctx, p, h.roleFunc(), Search{Text: text, Sort: qv.Get("sort"),
		Order: qv.Get("order"), Limit: page.Limit(), Offset: page.Offset()})
	if err != nil {
		return err
	}
	items, err := h.searchItems(ctx, p, found)
	if err != nil {
		return err
	}
	if search.WantsTextMatches(r) {
		q := search.Parse(text)
		for i, repo := range found {
			items[i].matches = search.TextMatchesOf(items[i].repo.URL, "Repository", q,
				search.Property{Name: "name", Text: repo.Name}, search.Property{Name: "description", Text: repo.Description})
		}
	}
	httpapi.WriteSearch(w, r, page, total, items)
	return nil
}

// Search is a repository search as REST's GET /search/repositories and
// GraphQL's search(type: REPOSITORY) ask it.
type Search struct {
	Text  string // the query: words and qualifiers
	Sort  string // stars, forks, help-wanted-issues, updated; "" for the query's sort: or best match
	Order string // asc or desc ("": desc)
	// Limit and Offset pick the page.
	Limit, Offset int
	// Window, when set, picks the page from the total instead of Limit
	// and Offset: the results [start, end) (GraphQL's connections).
	Window func(total int) (start, end int, err error)
}

// Search returns a page of the repositories s selects among the public
// ones and the private ones p can read (role applies the credentials'
// limits, as ReadablePrivate), and how many it selects in all. Words
// match the name, the description or the topics (`in:` narrows);
// qualifiers: `user:`/`org:` an owner (`@me` is p), `repo:` a full
// name, `is:public|private|template|fork`, `fork:true|only` (forks are
// left out otherwise, and with `fork:false`), `stars:`, `forks:`,
// `topics:` ranges, `created:`/`pushed:` dates, `topic:`, `template:`,
// `license:` a key, `archived:`, `mirror:` (none is a mirror here),
// `language:` (no language is detected here, so it
// selects nothing). Sorted by s.Sort (or the query's `sort:`) in
// s.Order. An empty or too long query, an unreadable qualifier or an
// unknown sort is a 422.
func (s *Service) Search(ctx context.Context, p *auth.Principal, role RoleFunc, in Search) ([]*Repository, int, error) {
	if err := search.CheckText(in.Text); err != nil {
		return nil, 0, err
	}
	q := search.Parse(in.Text).Known(searchKeys...)
	order, err := repoSearchOrder(in.Sort, in.Order, q)
	if err != nil {
		return nil, 0, err
	}
	readable, err := ReadablePrivate(ctx, s.DB, p, role)
	if err != nil {
		return nil, 0, err
	}
	viewer := ""
	if !p.Anonymous() {
		viewer = p.Account.Login
	}
	where, err := repoConditions(q, readable, viewer)
	if err != nil {
		return nil, 0, err
	}
	const from = repoFrom + ` LEFT JOIN repository_counts c ON c.repository_id = r.id
		LEFT JOIN repository_licenses lic ON lic.repository_id = r.id WHERE `
	var total int
	if err := s.DB.QueryRowContext(ctx, store.Dynamic+`SELECT count(*)`+from+where.String(), where.Args...).Scan(&total); err != nil {
		return nil, 0, store.Normalize(err)
	}
	if in.Window != nil {
		start, end, err := in.Window(total)
		if err != nil {
			return nil, 0, err
		}
		in.Offset, in.Limit = start, end-start
	}
	if in.Limit <= 0 {
		return []*Repository{}, total, nil
	}
	found, err := list(ctx, s.DB, store.Dynamic+`SELECT `+repoColumns+from+where.String()+` ORDER BY `+order+
		` LIMIT `+where.Placeholder(0)+` OFFSET `+where.Placeholder(1), append(where.Args, in.Limit, in.Offset)...)
	return found, total, err
}

// searchItem is a repository in search results: the repository object
// and its score.
type searchItem struct {
	repo    *JSON
	matches []search.TextMatches // the text-match media type's, when asked for
}

// MarshalJSON renders the repository object with "score" (always 1:
// forgeapi does not rank by relevance) added, and "text_matches" when
// the item has any.
func (s searchItem) MarshalJSON() ([]byte, error) {
	b := s.repo.AppendJSON(nil)
	b = append(b[:len(b)-1], `,"score":1`...)
	if len(s.matches) > 0 {
		m, err := json.Marshal(s.matches)
		if err != nil {
			return nil, err
		}
		b = append(append(b, `,"text_matches":`...), m...)
	}
	return append(b, '}'), nil
}

// searchItems renders a page of found repositories for p.
func (h *Handler) searchItems(ctx context.Context, p *auth.Principal, found []*Repository) ([]searchItem, error) {
	urls := URLsOf(ctx)
	items := make([]searchItem, 0, len(found))
	for _, repo := range found {
		role, err := h.roleOf(ctx, p, repo)
		if err != nil {
			return nil, err
		}
		if p.Anonymous() {
			role = auth.RoleNone
		}
		st, err := h.Service.Stats(ctx, repo.ID)
		if err != nil {
			return nil, err
		}
		j := ToJSON(urls, repo, st, role)
		items = append(items, searchItem{repo: &j})
	}
	return items, nil
}

// ReadablePrivate returns the ids of the private repositories p can
// read: those of p, of p's organizations and granted to p, kept when
// role (which applies the token's limits: access.ListedRepoRole) gives at
// least read. Anonymous callers read none.
func ReadablePrivate(ctx context.Context, q store.Q, p *auth.Principal, role RoleFunc) ([]int64, error) {
	if p.Anonymous() {
		return nil, nil
	}
	candidates, err := list(ctx, q, `SELECT `+repoColumns+repoFrom+`WHERE r.private = $1 AND (r.owner_id = $2
		OR r.owner_id IN (SELECT org_id FROM org_members WHERE user_id = $2)
		OR r.id IN (SELECT repository_id FROM repo_grants WHERE user_id = $2))`, true, p.Account.ID)
	if err != nil {
		return nil, err
	}
	var ids []int64
	for _, repo := range candidates {
		r, err := role(ctx, q, p, repo)
		if err != nil {
			return nil, err
		}
		if r > auth.RoleNone {
			ids = append(ids, repo.ID)
		}
	}
	return ids, nil
}

// roleFunc is the handler's roleOf as a RoleFunc.
func (h *Handler) roleFunc() RoleFunc {
	return func(ctx context.Context, _ store.Q, p *auth.Principal, r *Repository) (auth.Role, error) {
		return h.roleOf(ctx, p, r)
	}
}

// repoSearchOrder is the ORDER BY of sort (or the query's sort:
// qualifier) and order.
func repoSearchOrder(sort, order string, q search.Query) (string, error) {
	if v := q.Value("sort"); sort == "" && v != "" {
		sort, order, _ = strings.Cut(v, "-") // sort:stars-asc
	}
	dir, err := search.Direction(order)
	if err != nil {
		return "", err
	}
	switch sort {
	case "", "best-match":
		return "COALESCE(c.stars, 0) DESC, r.id ASC", nil
	case "stars":
		return "COALESCE(c.stars, 0)" + dir + ", r.id" + dir, nil
	case "forks":
		return "COALESCE(c.forks, 0)" + dir + ", r.id" + dir, nil
	case "updated":
		return "r.updated_at" + dir + ", r.id" + dir, nil
	case "help-wanted-issues":
		return helpWantedIssues + dir + ", r.id" + dir, nil
	}
	return "", apierr.Invalid("Search", "sort", apierr.CodeInvalid)
}

// repoConditions is the WHERE clause of a repository search over the
// public repositories and the private ones in readable, for the caller
// viewer (the login @me names; "" when anonymous).
func repoConditions(q search.Query, readable []int64, viewer string) (*search.Where, error) {
	where := VisibleTo(readable)
	if err := addRepoTerms(where, q); err != nil {
		return nil, err
	}
	forks := "exclude"
	for _, ql := range q.Qualifiers {
		if ql.Key == "fork" && !strings.EqualFold(ql.Value, "false") || (ql.Key == "is" && strings.EqualFold(ql.Value, "fork")) {
			forks = ""
		}
		if strings.EqualFold(ql.Value, "@me") && (ql.Key == "user" || ql.Key == "org") {
			ql.Value = viewer
		}
		if err := addRepoQualifier(where, ql); err != nil {
			return nil, err
		}
	}
	if forks == "exclude" {
		where.Add("r.fork_of_id IS NULL", false)
	}
	return where, nil
}

// VisibleTo starts a WHERE clause with the repositories (aliased r) the
// caller sees: the public ones and the private ones in readable
// (ReadablePrivate).
func VisibleTo(readable []int64) *search.Where {
	where := &search.Where{}
	visible := "NOT r.private"
	if len(readable) > 0 {
		visible = "(NOT r.private OR r.id IN (" + strings.TrimSuffix(strings.Repeat("?, ", len(readable)), ", ") + "))"
	}
	where.Add(visible, false, int64sAsAny(readable)...)
	return where
}

// addRepoTerms adds the words: each must be in one of the `in:` fields
// (name, description, topics by default).
func addRepoTerms(where *search.Where, q search.Query) error {
	in := []string{"name", "description", "topics"}
	if v := q.Value("in"); v != "" {
		in = strings.Split(strings.ToLower(v), ",")
	}
	for _, t := range q.Terms {
		like := search.Like(t.Text)
		var parts []string
		var vals []any
		for _, field := range in {
			column := map[string]string{"name": "lower(r.name)", "description": "lower(r.description)", "topics": "lower(r.topics)"}[field]
			if column == "" {
				continue // readme: not indexed here
			}
			parts, vals = append(parts, column+` LIKE ? ESCAPE '\'`), append(vals, like)
		}
		if len(parts) == 0 {
			parts = []string{"1 = 0"}
		}
		where.Add("("+strings.Join(parts, " OR ")+")", t.Negated, vals...)
	}
	return nil
}

// addRepoQualifier adds one qualifier's condition.
func addRepoQualifier(where *search.Where, ql search.Qualifier) error {
	if ok, err := AddPlaceQualifier(where, ql); ok || err != nil {
		return err
	}
	v := strings.ToLower(ql.Value)
	switch ql.Key {
	case "is":
		cond := map[string]string{"public": "NOT r.private", "private": "r.private", "template": "r.is_template",
			"fork": "r.fork_of_id IS NOT NULL"}[v]
		if cond == "" {
			return search.InvalidQualifier(ql)
		}
		where.Add(cond, ql.Negated)
	case "fork":
		switch v {
		case "only":
			where.Add("r.fork_of_id IS NOT NULL", ql.Negated)
		case "true", "false":
		default:
			return search.InvalidQualifier(ql)
		}
	case "template":
		b, err := boolValue(ql)
		if err != nil {
			return err
		}
		where.Add("r.is_template = ?", ql.Negated, b)
	case "archived":
		b, err := boolValue(ql)
		if err != nil {
			return err
		}
		where.Add("r.archived = ?", ql.Negated, b)
	case "mirror":
		b, err := boolValue(ql)
		if err != nil {
			return err
		}
		where.Add(map[bool]string{true: "1 = 0", false: "1 = 1"}[b], ql.Negated)
	case "language":
		where.Add("1 = 0", ql.Negated)
	case "license":
		where.Add("lower(lic.license_key) = ?", ql.Negated, v)
	case "topic":
		word := strings.TrimSuffix(strings.TrimPrefix(search.Like(v), "%"), "%")
		where.Add(`(' ' || lower(r.topics) || ' ') LIKE ? ESCAPE '\'`, ql.Negated, "% "+word+" %")
	case "stars", "forks", "topics":
		column := map[string]string{"stars": "COALESCE(c.stars, 0)", "forks": "COALESCE(c.forks, 0)", "topics": topicCount}[ql.Key]
		cond, vals, ok := search.IntCondition(column, ql.Value)
		if !ok {
			return search.InvalidQualifier(ql)
		}
		where.Add(cond, ql.Negated, vals...)
	case "created", "pushed":
		cond, vals, ok := search.DateCondition("r."+ql.Key+"_at", ql.Value)
		if !ok {
			return search.InvalidQualifier(ql)
		}
		where.Add(cond, ql.Negated, vals...)
	}
	return nil
}

// AddPlaceQualifier adds the condition of a user:, org: or repo:
// qualifier on the repository (aliased r) and its owner (aliased a); it
// reports whether ql was one of them.
func AddPlaceQualifier(where *search.Where, ql search.Qualifier) (bool, error) {
	v := strings.ToLower(ql.Value)
	switch ql.Key {
	case "user", "org":
		where.Add("lower(a.login) = ?", ql.Negated, v)
	case "repo":
		owner, name, ok := strings.Cut(v, "/")
		if !ok {
			return true, search.InvalidQualifier(ql)
		}
		where.Add("(lower(a.login) = ? AND lower(r.name) = ?)", ql.Negated, owner, name)
	default:
		return false, nil
	}
	return true, nil
}

// topicCount is the number of a repository's topics, kept space-separated.
const topicCount = `(CASE WHEN r.topics = '' THEN 0 ELSE length(r.topics) - length(replace(r.topics, ' ', '')) + 1 END)`

// boolValue reads a true|false qualifier.
func boolValue(ql search.Qualifier) (bool, error) {
	switch strings.ToLower(ql.Value) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, search.InvalidQualifier(ql)
}

func int64sAsAny(ids []int64) []any {
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = id
	}
	return out
}

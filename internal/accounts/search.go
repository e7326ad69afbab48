package accounts

import (
	"context"
	"net/http"
	"strings"

	"forgeapi/internal/apierr"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/search"
	"forgeapi/internal/store"
)

// userSearchKeys are the qualifiers a user search knows.
var userSearchKeys = []string{"type", "in", "user", "org", "repos", "followers", "created", "sort"}

// searchUsers answers GET /search/users: Search as q, sort, order and
// the page ask, each item with its score.
func (h *Handler) searchUsers(w http.ResponseWriter, r *http.Request) error {
	qv := r.URL.Query()
	text, page, err := httpapi.SearchRequest(r)
	if err != nil {
		return err
	}
	list, total, err := Search(r.Context(), h.DB, UserSearch{Text: text, Sort: qv.Get("sort"), Order: qv.Get("order"),
		Limit: page.Limit(), Offset: page.Offset()})
	if err != nil {
		return err
	}
	base := httpapi.BaseURL(r.Context())
	type item struct {
		SimpleUser
		Score float64 `json:"score"`
	}
	items := make([]item, len(list))
	for i, a := range list {
		items[i] = item{ToSimpleUser(base, a), 1}
	}
	httpapi.WriteSearch(w, r, page, total, items)
	return nil
}

// UserSearch is a search of users and organizations as REST's GET
// /search/users and GraphQL's search(type: USER) ask it.
type UserSearch struct {
	Text  string // the query: words and qualifiers
	Sort  string // followers, repositories, joined; "" for best match (by login)
	Order string // asc or desc ("": desc)
	// Limit and Offset pick the page.
	Limit, Offset int
	// Window, when set, picks the page from the total instead of Limit
	// and Offset: the results [start, end) (GraphQL's connections).
	Window func(total int) (start, end int, err error)
}

// Search returns a page of the users and organizations s selects (words
// in the login or the name, `in:login`, `in:name`, `type:user|org`,
// `user:`/`org:` a login, `repos:`, `followers:` and `created:` ranges),
// sorted by s.Sort (or the query's `sort:`) in s.Order, and how many it selects in all. Bots are
// not users here, as on the platform. An empty or too long query, an
// unreadable qualifier or an unknown sort is a 422.
func Search(ctx context.Context, db store.Q, s UserSearch) ([]*Account, int, error) {
	if err := search.CheckText(s.Text); err != nil {
		return nil, 0, err
	}
	q := search.Parse(s.Text).Known(userSearchKeys...)
	if v := q.Value("sort"); s.Sort == "" && v != "" {
		s.Sort, s.Order, _ = strings.Cut(v, "-") // sort:followers-asc
	}
	order, err := userSearchOrder(s.Sort, s.Order)
	if err != nil {
		return nil, 0, err
	}
	where, err := userConditions(q)
	if err != nil {
		return nil, 0, err
	}
	const from = ` FROM accounts LEFT JOIN account_counts c ON c.account_id = accounts.id WHERE `
	var total int
	if err := db.QueryRowContext(ctx, store.Dynamic+`SELECT count(*)`+from+where.String(), where.Args...).Scan(&total); err != nil {
		return nil, 0, store.Normalize(err)
	}
	if s.Window != nil {
		start, end, err := s.Window(total)
		if err != nil {
			return nil, 0, err
		}
		s.Offset, s.Limit = start, end-start
	}
	if s.Limit <= 0 {
		return []*Account{}, total, nil
	}
	list, err := queryAccounts(ctx, db, store.Dynamic+`SELECT `+accountColumns+from+where.String()+` ORDER BY `+order+
		` LIMIT `+where.Placeholder(0)+` OFFSET `+where.Placeholder(1), append(where.Args, s.Limit, s.Offset)...)
	return list, total, err
}

// userSearchOrder is the ORDER BY of sort and order.
func userSearchOrder(sort, order string) (string, error) {
	dir, err := search.Direction(order)
	if err != nil {
		return "", err
	}
	switch sort {
	case "":
		return "lower(login) ASC", nil
	case "followers":
		return "COALESCE(c.followers, 0)" + dir + ", id" + dir, nil
	case "repositories":
		return "COALESCE(c.public_repos, 0)" + dir + ", id" + dir, nil
	case "joined":
		return "created_at" + dir + ", id" + dir, nil
	}
	return "", apierr.Invalid("Search", "sort", apierr.CodeInvalid)
}

// userConditions is the WHERE clause of a user search.
func userConditions(q search.Query) (*search.Where, error) {
	where := &search.Where{}
	add := where.Add
	add("type <> ?", false, TypeBot)
	in := []string{"login", "name"}
	if v := q.Value("in"); v != "" {
		in = strings.Split(strings.ToLower(v), ",")
	}
	for _, t := range q.Terms {
		like := search.Like(t.Text)
		var parts []string
		var vals []any
		for _, field := range in {
			switch field {
			case "login":
				parts, vals = append(parts, `lower(login) LIKE ? ESCAPE '\'`), append(vals, like)
			case "name", "fullname":
				parts, vals = append(parts, `lower(name) LIKE ? ESCAPE '\'`), append(vals, like)
			}
		}
		if len(parts) == 0 {
			parts = []string{"1 = 0"}
		}
		add("("+strings.Join(parts, " OR ")+")", t.Negated, vals...)
	}
	for _, ql := range q.Qualifiers {
		v := strings.ToLower(ql.Value)
		switch ql.Key {
		case "type":
			types := map[string]string{"user": TypeUser, "org": TypeOrg}
			if types[v] == "" {
				return nil, search.InvalidQualifier(ql)
			}
			add("type = ?", ql.Negated, types[v])
		case "user", "org":
			add("lower(login) = ?", ql.Negated, v)
		case "repos", "followers":
			column := map[string]string{"repos": "COALESCE(c.public_repos, 0)", "followers": "COALESCE(c.followers, 0)"}[ql.Key]
			cond, vals, ok := search.IntCondition(column, ql.Value)
			if !ok {
				return nil, search.InvalidQualifier(ql)
			}
			add(cond, ql.Negated, vals...)
		case "created":
			cond, vals, ok := search.DateCondition("created_at", ql.Value)
			if !ok {
				return nil, search.InvalidQualifier(ql)
			}
			add(cond, ql.Negated, vals...)
		}
	}
	return where, nil
}

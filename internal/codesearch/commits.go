package codesearch

import (
	"net/http"
	"strings"
	"time"

	"forgeapi/internal/apierr"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/repos/gitjson"
	"forgeapi/internal/search"
	"forgeapi/internal/store"
)

// commitKeys are the qualifiers a commit search knows; others are words.
var commitKeys = []string{"repo", "user", "org", "author", "committer", "author-name", "committer-name",
	"author-email", "committer-email", "author-date", "committer-date", "merge", "hash", "parent", "tree", "is", "sort"}

// commitItem is the platform's commit-search-result-item: the commit
// object with its repository and score.
type commitItem struct {
	gitjson.Commit
	Repository  *repos.JSON          `json:"repository"`
	Score       float64              `json:"score"`
	TextMatches []search.TextMatches `json:"text_matches,omitempty"`
}

// searchCommits answers GET /search/commits: the commits of the default
// branches of the repositories the caller sees whose message holds every
// word and phrase; qualifiers repo:, user:, org:, author:/committer: (a
// login: the account's email addresses), author-name:, committer-name:,
// author-email:, committer-email:, author-date:, committer-date:,
// merge:true|false, hash:, parent:, tree: (SHAs or their prefixes) and
// is:public|private. Sorted by sort (author-date, committer-date) in
// order; best match (newest committed first) otherwise.
func (h *Handler) searchCommits(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	req, err := h.readRequest(r, commitKeys)
	if err != nil {
		return err
	}
	order, err := commitOrder(r.URL.Query().Get("sort"), r.URL.Query().Get("order"), req.query.Value("sort"))
	if err != nil {
		return err
	}
	where := repos.VisibleTo(req.readable)
	if err := h.commitConditions(where, req.query); err != nil {
		return err
	}
	const from = ` FROM code_commits c JOIN repositories r ON r.id = c.repository_id JOIN accounts a ON a.id = r.owner_id WHERE `
	var total int
	if err := h.DB.QueryRowContext(ctx, store.Dynamic+`SELECT count(*)`+from+where.String(), where.Args...).Scan(&total); err != nil {
		return store.Normalize(err)
	}
	found, err := h.commitPage(r, from, where, order, req.page)
	if err != nil {
		return err
	}
	renderer := h.repoJSONs(ctx)
	ids := make([]int64, 0, len(found))
	for _, f := range found {
		ids = append(ids, f.repoID)
	}
	if err := renderer.prefetch(ctx, ids); err != nil {
		return err
	}
	matches := search.WantsTextMatches(r)
	items := make([]commitItem, 0, len(found))
	for _, f := range found {
		e, err := renderer.get(ctx, f.repoID)
		if err != nil {
			return err
		}
		j, err := gitjson.CommitOf(ctx, h.DB, renderer.base, e.repo, f.commit)
		if err != nil {
			return err
		}
		item := commitItem{Commit: j, Repository: e.json, Score: 1}
		if matches {
			item.TextMatches = search.TextMatchesOf(j.URL, "Commit", req.query, search.Property{Name: "message", Text: f.commit.Message})
		}
		items = append(items, item)
	}
	httpapi.WriteSearch(w, r, req.page, total, items)
	return nil
}

// foundCommit is a commit found and its repository.
type foundCommit struct {
	repoID int64
	commit gitread.Commit
}

// commitPage reads a page of the commits where selects.
func (h *Handler) commitPage(r *http.Request, from string, where *search.Where, order string, page httpapi.Page) ([]foundCommit, error) {
	rows, err := h.DB.QueryContext(r.Context(), store.Dynamic+`SELECT c.repository_id, c.sha, c.tree_sha, c.parents,
		c.author_name, c.author_email, c.author_date, c.committer_name, c.committer_email, c.committer_date, c.message`+
		from+where.String()+` ORDER BY `+order+` LIMIT `+where.Placeholder(0)+` OFFSET `+where.Placeholder(1),
		append(where.Args, page.Limit(), page.Offset())...)
	if err != nil {
		return nil, store.Normalize(err)
	}
	defer rows.Close()
	var found []foundCommit
	for rows.Next() {
		var f foundCommit
		var parents string
		var authored, committed time.Time
		c := &f.commit
		if err := rows.Scan(&f.repoID, &c.SHA, &c.TreeSHA, &parents, &c.AuthorName, &c.AuthorEmail, &authored,
			&c.CommitterName, &c.CommitterEmail, &committed, &c.Message); err != nil {
			return nil, err
		}
		c.ParentSHAs, c.AuthorDate, c.CommitterDate = strings.Fields(parents), authored.UTC(), committed.UTC()
		found = append(found, f)
	}
	return found, rows.Err()
}

// commitOrder is the ORDER BY of sort (or the query's sort: qualifier,
// sort:author-date-asc) and order.
func commitOrder(sort, order, qualifier string) (string, error) {
	if sort == "" && qualifier != "" {
		sort = qualifier
		for _, suffix := range []string{"-asc", "-desc"} {
			if s, ok := strings.CutSuffix(qualifier, suffix); ok {
				sort, order = s, suffix[1:]
			}
		}
	}
	dir, err := search.Direction(order)
	if err != nil {
		return "", err
	}
	switch sort {
	case "", "best-match":
		return "c.committer_date DESC, c.repository_id ASC, c.sha ASC", nil
	case "author-date":
		return "c.author_date" + dir + ", c.repository_id" + dir + ", c.sha" + dir, nil
	case "committer-date":
		return "c.committer_date" + dir + ", c.repository_id" + dir + ", c.sha" + dir, nil
	}
	return "", apierr.Invalid("Search", "sort", apierr.CodeInvalid)
}

// accountEmails selects the email addresses of the account whose login
// is the argument.
const accountEmails = `(SELECT lower(e.email) FROM user_emails e JOIN accounts u ON u.id = e.user_id WHERE lower(u.login) = ?)`

// commitConditions adds the words (in the message) and the qualifiers.
func (h *Handler) commitConditions(where *search.Where, q search.Query) error {
	for _, t := range q.Terms {
		cond, arg := h.textMatch("c.id", "code_commits_fts", "c.message", t.Text)
		where.Add(cond, t.Negated, arg)
	}
	for _, ql := range q.Qualifiers {
		if err := h.addCommitQualifier(where, ql); err != nil {
			return err
		}
	}
	return nil
}

// addCommitQualifier adds one qualifier's condition.
func (h *Handler) addCommitQualifier(where *search.Where, ql search.Qualifier) error {
	if ok, err := repos.AddPlaceQualifier(where, ql); ok || err != nil {
		return err
	}
	v := strings.ToLower(ql.Value)
	switch ql.Key {
	case "author", "committer":
		where.Add("lower(c."+ql.Key+"_email) IN "+accountEmails, ql.Negated, v)
	case "author-name", "committer-name":
		where.Add(h.like("lower(c."+strings.TrimSuffix(ql.Key, "-name")+"_name)"), ql.Negated, search.Like(v))
	case "author-email", "committer-email":
		where.Add("lower(c."+strings.TrimSuffix(ql.Key, "-email")+"_email) = ?", ql.Negated, v)
	case "author-date", "committer-date":
		cond, args, ok := search.DateCondition("c."+strings.ReplaceAll(ql.Key, "-", "_"), ql.Value)
		if !ok {
			return search.InvalidQualifier(ql)
		}
		where.Add(cond, ql.Negated, args...)
	case "merge":
		switch v {
		case "true":
			where.Add("c.parent_count > 1", ql.Negated)
		case "false":
			where.Add("c.parent_count <= 1", ql.Negated)
		default:
			return search.InvalidQualifier(ql)
		}
	case "hash":
		where.Add(h.like("c.sha"), ql.Negated, likeText(v)+"%")
	case "tree":
		where.Add(h.like("c.tree_sha"), ql.Negated, likeText(v)+"%")
	case "parent":
		where.Add(h.like("(' ' || c.parents)"), ql.Negated, "% "+likeText(v)+"%")
	case "is":
		switch v {
		case "public":
			where.Add("r.private = FALSE", ql.Negated)
		case "private":
			where.Add("r.private = TRUE", ql.Negated)
		default:
			return search.InvalidQualifier(ql)
		}
	}
	return nil
}

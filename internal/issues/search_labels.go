package issues

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"forgeapi/internal/access"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/search"
	"forgeapi/internal/store"
)

// searchLabels answers GET /search/labels: the labels of the repository
// repository_id whose name or description holds every word of q, sorted
// by sort (created or updated: when the label was made, as labels keep
// no other time; best match, by name, by default) in order, with
// total_count. A repository the caller cannot read is a 404, as on the
// platform.
func (h *Handler) searchLabels(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	qv := r.URL.Query()
	repo, err := h.searchedRepository(ctx, qv.Get("repository_id"))
	if err != nil {
		return err
	}
	text, page, err := httpapi.SearchRequest(r)
	if err != nil {
		return err
	}
	order, err := labelSearchOrder(qv.Get("sort"), qv.Get("order"))
	if err != nil {
		return err
	}
	where := &search.Where{}
	where.Add("l.repository_id = ?", false, repo.ID)
	for _, t := range search.Parse(text).Terms {
		like := search.Like(t.Text)
		where.Add(`(lower(l.name) LIKE ? ESCAPE '\' OR lower(l.description) LIKE ? ESCAPE '\')`, t.Negated, like, like)
	}
	var total int
	if err := h.Service.DB.QueryRowContext(ctx, store.Dynamic+`SELECT count(*) FROM labels l WHERE `+where.String(), where.Args...).Scan(&total); err != nil {
		return store.Normalize(err)
	}
	list, err := collect(scanLabel)(h.Service.DB.QueryContext(ctx, store.Dynamic+`SELECT `+labelColumns+` FROM labels l WHERE `+
		where.String()+` ORDER BY `+order+` LIMIT `+where.Placeholder(0)+` OFFSET `+where.Placeholder(1),
		append(where.Args, page.Limit(), page.Offset())...))
	if err != nil {
		return err
	}
	u := urlsOf(httpapi.BaseURL(ctx), repo)
	type item struct {
		labelJSON
		Score float64 `json:"score"`
	}
	items := make([]item, len(list))
	for i, lb := range list {
		items[i] = item{toLabelJSON(u, lb), 1}
	}
	httpapi.WriteSearch(w, r, page, total, items)
	return nil
}

// searchedRepository is the repository a search names by id, when the
// caller can read it: a missing or unreadable one is a 404 (a missing id
// a 422).
func (h *Handler) searchedRepository(ctx context.Context, idText string) (*repos.Repository, error) {
	if idText == "" {
		return nil, apierr.Invalid("Search", "repository_id", apierr.CodeMissing)
	}
	id, err := strconv.ParseInt(idText, 10, 64)
	if err != nil || id <= 0 {
		return nil, apierr.Invalid("Search", "repository_id", apierr.CodeInvalid)
	}
	repo, err := repos.ByID(ctx, h.Service.DB, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, apierr.NotFound()
	} else if err != nil {
		return nil, err
	}
	role, err := access.ListedRepoRole(ctx, h.Service.DB, auth.PrincipalFrom(ctx), repo)
	if err != nil {
		return nil, err
	}
	if role == auth.RoleNone {
		return nil, apierr.NotFound()
	}
	return repo, nil
}

// labelSearchOrder is the ORDER BY of a label search's sort and order.
func labelSearchOrder(sort, order string) (string, error) {
	dir, err := search.Direction(order)
	if err != nil {
		return "", err
	}
	switch sort {
	case "":
		return "lower(l.name) ASC", nil
	case "created", "updated":
		return "l.created_at" + dir + ", l.id" + dir, nil
	}
	return "", apierr.Invalid("Search", "sort", apierr.CodeInvalid)
}

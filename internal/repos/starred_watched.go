package repos

import (
	"context"
	"net/http"
	"slices"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// The repositories a user starred or watches, newest first by when they
// did.
const (
	starredQuery = `SELECT ` + repoColumns + repoFrom + `JOIN stars s ON s.repository_id = r.id
		WHERE s.user_id = $1 ORDER BY s.created_at DESC, r.id DESC`
	watchedQuery = `SELECT ` + repoColumns + repoFrom + `JOIN subscriptions s ON s.repository_id = r.id
		WHERE s.user_id = $1 AND NOT s.ignored ORDER BY s.created_at DESC, r.id DESC`
)

// listByQuery lists the repositories a query selects for the account of
// the request (the caller for /user/..., {username} otherwise), as far as
// the caller may see them. sort "created" (the default) keeps the query's
// order (when starred or watched), "updated" orders by the last push.
func (h *Handler) listByQuery(query string, self bool) func(w http.ResponseWriter, r *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		lq, err := parseList(r, "", nil, "")
		if err != nil {
			return err
		}
		switch r.URL.Query().Get("sort") {
		case "", "created":
			lq.sort = ""
		case "updated":
			lq.sort = "pushed"
		default:
			return apierr.Invalid("", "sort", apierr.CodeInvalid)
		}
		id := auth.PrincipalFrom(r.Context()).UserID()
		if !self {
			id = accounts.UserFrom(r.Context()).ID
		}
		candidates, err := list(r.Context(), h.Service.DB, query, id)
		if err != nil {
			return err
		}
		if lq.sort == "" && r.URL.Query().Get("direction") == "asc" {
			slices.Reverse(candidates)
		}
		lq.desc = lq.sort != "" && r.URL.Query().Get("direction") != "asc"
		all := func(*Repository) bool { return true }
		if query != starredQuery || httpapi.MediaParam(r) != "star" {
			return h.writeList(w, r, candidates, lq, all)
		}
		// The star media type: each repository with when it was starred.
		times, err := starTimes(r.Context(), h.Service.DB, id)
		if err != nil {
			return err
		}
		return h.writeListAs(w, r, candidates, lq, all, func(repo *Repository, j JSON) any {
			return starredJSON{StarredAt: wire.T(times[repo.ID]), Repo: &j}
		})
	}
}

// starredJSON is a starred repository with the star media type.
type starredJSON struct {
	StarredAt wire.Time `json:"starred_at"`
	Repo      *JSON     `json:"repo"`
}

// starTimes maps the repositories the user starred to when.
func starTimes(ctx context.Context, q store.Q, userID int64) (map[int64]time.Time, error) {
	rows, err := q.QueryContext(ctx, `SELECT repository_id, created_at FROM stars WHERE user_id = $1`, userID)
	if err != nil {
		return nil, store.Normalize(err)
	}
	defer rows.Close()
	out := map[int64]time.Time{}
	for rows.Next() {
		var id int64
		var at time.Time
		if err := rows.Scan(&id, &at); err != nil {
			return nil, store.Normalize(err)
		}
		out[id] = at
	}
	return out, store.Normalize(rows.Err())
}

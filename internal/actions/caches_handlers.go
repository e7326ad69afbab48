package actions

import (
	"net/http"
	"strings"
	"time"

	"forgeapi/internal/apierr"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// cacheJSON is an entry of the platform's actions-cache-list.
type cacheJSON struct {
	ID             int64     `json:"id"`
	Ref            string    `json:"ref"`
	Key            string    `json:"key"`
	Version        string    `json:"version"`
	LastAccessedAt time.Time `json:"last_accessed_at"`
	CreatedAt      time.Time `json:"created_at"`
	SizeInBytes    int64     `json:"size_in_bytes"`
}

func toCacheJSON(c *Cache) cacheJSON {
	return cacheJSON{ID: c.ID, Ref: c.Ref, Key: c.Key, Version: c.Version, LastAccessedAt: c.LastAccessedAt.UTC(),
		CreatedAt: c.CreatedAt.UTC(), SizeInBytes: c.Size}
}

// cacheOrder is the ORDER BY of sort and direction (default
// last_accessed_at, desc).
func cacheOrder(r *http.Request) (string, error) {
	q := r.URL.Query()
	col := map[string]string{"": "last_accessed_at", "created_at": "created_at", "last_accessed_at": "last_accessed_at",
		"size_in_bytes": "size_in_bytes"}[q.Get("sort")]
	dir := map[string]string{"": "DESC", "desc": "DESC", "asc": "ASC"}[q.Get("direction")]
	if col == "" || dir == "" {
		return "", apierr.Validation(apierr.FieldError{Resource: "ActionsCache", Field: "sort", Code: apierr.CodeInvalid,
			Message: "sort must be created_at, last_accessed_at or size_in_bytes and direction asc or desc"})
	}
	return col + " " + dir + ", id " + dir, nil
}

// listCaches answers GET .../actions/caches: the finalized entries, with
// key a prefix and ref a full ref.
func (h *Handler) listCaches(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	order, err := cacheOrder(r)
	if err != nil {
		return err
	}
	repo := repos.From(r.Context())
	where, args := cacheWhere(repo.ID, r.URL.Query().Get("key"), false, r.URL.Query().Get("ref"))
	var total int
	if err := h.Service.DB.QueryRowContext(r.Context(), `SELECT COUNT(*) FROM actions_caches`+where, args...).Scan(&total); err != nil {
		return err
	}
	args = append(args, page.Limit(), page.Offset())
	rows, err := h.Service.DB.QueryContext(r.Context(), `SELECT `+cacheColumns+` FROM actions_caches`+where+` ORDER BY `+order+
		` LIMIT $`+itoa(int64(len(args)-1))+` OFFSET $`+itoa(int64(len(args))), args...)
	list, err := store.ScanAll(rows, err, scanCache)
	if err != nil {
		return err
	}
	out := make([]cacheJSON, 0, len(list))
	for _, c := range list {
		out = append(out, toCacheJSON(c))
	}
	httpapi.SetLinks(w, r, page, total)
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"total_count": total, "actions_caches": out})
	return nil
}

// cacheWhere selects a repository's finalized entries by key (a prefix,
// or exact) and ref ("" for any).
func cacheWhere(repoID int64, key string, exact bool, ref string) (string, []any) {
	where, args := ` WHERE repository_id = $1 AND finalized`, []any{repoID}
	if key != "" {
		if exact {
			args = append(args, key)
			where += ` AND cache_key = $` + itoa(int64(len(args)))
		} else {
			args = append(args, likePrefix(key))
			where += ` AND cache_key LIKE $` + itoa(int64(len(args))) + ` ESCAPE '\'`
		}
	}
	if ref != "" {
		args = append(args, ref)
		where += ` AND ref = $` + itoa(int64(len(args)))
	}
	return where, args
}

// deleteCachesByKey answers DELETE .../actions/caches?key=K[&ref=R]: the
// entries deleted (200), 404 when none matched.
func (h *Handler) deleteCachesByKey(w http.ResponseWriter, r *http.Request) error {
	key := r.URL.Query().Get("key")
	if strings.TrimSpace(key) == "" {
		return apierr.Validation(apierr.FieldError{Resource: "ActionsCache", Field: "key", Code: apierr.CodeMissingField})
	}
	repo := repos.From(r.Context())
	where, args := cacheWhere(repo.ID, key, true, r.URL.Query().Get("ref"))
	rows, err := h.Service.DB.QueryContext(r.Context(), `SELECT `+cacheColumns+` FROM actions_caches`+where+` ORDER BY id`, args...)
	list, err := store.ScanAll(rows, err, scanCache)
	if err != nil {
		return err
	}
	if len(list) == 0 {
		return apierr.NotFound()
	}
	ids := make([]int64, 0, len(list))
	out := make([]cacheJSON, 0, len(list))
	for _, c := range list {
		ids = append(ids, c.ID)
		out = append(out, toCacheJSON(c))
	}
	if err := h.Service.DeleteCaches(r.Context(), repo.ID, ids); err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"total_count": len(out), "actions_caches": out})
	return nil
}

// deleteCache answers DELETE .../actions/caches/{cache_id}: 204.
func (h *Handler) deleteCache(w http.ResponseWriter, r *http.Request) error {
	id, err := httpapi.PathInt64(r, "cache_id")
	if err != nil {
		return err
	}
	repo := repos.From(r.Context())
	if _, err := scanCache(h.Service.DB.QueryRowContext(r.Context(), `SELECT `+cacheColumns+` FROM actions_caches
		WHERE repository_id = $1 AND id = $2`, repo.ID, id)); err != nil {
		return err
	}
	if err := h.Service.DeleteCaches(r.Context(), repo.ID, []int64{id}); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

// cacheUsage answers GET .../actions/cache/usage.
func (h *Handler) cacheUsage(w http.ResponseWriter, r *http.Request) error {
	repo := repos.From(r.Context())
	var count, size int64
	err := h.Service.DB.QueryRowContext(r.Context(), `SELECT COUNT(*), COALESCE(SUM(size_in_bytes), 0) FROM actions_caches
		WHERE repository_id = $1 AND finalized`, repo.ID).Scan(&count, &size)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"full_name": repo.FullName(), "active_caches_size_in_bytes": size,
		"active_caches_count": count})
	return nil
}

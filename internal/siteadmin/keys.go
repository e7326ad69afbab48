package siteadmin

import (
	"context"
	"database/sql"
	"errors"
	"net/http"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/keys"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// PublicKey is one SSH key of the installation: a user's (UserID set) or
// a repository's deploy key (RepoID and RepoFullName set).
type PublicKey struct {
	ID           int64
	UserID       int64
	RepoID       int64
	RepoFullName string
	Title        string
	Text         string
	ReadOnly     bool
	AddedBy      string
	CreatedAt    time.Time
	LastUsed     *time.Time
}

// KeyFilter is what GET /admin/keys asks for: the sort (created,
// updated, accessed; keys are never updated, so updated is created),
// its direction, and keys used since a time.
type KeyFilter struct {
	Sort      string
	Ascending bool
	Since     *time.Time
}

// ListKeys returns a page of every SSH key of the installation, users'
// and deploy keys, in one query.
func (s *Service) ListKeys(ctx context.Context, f KeyFilter, page httpapi.Page) ([]PublicKey, error) {
	order := "k.created_at"
	if f.Sort == "accessed" {
		order = "k.last_used_at"
	}
	dir := " DESC"
	if f.Ascending {
		dir = " ASC"
	}
	rows, err := s.DB.QueryContext(ctx, `
		SELECT k.id, COALESCE(k.user_id, 0), COALESCE(k.repository_id, 0), COALESCE(o.login || '/' || r.name, ''),
		       k.title, k.key_text, k.read_only, COALESCE(k.added_by, ''), k.created_at, k.last_used_at
		FROM ssh_keys k LEFT JOIN repositories r ON r.id = k.repository_id LEFT JOIN accounts o ON o.id = r.owner_id
		WHERE ($1 = FALSE OR k.last_used_at > $2)
		ORDER BY `+order+dir+`, k.id`+dir+` LIMIT $3 OFFSET $4`,
		f.Since != nil, sinceArg(f.Since), page.Limit(), page.Offset())
	if err != nil {
		return nil, store.Normalize(err)
	}
	defer rows.Close()
	out := []PublicKey{}
	for rows.Next() {
		var k PublicKey
		var used sql.NullTime
		if err := rows.Scan(&k.ID, &k.UserID, &k.RepoID, &k.RepoFullName, &k.Title, &k.Text, &k.ReadOnly, &k.AddedBy,
			&k.CreatedAt, &used); err != nil {
			return nil, store.Normalize(err)
		}
		if used.Valid {
			t := used.Time.UTC()
			k.LastUsed = &t
		}
		out = append(out, k)
	}
	return out, store.Normalize(rows.Err())
}

// sinceArg is the since parameter as a query argument (the zero time
// when there is none; the query ignores it then).
func sinceArg(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.UTC()
}

// DeleteKey deletes the SSH key id through the keys area: a deploy key's
// deletion emits deploy_key deleted with admin as the sender.
// store.ErrNotFound when there is no such key.
func (s *Service) DeleteKey(ctx context.Context, k *keys.Service, admin *accounts.Account, id int64) error {
	var userID, repoID int64
	err := s.DB.QueryRowContext(ctx, `SELECT COALESCE(user_id, 0), COALESCE(repository_id, 0) FROM ssh_keys WHERE id = $1`,
		id).Scan(&userID, &repoID)
	if err != nil {
		return store.Normalize(err)
	}
	if userID != 0 {
		return k.DeleteUser(ctx, userID, id)
	}
	repo, err := repos.ByID(ctx, s.DB, repoID)
	if err != nil {
		return err
	}
	return k.DeleteDeploy(ctx, repo, admin, id)
}

// publicKeyJSON is the platform's public-key-full object.
type publicKeyJSON struct {
	ID           int64      `json:"id"`
	Key          string     `json:"key"`
	UserID       *int64     `json:"user_id"`
	RepositoryID *int64     `json:"repository_id"`
	URL          string     `json:"url"`
	Title        string     `json:"title"`
	ReadOnly     bool       `json:"read_only"`
	Verified     bool       `json:"verified"`
	CreatedAt    wire.Time  `json:"created_at"`
	AddedBy      *string    `json:"added_by"`
	LastUsed     *wire.Time `json:"last_used"`
}

func toPublicKey(base string, k PublicKey) publicKeyJSON {
	out := publicKeyJSON{ID: k.ID, Key: k.Text, Title: k.Title, ReadOnly: k.ReadOnly, Verified: true,
		CreatedAt: wire.T(k.CreatedAt), AddedBy: optional(k.AddedBy), LastUsed: wire.TP(k.LastUsed)}
	if k.UserID != 0 {
		out.UserID, out.URL = &k.UserID, base+"/user/keys/"+wire.Itoa(k.ID)
	} else {
		out.RepositoryID, out.URL = &k.RepoID, base+"/repos/"+k.RepoFullName+"/keys/"+wire.Itoa(k.ID)
	}
	return out
}

// listKeys serves GET /admin/keys.
func (h *Handler) listKeys(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	f, err := keyFilter(r)
	if err != nil {
		return err
	}
	list, err := h.Service.ListKeys(r.Context(), f, page)
	if err != nil {
		return err
	}
	base := httpapi.BaseURL(r.Context())
	out := make([]publicKeyJSON, len(list))
	for i, k := range list {
		out[i] = toPublicKey(base, k)
	}
	httpapi.SetLinksMore(w, r, page, len(list) == page.Limit())
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// keyFilter reads sort, direction and since; another value is a 422.
func keyFilter(r *http.Request) (KeyFilter, error) {
	q := r.URL.Query()
	f := KeyFilter{Sort: q.Get("sort")}
	var fields apierr.Fields
	switch f.Sort {
	case "", "created", "updated", "accessed":
	default:
		fields.Add("PublicKey", "sort", apierr.CodeInvalid)
	}
	switch q.Get("direction") {
	case "", "desc":
	case "asc":
		f.Ascending = true
	default:
		fields.Add("PublicKey", "direction", apierr.CodeInvalid)
	}
	if s := q.Get("since"); s != "" {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			fields.Add("PublicKey", "since", apierr.CodeInvalid)
		}
		f.Since = &t
	}
	return f, fields.Err()
}

// deleteKey serves DELETE /admin/keys/{key_ids}: 204.
func (h *Handler) deleteKey(w http.ResponseWriter, r *http.Request) error {
	id, err := httpapi.PathInt64(r, "key_ids")
	if err != nil {
		return apierr.NotFound()
	}
	admin, err := h.caller(r)
	if err != nil {
		return err
	}
	err = h.Service.DeleteKey(r.Context(), h.Keys, admin, id)
	if errors.Is(err, store.ErrNotFound) {
		return apierr.NotFound()
	}
	if err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

package reposettings

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"

	"forgeapi/internal/apierr"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// Autolink is an autolink reference of a repository.
type Autolink struct {
	ID             int64
	KeyPrefix      string
	URLTemplate    string
	IsAlphanumeric bool
	UpdatedAt      time.Time
}

// autolinkJSON is the platform's autolink object.
type autolinkJSON struct {
	ID             int64     `json:"id"`
	KeyPrefix      string    `json:"key_prefix"`
	URLTemplate    string    `json:"url_template"`
	IsAlphanumeric bool      `json:"is_alphanumeric"`
	UpdatedAt      wire.Time `json:"updated_at"`
}

func toAutolinkJSON(a *Autolink) autolinkJSON {
	return autolinkJSON{ID: a.ID, KeyPrefix: a.KeyPrefix, URLTemplate: a.URLTemplate, IsAlphanumeric: a.IsAlphanumeric,
		UpdatedAt: wire.T(a.UpdatedAt)}
}

const autolinkColumns = `id, key_prefix, url_template, is_alphanumeric, updated_at`

func scanAutolink(s store.Scanner) (*Autolink, error) {
	var a Autolink
	if err := s.Scan(&a.ID, &a.KeyPrefix, &a.URLTemplate, &a.IsAlphanumeric, &a.UpdatedAt); err != nil {
		return nil, store.Normalize(err)
	}
	return &a, nil
}

// Autolinks are the repository's autolink references, in the order they
// were made.
func Autolinks(ctx context.Context, q store.Q, repoID int64) ([]*Autolink, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+autolinkColumns+` FROM autolinks WHERE repository_id = $1 ORDER BY id`, repoID)
	return store.ScanAll(rows, err, scanAutolink)
}

// pathID reads a positive numeric path value; anything else is a 404.
func pathID(r *http.Request, name string) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue(name), 10, 64)
	if err != nil || id <= 0 {
		return 0, apierr.NotFound()
	}
	return id, nil
}

func (h *Handler) listAutolinks(w http.ResponseWriter, r *http.Request) error {
	list, err := Autolinks(r.Context(), h.DB, repos.From(r.Context()).ID)
	if err != nil {
		return err
	}
	out := make([]autolinkJSON, 0, len(list))
	for _, a := range list {
		out = append(out, toAutolinkJSON(a))
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h *Handler) getAutolink(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "autolink_id")
	if err != nil {
		return err
	}
	a, err := scanAutolink(h.DB.QueryRowContext(r.Context(), `SELECT `+autolinkColumns+` FROM autolinks
		WHERE repository_id = $1 AND id = $2`, repos.From(r.Context()).ID, id))
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toAutolinkJSON(a))
	return nil
}

// autolinkRequest is the body of POST .../autolinks.
type autolinkRequest struct {
	KeyPrefix      *string `json:"key_prefix"`
	URLTemplate    *string `json:"url_template"`
	IsAlphanumeric *bool   `json:"is_alphanumeric"`
}

// validate checks the request: a key prefix of 1 to 32 printable
// characters without spaces, and an http(s) URL template holding <num>.
func (b *autolinkRequest) validate() error {
	var f apierr.Fields
	switch {
	case b.KeyPrefix == nil || *b.KeyPrefix == "":
		f.Add("KeyLink", "key_prefix", apierr.CodeMissingField)
	case !validPrefix(*b.KeyPrefix):
		f.Add("KeyLink", "key_prefix", apierr.CodeInvalid)
	}
	switch {
	case b.URLTemplate == nil || *b.URLTemplate == "":
		f.Add("KeyLink", "url_template", apierr.CodeMissingField)
	case !strings.Contains(*b.URLTemplate, "<num>"):
		f.Addf("KeyLink", "url_template", "url_template is missing a <num> token")
	default:
		u, err := url.Parse(strings.ReplaceAll(*b.URLTemplate, "<num>", "1"))
		if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
			f.Add("KeyLink", "url_template", apierr.CodeInvalid)
		}
	}
	return f.Err()
}

// validPrefix reports whether a key prefix is 1 to 32 printable
// characters without spaces.
func validPrefix(s string) bool {
	if len(s) > 32 {
		return false
	}
	for _, c := range s {
		if unicode.IsSpace(c) || !unicode.IsPrint(c) {
			return false
		}
	}
	return true
}

// createAutolink answers POST .../autolinks: 201 with the autolink; a
// key prefix the repository has already (any case) is a 422.
func (h *Handler) createAutolink(w http.ResponseWriter, r *http.Request) error {
	var body autolinkRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	if err := body.validate(); err != nil {
		return err
	}
	alnum := body.IsAlphanumeric == nil || *body.IsAlphanumeric
	ctx := r.Context()
	repo := repos.From(ctx)
	a, err := scanAutolink(h.DB.QueryRowContext(ctx, `INSERT INTO autolinks (repository_id, key_prefix, url_template,
		is_alphanumeric, updated_at) VALUES ($1, $2, $3, $4, $5) RETURNING `+autolinkColumns,
		repo.ID, *body.KeyPrefix, *body.URLTemplate, alnum, store.Now()))
	if errors.Is(err, store.ErrConflict) {
		return apierr.Validation(apierr.FieldError{Resource: "KeyLink", Field: "key_prefix", Code: apierr.CodeAlreadyExists})
	}
	if err != nil {
		return err
	}
	httpapi.WriteCreated(w, httpapi.BaseURL(ctx)+"/repos/"+repo.FullName()+"/autolinks/"+strconv.FormatInt(a.ID, 10), toAutolinkJSON(a))
	return nil
}

func (h *Handler) deleteAutolink(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "autolink_id")
	if err != nil {
		return err
	}
	res, err := h.DB.ExecContext(r.Context(), `DELETE FROM autolinks WHERE repository_id = $1 AND id = $2`,
		repos.From(r.Context()).ID, id)
	if n, err := store.Affected(res, err); err != nil {
		return err
	} else if n == 0 {
		return apierr.NotFound()
	}
	httpapi.NoContent(w)
	return nil
}

package reposettings

import (
	"context"
	"errors"
	"net/http"
	"path"
	"strings"
	"time"

	"forgeapi/internal/access"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/git/githttp"
	"forgeapi/internal/githost"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// TagProtection is a tag protection rule of a repository.
type TagProtection struct {
	ID        int64
	Pattern   string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// tagProtectionJSON is the platform's tag-protection object.
type tagProtectionJSON struct {
	ID        int64     `json:"id"`
	CreatedAt wire.Time `json:"created_at"`
	UpdatedAt wire.Time `json:"updated_at"`
	Enabled   bool      `json:"enabled"`
	Pattern   string    `json:"pattern"`
}

func toTagProtectionJSON(t *TagProtection) tagProtectionJSON {
	return tagProtectionJSON{ID: t.ID, CreatedAt: wire.T(t.CreatedAt), UpdatedAt: wire.T(t.UpdatedAt), Enabled: true, Pattern: t.Pattern}
}

const tagColumns = `id, pattern, created_at, updated_at`

func scanTagProtection(s store.Scanner) (*TagProtection, error) {
	var t TagProtection
	if err := s.Scan(&t.ID, &t.Pattern, &t.CreatedAt, &t.UpdatedAt); err != nil {
		return nil, store.Normalize(err)
	}
	return &t, nil
}

// TagProtections are the repository's tag protection rules, in the order
// they were made.
func TagProtections(ctx context.Context, q store.Q, repoID int64) ([]*TagProtection, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+tagColumns+` FROM tag_protections WHERE repository_id = $1 ORDER BY id`, repoID)
	return store.ScanAll(rows, err, scanTagProtection)
}

// Protects reports whether the pattern protects the tag (its short name):
// a glob as path.Match reads it, where * does not cross a slash.
func Protects(pattern, tag string) bool {
	ok, err := path.Match(pattern, tag)
	return err == nil && ok
}

func (h *Handler) listTagProtections(w http.ResponseWriter, r *http.Request) error {
	list, err := TagProtections(r.Context(), h.DB, repos.From(r.Context()).ID)
	if err != nil {
		return err
	}
	out := make([]tagProtectionJSON, 0, len(list))
	for _, t := range list {
		out = append(out, toTagProtectionJSON(t))
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// createTagProtection answers POST .../tags/protection: 201 with the
// rule; a pattern that is empty, not a valid glob or the repository's
// already is a 422.
func (h *Handler) createTagProtection(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Pattern *string `json:"pattern"`
	}
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.Pattern == nil || strings.TrimSpace(*body.Pattern) == "" {
		return apierr.Invalid("TagProtection", "pattern", apierr.CodeMissingField)
	}
	if _, err := path.Match(*body.Pattern, ""); err != nil || len(*body.Pattern) > 255 {
		return apierr.Invalid("TagProtection", "pattern", apierr.CodeInvalid)
	}
	ctx := r.Context()
	now := store.Now()
	t, err := scanTagProtection(h.DB.QueryRowContext(ctx, `INSERT INTO tag_protections (repository_id, pattern, created_at, updated_at)
		VALUES ($1, $2, $3, $3) RETURNING `+tagColumns, repos.From(ctx).ID, *body.Pattern, now))
	if errors.Is(err, store.ErrConflict) {
		return apierr.Validation(apierr.FieldError{Resource: "TagProtection", Field: "pattern", Code: apierr.CodeAlreadyExists})
	}
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusCreated, toTagProtectionJSON(t))
	return nil
}

func (h *Handler) deleteTagProtection(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "tag_protection_id")
	if err != nil {
		return err
	}
	res, err := h.DB.ExecContext(r.Context(), `DELETE FROM tag_protections WHERE repository_id = $1 AND id = $2`,
		repos.From(r.Context()).ID, id)
	if n, err := store.Affected(res, err); err != nil {
		return err
	} else if n == 0 {
		return apierr.NotFound()
	}
	httpapi.NoContent(w)
	return nil
}

// CheckPush is the push check of tag protection (githost.PushCheck): a
// push that creates, moves or deletes a tag a rule of the repository
// protects is refused unless the pusher is an admin of the repository or
// holds maintain on it (as a collaborator or through a team). Server
// pushes (the API's) are checked alike.
func CheckPush(db *store.DB) githost.PushCheck {
	return func(ctx context.Context, push *githost.Push) error {
		var tags []string
		for _, u := range push.Updates {
			if u.IsTag() {
				tags = append(tags, strings.TrimPrefix(u.Ref, "refs/tags/"))
			}
		}
		if len(tags) == 0 {
			return nil
		}
		rules, err := TagProtections(ctx, db, push.Repo.ID)
		if err != nil || len(rules) == 0 {
			return err
		}
		for _, tag := range tags {
			for _, rule := range rules {
				if !Protects(rule.Pattern, tag) {
					continue
				}
				ok, err := maintains(ctx, db, push)
				if err != nil || ok {
					return err
				}
				return githttp.Refuse("error: GH013: Repository rule violations found for refs/tags/%s.\n"+
					"- Cannot update this protected tag: only the repository's admins and maintainers may create, update or delete tags matching %q.", tag, rule.Pattern)
			}
		}
		return nil
	}
}

// maintains reports whether the pusher administers the repository or
// holds maintain on it.
func maintains(ctx context.Context, db *store.DB, push *githost.Push) (bool, error) {
	if push.Pusher == nil {
		return false, nil
	}
	role, err := access.UserRepoRole(ctx, db, push.Pusher, push.Repo)
	if err != nil || role >= auth.RoleAdmin {
		return role >= auth.RoleAdmin, err
	}
	var rank int
	err = db.QueryRowContext(ctx, `SELECT COALESCE(max(rank), 0) FROM repo_grants WHERE repository_id = $1 AND user_id = $2`,
		push.Repo.ID, push.Pusher.ID).Scan(&rank)
	return rank >= 4, store.Normalize(err)
}

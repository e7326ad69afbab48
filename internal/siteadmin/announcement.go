package siteadmin

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"forgeapi/internal/apierr"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// Announcement is the installation's announcement banner.
type Announcement struct {
	Message         string     // GitHub Flavored Markdown
	ExpiresAt       *time.Time // nil: never
	UserDismissible bool
}

// GetAnnouncement returns the announcement; nil when there is none or it
// has expired.
func (s *Service) GetAnnouncement(ctx context.Context) (*Announcement, error) {
	var a Announcement
	err := s.DB.QueryRowContext(ctx, `SELECT message, expires_at, user_dismissible FROM site_announcement
		WHERE id = 1 AND (expires_at IS NULL OR expires_at > $1)`, store.Now()).Scan(&a.Message, &a.ExpiresAt, &a.UserDismissible)
	if err = store.Normalize(err); errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if a.ExpiresAt != nil {
		t := a.ExpiresAt.UTC()
		a.ExpiresAt = &t
	}
	return &a, nil
}

// AnnouncementMessage is the announcement's text, "" when there is none:
// what the web pages' layout shows (console.Handler.Announcement).
func (s *Service) AnnouncementMessage(ctx context.Context) (string, error) {
	a, err := s.GetAnnouncement(ctx)
	if a == nil || err != nil {
		return "", err
	}
	return a.Message, nil
}

// SetAnnouncement replaces the announcement.
func (s *Service) SetAnnouncement(ctx context.Context, a Announcement) error {
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO site_announcement (id, message, expires_at, user_dismissible, updated_at)
			VALUES (1, $1, $2, $3, $4)
			ON CONFLICT (id) DO UPDATE SET message = excluded.message, expires_at = excluded.expires_at,
				user_dismissible = excluded.user_dismissible, updated_at = excluded.updated_at`,
			a.Message, a.ExpiresAt, a.UserDismissible, tx.Now())
		return store.Normalize(err)
	})
}

// RemoveAnnouncement removes the announcement.
func (s *Service) RemoveAnnouncement(ctx context.Context) error {
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM site_announcement`)
		return store.Normalize(err)
	})
}

// announcementJSON is the platform's announcement object; every field is
// null when there is no announcement.
type announcementJSON struct {
	Announcement    *string    `json:"announcement"`
	ExpiresAt       *wire.Time `json:"expires_at"`
	UserDismissible bool       `json:"user_dismissible"`
}

func toAnnouncement(a *Announcement) announcementJSON {
	if a == nil {
		return announcementJSON{}
	}
	return announcementJSON{Announcement: &a.Message, ExpiresAt: wire.TP(a.ExpiresAt), UserDismissible: a.UserDismissible}
}

// announcementRequest is the body of PATCH /enterprise/announcement.
type announcementRequest struct {
	Announcement    *string         `json:"announcement"`
	ExpiresAt       json.RawMessage `json:"expires_at"`
	UserDismissible *bool           `json:"user_dismissible"`
}

// decodeAnnouncement reads the body: announcement is required and not
// blank; expires_at is an ISO 8601 time in the future, or null or "" for
// never.
func decodeAnnouncement(r *http.Request) (Announcement, error) {
	var req announcementRequest
	if err := httpapi.DecodeJSON(r, &req); err != nil {
		return Announcement{}, err
	}
	if req.Announcement == nil || strings.TrimSpace(*req.Announcement) == "" {
		return Announcement{}, apierr.Invalid("Announcement", "announcement", apierr.CodeMissingField)
	}
	a := Announcement{Message: *req.Announcement, UserDismissible: req.UserDismissible != nil && *req.UserDismissible}
	var expires *string
	if len(req.ExpiresAt) > 0 && json.Unmarshal(req.ExpiresAt, &expires) != nil {
		return Announcement{}, apierr.Invalid("Announcement", "expires_at", apierr.CodeInvalid)
	}
	if expires != nil && *expires != "" {
		t, err := time.Parse(time.RFC3339, *expires)
		if err != nil || !t.After(store.Now()) {
			return Announcement{}, apierr.Invalid("Announcement", "expires_at", apierr.CodeInvalid)
		}
		t = t.UTC()
		a.ExpiresAt = &t
	}
	return a, nil
}

// getAnnouncement serves GET /enterprise/announcement.
func (h *Handler) getAnnouncement(w http.ResponseWriter, r *http.Request) error {
	a, err := h.Service.GetAnnouncement(r.Context())
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toAnnouncement(a))
	return nil
}

// setAnnouncement serves PATCH /enterprise/announcement: 200 with it.
func (h *Handler) setAnnouncement(w http.ResponseWriter, r *http.Request) error {
	a, err := decodeAnnouncement(r)
	if err != nil {
		return err
	}
	if err := h.Service.SetAnnouncement(r.Context(), a); err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toAnnouncement(&a))
	return nil
}

// removeAnnouncement serves DELETE /enterprise/announcement: 204.
func (h *Handler) removeAnnouncement(w http.ResponseWriter, r *http.Request) error {
	if err := h.Service.RemoveAnnouncement(r.Context()); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

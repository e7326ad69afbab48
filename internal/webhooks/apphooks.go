package webhooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"forgeapi/internal/events"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// NewAppHook is an app's webhook as the app is registered with it.
type NewAppHook struct {
	AppID int64
	URL   string
	// SealedSecret is the secret sealed with the server key (the box
	// Service.Box holds); "" for none.
	SealedSecret string
	ContentType  string // json or form
}

// CreateAppHook stores the app's webhook in tx (the app's registration's
// transaction). An app has exactly one: a second is a store.ErrConflict.
// It is active, and delivers nothing while its URL is empty.
func CreateAppHook(ctx context.Context, tx store.Q, n NewAppHook, now time.Time) (*Hook, error) {
	h := &Hook{Name: "web", Active: true, Events: []string{}, URL: n.URL, ContentType: n.ContentType,
		InsecureSSL: "0", SealedSecret: n.SealedSecret, IntegrationID: n.AppID, CreatedAt: now, UpdatedAt: now}
	err := tx.QueryRowContext(ctx, `INSERT INTO hooks (integration_id, name, active, events, url, content_type,
		insecure_ssl, secret, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9) RETURNING id`,
		h.IntegrationID, h.Name, h.Active, eventsJSON(h.Events), h.URL, h.ContentType, h.InsecureSSL,
		h.SealedSecret, now).Scan(&h.ID)
	return h, store.Normalize(err)
}

// AppHook returns the app's webhook; store.ErrNotFound when it has none.
func AppHook(ctx context.Context, q store.Q, appID int64) (*Hook, error) {
	return scanHook(q.QueryRowContext(ctx, `SELECT `+hookColumns+` FROM `+hooksFrom+` WHERE integration_id = $1`, appID))
}

// appRecipients are the app installations whose app webhook receives e:
// its ToApp, or those the Apps resolver finds.
func (s *Service) appRecipients(ctx context.Context, q store.Q, e *events.Event) ([]events.AppInstallation, error) {
	if e.ToApp != nil {
		return []events.AppInstallation{*e.ToApp}, nil
	}
	if s.Apps == nil {
		return nil, nil
	}
	return s.Apps.Recipients(ctx, q, e)
}

// installationRef is the installation object of an app delivery's
// payload: its id and node_id.
func installationRef(id int64) map[string]any {
	return map[string]any{"id": id, "node_id": wire.NodeID("IN", id)}
}

// enqueueAppDeliveries writes the event's delivery to each recipient's
// app webhook (enqueueAppDelivery) and reports how many it wrote.
func (s *Service) enqueueAppDeliveries(ctx context.Context, tx store.Q, e *events.Event, body map[string]any, to []events.AppInstallation) (int, error) {
	n := 0
	for _, r := range to {
		wrote, err := s.enqueueAppDelivery(ctx, tx, e, body, r)
		if err != nil {
			return n, err
		}
		if wrote {
			n++
		}
	}
	return n, nil
}

// enqueueAppDelivery writes, when the recipient's app webhook is active
// and has a URL, a payload of body with the recipient's installation as
// {id, node_id} (an event addressed ToApp carries its own, the whole
// installation object) and its delivery, which names the installation
// and the event's repository. A payload over the cap is
// dropped (logged).
func (s *Service) enqueueAppDelivery(ctx context.Context, tx store.Q, e *events.Event, body map[string]any, r events.AppInstallation) (bool, error) {
	h, err := AppHook(ctx, tx, r.AppID)
	if errors.Is(err, store.ErrNotFound) || err == nil && (!h.Active || h.URL == "") {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if e.ToApp == nil {
		body["installation"] = installationRef(r.InstallationID)
	}
	encoded, err := json.Marshal(body)
	if err != nil {
		return false, fmt.Errorf("encode %s payload: %w", e.HookEvent, err)
	}
	if s.overCap(ctx, e.HookEvent, e.Repo, len(encoded), 1) {
		return false, nil
	}
	p := s.newPayload(e, encoded)
	// The payload row names no repository, the delivery does: the tests
	// endpoint re-sends a repository's latest push payload, which must
	// never be an app's (it names the installation).
	stored := p
	stored.RepositoryID = nil
	payloadID, err := insertPayload(ctx, tx, stored)
	if err != nil {
		return false, err
	}
	d := s.deliveryOf(h, payloadID, p)
	d.InstallationID = &r.InstallationID
	return true, insertDelivery(ctx, tx, d)
}

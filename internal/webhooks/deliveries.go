package webhooks

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/store"
	"forgeapi/internal/webhooks/hookshot"
	"forgeapi/internal/wire"
)

// Delivery is one row of the delivery log: an attempt, done or still to
// be made, to send a payload to a hook.
type Delivery struct {
	ID              int64
	HookID          int64
	PayloadID       int64
	GUID            string
	Event           string
	Action          string
	Redelivery      bool
	RepositoryID    *int64
	InstallationID  *int64
	Done            bool // sent, or given up on; false while pending
	ThrottledAt     *time.Time
	DeliveredAt     *time.Time
	Duration        float64 // seconds
	Status          string
	StatusCode      int // 0: no response
	URL             string
	RequestHeaders  string // JSON object, less the identity headers of ImpliedHeaders (see SentHeaders)
	ImpliedHeaders  hookshot.IdentitySets
	ResponseHeaders string // JSON object
	ResponseBody    string
	CreatedAt       time.Time
}

const deliveryColumns = `id, hook_id, payload_id, guid, event, action, redelivery, repository_id, installation_id,
	state, throttled_at, delivered_at, duration, status, status_code, url, request_headers, implied_headers,
	response_headers, response_body, created_at`

func scanDelivery(row interface{ Scan(...any) error }) (*Delivery, error) {
	var d Delivery
	var repoID, installationID sql.NullInt64
	var throttled, delivered sql.NullTime
	var state string
	var implied int64
	err := row.Scan(&d.ID, &d.HookID, &d.PayloadID, &d.GUID, &d.Event, &d.Action, &d.Redelivery, &repoID,
		&installationID, &state, &throttled, &delivered, &d.Duration, &d.Status, &d.StatusCode, &d.URL,
		&d.RequestHeaders, &implied, &d.ResponseHeaders, &d.ResponseBody, &d.CreatedAt)
	if err != nil {
		return nil, store.Normalize(err)
	}
	d.ImpliedHeaders = hookshot.IdentitySets(implied)
	d.Done = state == stateDone
	d.RepositoryID = nullInt(repoID)
	d.InstallationID = nullInt(installationID)
	d.ThrottledAt, d.DeliveredAt = nullTime(throttled), nullTime(delivered)
	d.CreatedAt = d.CreatedAt.UTC()
	return &d, nil
}

// SentHeaders returns the request headers the delivery was sent with, as
// the log shows them: those stored with it, and the identity headers its
// row and h, its hook, imply.
func (d *Delivery) SentHeaders(h *Hook) (map[string]string, error) {
	var m map[string]string
	if err := json.Unmarshal([]byte(d.RequestHeaders), &m); err != nil {
		return nil, fmt.Errorf("delivery %d: request headers: %w", d.ID, err)
	}
	hookshot.AddIdentity(m, d.ImpliedHeaders, hookshot.Identity{DeliveryGUID: d.GUID, Event: d.Event, HookID: d.HookID,
		TargetID: h.TargetID(), TargetType: h.TargetType()})
	return m, nil
}

func nullInt(v sql.NullInt64) *int64 {
	if !v.Valid {
		return nil
	}
	return &v.Int64
}

func nullTime(v sql.NullTime) *time.Time {
	if !v.Valid {
		return nil
	}
	t := v.Time.UTC()
	return &t
}

// Delivery states of the hook_deliveries table.
const (
	statePending = "pending" // to be sent at due_at (a claim moves due_at to the lease's end)
	stateDone    = "done"    // sent or given up on: the row is now only the log
)

// deliveryOfHook returns the hook's delivery with the id; ErrNotFound
// when the hook has none with it.
func deliveryOfHook(ctx context.Context, q store.Q, hookID, id int64) (*Delivery, error) {
	return scanDelivery(q.QueryRowContext(ctx, `SELECT `+deliveryColumns+` FROM hook_deliveries
		WHERE id = $1 AND hook_id = $2`, id, hookID))
}

// DeliveryFilter selects deliveries of a hook for the list endpoint.
type DeliveryFilter struct {
	Status string // "", "success" (200-399) or "failure" (400-599 and no response)
	Before int64  // only ids up to this one (the cursor); 0 for the newest
	After  int64  // only ids above this one, oldest first (for the previous page's cursor)
	Limit  int
}

// The status filters of the deliveries list as SQL conditions, constant
// texts so that their statements are cached.
var statusConditions = map[string]string{
	"":        "",
	"success": " AND state = 'done' AND status_code BETWEEN 200 AND 399",
	"failure": " AND state = 'done' AND (status_code >= 400 OR status_code < 200)",
}

// listDeliveries returns up to f.Limit deliveries of the hook: newest
// first from f.Before, or (with f.After) the ones just newer than
// f.After, oldest first.
func listDeliveries(ctx context.Context, q store.Q, hookID int64, f DeliveryFilter) ([]*Delivery, error) {
	cond, ok := statusConditions[f.Status]
	if !ok {
		return nil, errors.New("unknown status filter " + f.Status)
	}
	query := `SELECT ` + deliveryColumns + ` FROM hook_deliveries WHERE hook_id = $1 AND id <= $2` + cond + ` ORDER BY id DESC LIMIT $3`
	bound := f.Before
	if bound == 0 {
		bound = 1<<63 - 1
	}
	if f.After != 0 {
		query = `SELECT ` + deliveryColumns + ` FROM hook_deliveries WHERE hook_id = $1 AND id > $2` + cond + ` ORDER BY id LIMIT $3`
		bound = f.After
	}
	rows, err := q.QueryContext(ctx, query, hookID, bound, f.Limit)
	if err != nil {
		return nil, store.Normalize(err)
	}
	defer rows.Close()
	var out []*Delivery
	for rows.Next() {
		d, err := scanDelivery(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, store.Normalize(rows.Err())
}

// Redeliver writes a new delivery of d's payload to its hook, with the
// same GUID and redelivery true, and wakes the dispatcher. A delivery
// older than the redelivery window is a 422.
func (s *Service) Redeliver(ctx context.Context, h *Hook, d *Delivery) error {
	if window := s.redeliveryWindow(); s.now().Sub(d.CreatedAt) > window {
		return apierr.Unprocessable("Deliveries older than %s cannot be redelivered", humanDays(window))
	}
	now := s.now()
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		tx.AfterCommit(s.Wake)
		return insertDelivery(ctx, tx, newDelivery{HookID: h.ID, PayloadID: d.PayloadID, GUID: d.GUID,
			Event: d.Event, Action: d.Action, Redelivery: true, RepositoryID: d.RepositoryID,
			InstallationID: d.InstallationID, URL: h.URL,
			DueAt: now, CreatedAt: now})
	})
}

func (s *Service) redeliveryWindow() time.Duration {
	if s.Config.RedeliveryWindow > 0 {
		return s.Config.RedeliveryWindow
	}
	return DefaultRedeliveryWindow
}

func humanDays(d time.Duration) string {
	if days := int(d / (24 * time.Hour)); days > 0 && d%(24*time.Hour) == 0 {
		if days == 1 {
			return "1 day"
		}
		return fmt.Sprintf("%d days", days)
	}
	return d.String()
}

// SendLatestPush sends the repository hook the repository's latest push
// again, as a new delivery with a new GUID (the tests endpoint). It does
// nothing when the hook does not receive push events or there was no
// push; it reports whether a delivery was written.
func (s *Service) SendLatestPush(ctx context.Context, h *Hook) (bool, error) {
	if h.IsOrg() || !h.Subscribed("push") {
		return false, nil
	}
	sent := false
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		var payloadID int64
		err := tx.QueryRowContext(ctx, `SELECT id FROM hook_payloads
			WHERE repository_id = $1 AND event = 'push' ORDER BY id DESC LIMIT 1`, h.RepoID).Scan(&payloadID)
		if errors.Is(store.Normalize(err), store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		now := s.now()
		tx.AfterCommit(s.Wake)
		sent = true
		return insertDelivery(ctx, tx, newDelivery{HookID: h.ID, PayloadID: payloadID, GUID: wire.NewGUID(),
			Event: "push", RepositoryID: &h.RepoID, URL: h.URL, DueAt: now, CreatedAt: now})
	})
	return sent, err
}

// Ping writes a ping delivery to the hook (the pings endpoint).
func (s *Service) Ping(ctx context.Context, h *Hook, sender *accounts.Account) error {
	return s.DB.Tx(ctx, func(tx *store.Tx) error { return s.EnqueuePing(ctx, tx, h, sender) })
}

// payloadBody returns a stored payload's JSON.
func payloadBody(ctx context.Context, q store.Q, id int64) (json.RawMessage, error) {
	var body string
	err := q.QueryRowContext(ctx, `SELECT payload FROM hook_payloads WHERE id = $1`, id).Scan(&body)
	return json.RawMessage(body), store.Normalize(err)
}

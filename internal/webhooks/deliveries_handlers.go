package webhooks

import (
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"forgeapi/internal/apierr"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// deliverySummary is a delivery as the list shows it.
type deliverySummary struct {
	ID             int64      `json:"id"`
	GUID           string     `json:"guid"`
	DeliveredAt    *wire.Time `json:"delivered_at"`
	Redelivery     bool       `json:"redelivery"`
	Duration       float64    `json:"duration"`
	Status         string     `json:"status"`
	StatusCode     int        `json:"status_code"`
	Event          string     `json:"event"`
	Action         *string    `json:"action"`
	InstallationID *int64     `json:"installation_id"`
	RepositoryID   *int64     `json:"repository_id"`
	ThrottledAt    *wire.Time `json:"throttled_at"`
}

// deliveryDetail is a delivery with its request and response.
type deliveryDetail struct {
	deliverySummary
	URL     string `json:"url"`
	Request struct {
		Headers map[string]string `json:"headers"`
		Payload json.RawMessage   `json:"payload"`
	} `json:"request"`
	Response struct {
		Headers map[string]string `json:"headers"`
		Payload *string           `json:"payload"`
	} `json:"response"`
}

// statusPending is the status of a delivery not attempted yet.
const statusPending = "pending"

func toSummary(d *Delivery) deliverySummary {
	s := deliverySummary{ID: d.ID, GUID: d.GUID, DeliveredAt: wire.TP(d.DeliveredAt), Redelivery: d.Redelivery,
		Duration: d.Duration, Status: d.Status, StatusCode: d.StatusCode, Event: d.Event,
		InstallationID: d.InstallationID, RepositoryID: d.RepositoryID, ThrottledAt: wire.TP(d.ThrottledAt)}
	if d.Action != "" {
		s.Action = &d.Action
	}
	if !d.Done {
		s.Status = statusPending
	}
	if d.DeliveredAt == nil { // queued, not attempted yet: the time it was queued
		s.DeliveredAt = wire.TP(&d.CreatedAt)
	}
	return s
}

func toDetail(hook *Hook, d *Delivery, payload json.RawMessage) (deliveryDetail, error) {
	out := deliveryDetail{deliverySummary: toSummary(d), URL: d.URL}
	out.Request.Payload = payload
	var err error
	if out.Request.Headers, err = d.SentHeaders(hook); err != nil {
		return out, err
	}
	if err := json.Unmarshal([]byte(d.ResponseHeaders), &out.Response.Headers); err != nil {
		return out, err
	}
	if d.Done && d.StatusCode != 0 {
		out.Response.Payload = &d.ResponseBody
	}
	return out, nil
}

// cursorPrefix starts the cursors of the deliveries list, as the
// platform's do; a cursor names the delivery a page starts at.
const cursorPrefix = "v1_"

func parseCursor(s string) (int64, error) {
	id, err := strconv.ParseInt(strings.TrimPrefix(s, cursorPrefix), 10, 64)
	if err != nil || id <= 0 {
		return 0, apierr.BadRequest("Invalid cursor %q", s)
	}
	return id, nil
}

func formatCursor(id int64) string { return cursorPrefix + strconv.FormatInt(id, 10) }

// listDeliveries serves GET .../hooks/{hook_id}/deliveries: newest first,
// per_page (at most 100), cursor and status, with Link next and prev.
func (h *Handler) listDeliveries(w http.ResponseWriter, r *http.Request) error {
	hook, _, err := h.pathHook(r)
	if err != nil {
		return err
	}
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := DeliveryFilter{Status: q.Get("status"), Limit: page.PerPage + 1}
	if _, ok := statusConditions[f.Status]; !ok {
		return apierr.Validation(apierr.FieldError{Resource: "Delivery", Field: "status", Code: apierr.CodeInvalid})
	}
	if c := q.Get("cursor"); c != "" {
		if f.Before, err = parseCursor(c); err != nil {
			return err
		}
	}
	list, err := listDeliveries(r.Context(), h.Service.DB, hook.ID, f)
	if err != nil {
		return err
	}
	var links []string
	if len(list) > page.PerPage {
		list = list[:page.PerPage]
		links = append(links, deliveriesLink(r, q, list[len(list)-1].ID-1, "next"))
	}
	if len(list) > 0 {
		newer, err := listDeliveries(r.Context(), h.Service.DB, hook.ID,
			DeliveryFilter{Status: f.Status, After: list[0].ID, Limit: page.PerPage})
		if err != nil {
			return err
		}
		if len(newer) > 0 {
			links = append(links, deliveriesLink(r, q, newer[len(newer)-1].ID, "prev"))
		}
	}
	if len(links) > 0 {
		w.Header().Set("Link", strings.Join(links, ", "))
	}
	out := make([]deliverySummary, len(list))
	for i, d := range list {
		out[i] = toSummary(d)
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

func deliveriesLink(r *http.Request, q url.Values, cursor int64, rel string) string {
	q = maps.Clone(q)
	q.Set("cursor", formatCursor(cursor))
	return `<` + httpapi.LinkURL(r, r.URL.Path, q) + `>; rel="` + rel + `"`
}

// pathDelivery loads the {delivery_id} of the request's hook.
func (h *Handler) pathDelivery(r *http.Request) (*Hook, *Delivery, error) {
	hook, _, err := h.pathHook(r)
	if err != nil {
		return nil, nil, err
	}
	id, err := httpapi.PathInt64(r, "delivery_id")
	if err != nil {
		return nil, nil, apierr.NotFound()
	}
	d, err := deliveryOfHook(r.Context(), h.Service.DB, hook.ID, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, apierr.NotFound()
	}
	return hook, d, err
}

// getDelivery serves GET .../deliveries/{delivery_id}.
func (h *Handler) getDelivery(w http.ResponseWriter, r *http.Request) error {
	hook, d, err := h.pathDelivery(r)
	if err != nil {
		return err
	}
	payload, err := payloadBody(r.Context(), h.Service.DB, d.PayloadID)
	if err != nil {
		return err
	}
	out, err := toDetail(hook, d, payload)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// redeliver serves POST .../deliveries/{delivery_id}/attempts: 202, and
// the delivery is sent again as a new one with redelivery true.
func (h *Handler) redeliver(w http.ResponseWriter, r *http.Request) error {
	hook, d, err := h.pathDelivery(r)
	if err != nil {
		return err
	}
	if err := h.Service.Redeliver(r.Context(), hook, d); err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusAccepted, struct{}{})
	return nil
}

// ping serves POST .../hooks/{hook_id}/pings: 204 and a ping delivery.
func (h *Handler) ping(w http.ResponseWriter, r *http.Request) error {
	hook, _, err := h.pathHook(r)
	if err != nil {
		return err
	}
	sender, err := h.sender(r)
	if err != nil {
		return err
	}
	if err := h.Service.Ping(r.Context(), hook, sender); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

// test serves POST /repos/{owner}/{repo}/hooks/{hook_id}/tests: 204; the
// latest push is sent again when the hook receives push events (rule 7).
func (h *Handler) test(w http.ResponseWriter, r *http.Request) error {
	hook, _, err := h.pathHook(r)
	if err != nil {
		return err
	}
	if _, err := h.Service.SendLatestPush(r.Context(), hook); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

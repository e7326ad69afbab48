package webhooks

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"

	"forgeapi/internal/store"
	"forgeapi/internal/webhooks/hookshot"
	"forgeapi/internal/wire"
)

// Sending: a claimed delivery's hook, secret and payload made into a
// hookshot.Request, sent (signed, through the allow list) from a send
// goroutine, and its outcome encoded for the recorder. The hand-off's
// contract is Dispatcher's.

// prepareBatch prepares claimed deliveries for sending, reading the
// hooks not in hooks (and adding them). Those whose hook or payload could
// not be read (a database error, a shutdown) go back to the queue, due
// after pollInterval.
func (d *Dispatcher) prepareBatch(ctx context.Context, batch []claimed, hooks map[int64]*Hook) (jobs []job, unready []putBackItem) {
	jobs = make([]job, 0, len(batch)) // 320 bytes a job: grown by append, the most allocated of a claim
	for _, c := range batch {
		j, err := d.prepare(ctx, c, hooks)
		if err != nil {
			if ctx.Err() == nil {
				d.svc.logger().Error("prepare webhook delivery", "delivery_id", c.ID, "err", err)
			}
			unready = append(unready, putBackOf(c, hooks[c.HookID], d.svc.now().Add(pollInterval)))
			continue
		}
		jobs = append(jobs, j)
	}
	return jobs, unready
}

// prepare loads what a delivery needs (its hook, once per batch, and its
// payload) and decides whether it is sent at all (skip says why not).
func (d *Dispatcher) prepare(ctx context.Context, c claimed, hooks map[int64]*Hook) (job, error) {
	j := job{claimed: c}
	h, ok := hooks[c.HookID]
	if !ok {
		var err error
		if h, err = d.svc.hookToSend(ctx, d.svc.DB, c.HookID); err != nil && !errors.Is(err, store.ErrNotFound) {
			return j, err
		}
		hooks[c.HookID] = h
	}
	j.hook = h
	var err error
	switch {
	case h == nil || (h.DeletedAt != nil && c.Event != "meta"):
		j.skip = "hook deleted"
	case !h.Active && c.Event != "ping" && c.Event != "meta":
		j.skip = "hook inactive"
	default:
		j.request, j.skip, err = d.request(ctx, c, h)
	}
	return j, err
}

// request builds the HTTP delivery of c to h; skip says why it cannot.
func (d *Dispatcher) request(ctx context.Context, c claimed, h *Hook) (req hookshot.Request, skip string, err error) {
	body, err := d.payload(ctx, c.PayloadID)
	if errors.Is(err, store.ErrNotFound) {
		return req, "payload pruned", nil
	}
	if err != nil {
		return req, "", err
	}
	secret, err := d.svc.Secret(h)
	if err != nil {
		d.svc.logger().Error("open webhook secret (was the server key changed?)", "hook_id", h.ID, "err", err)
		return req, "failed to open the hook secret", nil
	}
	password, err := d.svc.Password(h)
	if err != nil {
		d.svc.logger().Error("open webhook password (was the server key changed?)", "hook_id", h.ID, "err", err)
		return req, "failed to open the hook password", nil
	}
	return hookshot.Request{URL: h.URL, ContentType: hookshot.ContentType(h.ContentType), Secret: secret,
		Username: h.Username, Password: password, InsecureSSL: h.InsecureSSL == "1", Event: c.Event, DeliveryGUID: c.GUID, HookID: h.ID,
		TargetID: h.TargetID(), TargetType: h.TargetType(), Payload: body}, "", nil
}

// payload returns a payload body, cached: payload rows never change.
func (d *Dispatcher) payload(ctx context.Context, id int64) ([]byte, error) {
	if body, ok := d.payloads[id]; ok {
		return body, nil
	}
	body, err := payloadBody(ctx, d.svc.DB, id)
	if err != nil {
		return nil, err
	}
	d.cachePayload(id, body)
	return body, nil
}

// cachePayload keeps a payload body for payload; claim loop only.
func (d *Dispatcher) cachePayload(id int64, body []byte) {
	if len(d.payloads) >= 1024 {
		clear(d.payloads)
	}
	d.payloads[id] = body
}

// maxIdleSenders is how many send goroutines wait for work at most.
const maxIdleSenders = 256

// startSend sends j in a goroutine of its own, counted in d.sends: a send
// goroutine waiting for work if there is one, else a new one. Started
// anew for every delivery, a send's goroutine grew its stack again through
// net/http's client each time (runtime.newstack, 1.8% of the CPU in the
// webhooks bench).
func (d *Dispatcher) startSend(j job) {
	d.sends.Add(1)
	select {
	case d.idleSenders <- j:
	default:
		go d.sendLoop(j)
	}
}

// sendLoop sends j, then each job startSend hands it, until Run closes
// idleSenders; it ends at once when maxIdleSenders wait already.
func (d *Dispatcher) sendLoop(j job) {
	for ok := true; ok; {
		d.send(j)
		if d.idle.Add(1) > maxIdleSenders {
			d.idle.Add(-1)
			return
		}
		j, ok = <-d.idleSenders
		d.idle.Add(-1)
	}
}

// send delivers one job and hands the outcome to the recorder.
func (d *Dispatcher) send(j job) {
	defer d.sends.Done()
	o := outcome{job: j}
	if j.skip == "" {
		o.result = d.sender.Send(context.Background(), j.request)
		d.explainRefusal(j.hook, &o.result)
	} else {
		o.result = hookshot.Result{Status: j.skip}
	}
	o.at = d.svc.now()
	o.requestHeaders, o.impliedHeaders = storedRequestHeaders(j, o.result.RequestHeaders)
	o.responseHeaders = responseHeadersJSON(o.result.ResponseHeaders)
	o.responseBody = strings.ToValidUTF8(string(o.result.ResponseBody), "\uFFFD")
	d.results <- o
	d.finish(j.HookID)
}

// storedRequestHeaders are the request.headers object the delivery log
// stores for a job sent with headers, and the identity header sets left
// out of it: those the job's row (GUID, event, hook) and hook (target)
// say the same of, which Delivery.SentHeaders adds back.
func storedRequestHeaders(j job, headers hookshot.Headers) (string, hookshot.IdentitySets) {
	id := hookshot.Identity{DeliveryGUID: j.GUID, Event: j.Event, HookID: j.HookID}
	if j.hook != nil {
		id.TargetID, id.TargetType = j.hook.TargetID(), j.hook.TargetType()
	}
	b, implied := headers.AppendStoredJSON(make([]byte, 0, 512), id)
	return string(b), implied
}

// responseHeadersJSON is the delivery log's response.headers object (nil
// is {}): names lower-cased and sorted as json.Marshal orders a map's
// keys, the values of a repeated header (or of two spellings of one
// name) joined with ", ". Written without a map or reflection; with them
// it was a third of the cost of recording a delivery.
func responseHeadersJSON(h http.Header) string {
	type field struct {
		name   string
		values []string
	}
	var fieldsArray [32]field
	fields := fieldsArray[:0]
	n := 2
	for k, v := range h {
		fields = append(fields, field{strings.ToLower(k), v})
		n += len(k) + 6
		for _, s := range v {
			n += len(s) + 2
		}
	}
	slices.SortStableFunc(fields, func(a, b field) int { return strings.Compare(a.name, b.name) })
	b := make([]byte, 0, n)
	b = append(b, '{')
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		for i+1 < len(fields) && fields[i+1].name == f.name {
			i++
			f.values = append(slices.Clip(f.values), fields[i].values...)
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = wire.AppendString(b, f.name)
		b = append(b, ':')
		if len(f.values) == 1 {
			b = wire.AppendString(b, f.values[0])
		} else {
			b = wire.AppendString(b, strings.Join(f.values, ", "))
		}
	}
	return string(append(b, '}'))
}

// AllowedHostsFlag is the command-line flag that sets Config.AllowedHosts;
// a refused delivery's status names it.
const AllowedHostsFlag = "--webhook-allowed-hosts"

// explainRefusal adds to the status of a delivery the allow list refused
// the flag value that would allow it, and logs the first refusal of each
// hook (per process) at warning level, so that an operator sees why a
// hook gets nothing.
func (d *Dispatcher) explainRefusal(h *Hook, res *hookshot.Result) {
	var refused *hookshot.RefusedError
	if !errors.As(res.Err, &refused) {
		return
	}
	fix := AllowedHostsFlag + " " + d.allow.With(refused.AllowEntry())
	res.Status += "; allow it with " + fix
	d.mu.Lock()
	first := !d.refusedHooks[h.ID]
	d.refusedHooks[h.ID] = true
	d.mu.Unlock()
	if first {
		d.svc.logger().Warn("webhook delivery refused by the allow list", "hook_id", h.ID,
			"address", refused.Addr.String(), "class", string(refused.Class), "fix", fix)
	}
}

// ReceiverRoots returns the roots that verify HTTPS receivers: nil (the
// system's) without a CA file, else the system's plus the file's
// certificates.
func ReceiverRoots(caFile string) (*x509.CertPool, error) {
	if caFile == "" {
		return nil, nil
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s holds no PEM certificate", caFile)
	}
	return pool, nil
}

package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/app"
	"forgeapi/internal/auth"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/webhooks"
)

// webhooksBench is the webhooks scenario's configuration.
type webhooksBench struct {
	hooks      int
	rate       float64 // events per second; 0 as fast as the workers go
	duration   time.Duration
	workers    int
	drain      time.Duration
	rateLimit  float64
	database   string
	dataDir    string
	cpuProfile string
	memProfile string
	// -compare-bare: alternating rounds with the bare loop, then a paced
	// run at latencyShare of the bare rate.
	compareBare  bool
	rounds       int
	round        time.Duration
	bareSenders  int
	latencyShare float64
	paceAgainst  string // "flat" or "same": the bare loop whose rate the paced run takes a share of
	// timeline is the window of the measured run's latency timeline (0:
	// none), printed to standard error: where in the run the tail was.
	timeline time.Duration
}

// webhooksReport is the scenario's JSON output.
type webhooksReport struct {
	Scenario           string  `json:"scenario"`
	Database           string  `json:"database"`
	Hooks              int     `json:"hooks"`
	TargetEventsPerSec float64 `json:"target_events_per_second"` // 0: as fast as possible
	Events             int64   `json:"events"`
	APIErrors          int64   `json:"api_errors"`
	EventsPerSec       float64 `json:"events_per_second"`
	DeliveriesExpected int64   `json:"deliveries_expected"`
	DeliveriesReceived int64   `json:"deliveries_received"`
	Duplicates         int64   `json:"duplicates"`
	BadSignatures      int64   `json:"bad_signatures"`
	DeliveriesLogged   int64   `json:"deliveries_logged"`
	DeliveriesPerSec   float64 `json:"deliveries_per_second"`
	LatencyP50Ms       float64 `json:"latency_p50_ms"`
	LatencyP99Ms       float64 `json:"latency_p99_ms"`
	LatencyMaxMs       float64 `json:"latency_max_ms"`
	// APIP50Ms and APIP99Ms are the API calls' own latencies (the
	// PATCH's round trip), the first part of the latency above.
	APIP50Ms              float64 `json:"api_p50_ms"`
	APIP99Ms              float64 `json:"api_p99_ms"`
	ElapsedSec            float64 `json:"elapsed_seconds"`
	GenerationSec         float64 `json:"generation_seconds"`
	AllDeliveredAndLogged bool    `json:"all_delivered_and_logged"`
}

// runWebhooks starts a receiver and a server, creates hooks on one
// repository through the API, triggers repository events through the API
// (PATCH /repos/{owner}/{repo} with a new description) at a given rate,
// and reports delivery throughput and the latency from each API call to
// the receipt of each of its deliveries, as JSON.
func runWebhooks(ctx context.Context, args []string) error {
	var b webhooksBench
	fs := flag.NewFlagSet("webhooks", flag.ContinueOnError)
	fs.IntVar(&b.hooks, "hooks", 10, "hooks on the repository, each receiving every event")
	fs.Float64Var(&b.rate, "rate", 0, "events per second; 0 sends as fast as the workers go")
	fs.DurationVar(&b.duration, "duration", 10*time.Second, "how long events are triggered")
	fs.IntVar(&b.workers, "workers", 8, "concurrent API clients")
	fs.DurationVar(&b.drain, "drain", 60*time.Second, "how long to wait for the last deliveries")
	fs.Float64Var(&b.rateLimit, "rate-limit", -1, "the server's per-hook delivery rate limit (-1: none, 0: the default)")
	fs.StringVar(&b.database, "database", "", "postgres://... (default SQLite in -data)")
	fs.StringVar(&b.dataDir, "data", "", "data directory (default a temporary one, removed after)")
	fs.StringVar(&b.cpuProfile, "cpuprofile", "", "write a CPU profile of the run to this file")
	fs.StringVar(&b.memProfile, "memprofile", "", "write an allocation profile (after the run) to this file")
	fs.BoolVar(&b.compareBare, "compare-bare", false, "alternate rounds of forgeapi deliveries with a bare signed POST loop, print both rates and the ratio, then run paced at -latency-share of the bare rate")
	fs.IntVar(&b.rounds, "rounds", 4, "-compare-bare: rounds of each")
	fs.DurationVar(&b.round, "round", 3*time.Second, "-compare-bare: length of one round")
	fs.IntVar(&b.bareSenders, "bare-senders", 32, "-compare-bare: goroutines of the bare loop")
	fs.Float64Var(&b.latencyShare, "latency-share", 0.4, "-compare-bare: the paced run offers this share of the bare rate (0: no paced run)")
	fs.DurationVar(&b.timeline, "timeline", 0, "print the measured run's deliveries, p50, p99 and max latency per window of this length to standard error (0: none)")
	fs.StringVar(&b.paceAgainst, "pace-against", "flat", "-compare-bare: the paced run's bare rate: flat (the flat 4 KB loop's) or same (the loop sending forgeapi's bytes)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if b.hooks < 1 || b.workers < 1 || b.rate < 0 {
		return errors.New("-hooks and -workers must be positive, -rate 0 or more")
	}
	if b.paceAgainst != "flat" && b.paceAgainst != "same" {
		return fmt.Errorf("-pace-against %q: want flat or same", b.paceAgainst)
	}
	if b.dataDir == "" {
		dir, err := os.MkdirTemp("", "forgeapi-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		b.dataDir = dir
	}
	rcv := newReceiver("bench-secret")
	hookURL, stopReceiver, err := serveReceiver(rcv)
	if err != nil {
		return err
	}
	defer stopReceiver()

	m, err := app.Start(ctx, app.Config{Addr: "127.0.0.1:0", DataDir: b.dataDir, DatabaseURL: b.database,
		Logger:   discardLogger(),
		Webhooks: webhooks.Config{AllowedHosts: "loopback", RateLimit: b.rateLimit}})
	if err != nil {
		return err
	}
	defer m.Close()
	fx, err := webhooksFixture(ctx, m.App)
	if err != nil {
		return fmt.Errorf("fixture: %w", err)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: b.workers * 2}}
	hookIDs, err := b.createHooks(ctx, client, m.URL(), fx, hookURL)
	if err != nil {
		return err
	}
	if err := rcv.awaitPings(ctx, b.hooks, 30*time.Second); err != nil {
		return err
	}
	stopProfile, err := startCPUProfile(b.cpuProfile)
	if err != nil {
		return err
	}
	defer stopProfile()
	var loggedBefore int64
	if b.compareBare {
		defer func() {
			if n, err := countLogged(ctx, m.App.DB, hookIDs); err == nil {
				handed, claimed := m.App.Webhooks.DispatchCounts()
				fmt.Printf("delivery log: %d deliveries logged done with a 2xx in all; the dispatcher started %d handed over by the API's transaction, %d claimed\n",
					n, handed, claimed)
			}
		}()
		flatRate, sameRate, forgeReceived, err := b.runCompareBare(ctx, client, m.URL(), fx, rcv, hookURL)
		if err != nil {
			return err
		}
		if b.latencyShare <= 0 {
			return writeAllocProfile(b.memProfile)
		}
		// The rounds' last deliveries are logged just after their receipt.
		for deadline := time.Now().Add(b.drain); ; time.Sleep(10 * time.Millisecond) {
			if loggedBefore, err = countLogged(ctx, m.App.DB, hookIDs); err != nil {
				return err
			}
			if loggedBefore >= forgeReceived || time.Now().After(deadline) {
				break
			}
		}
		bareRate, against := flatRate, "the bare rate"
		if b.paceAgainst == "same" {
			bareRate, against = sameRate, "the same bytes' bare rate"
		}
		b.rate = b.latencyShare * bareRate / float64(b.hooks)
		fmt.Printf("paced run: %.0f events/s (%.0f deliveries/s, %.2f of %s) for %s, load %s\n",
			b.rate, b.rate*float64(b.hooks), b.latencyShare, against, b.duration, loadAverage())
	}
	rep := b.measure(ctx, client, m.URL(), fx, rcv)
	rep.Database = string(m.App.DB.Dialect)
	// A delivery is logged just after its receiver answers: poll for the
	// last few.
	for deadline := time.Now().Add(b.drain); ; time.Sleep(10 * time.Millisecond) {
		if rep.DeliveriesLogged, err = countLogged(ctx, m.App.DB, hookIDs); err != nil {
			return err
		}
		if rep.DeliveriesLogged -= loggedBefore; rep.DeliveriesLogged >= rep.DeliveriesExpected || time.Now().After(deadline) {
			break
		}
	}
	rep.AllDeliveredAndLogged = rep.DeliveriesReceived == rep.DeliveriesExpected && rep.BadSignatures == 0 &&
		rep.DeliveriesLogged >= rep.DeliveriesExpected
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rep); err != nil {
		return err
	}
	return writeAllocProfile(b.memProfile)
}

// benchFixture is the repository events are triggered on.
type benchFixture struct {
	owner, repo, token string
}

func webhooksFixture(ctx context.Context, a *app.App) (*benchFixture, error) {
	var user *accounts.Account
	var token auth.CreatedToken
	err := a.DB.Tx(ctx, func(tx *store.Tx) error {
		var err error
		user, err = accounts.Create(ctx, tx, accounts.NewAccount{Type: accounts.TypeUser, Login: "bench"})
		if err != nil {
			return err
		}
		token, err = auth.CreateToken(ctx, tx, auth.TokenSpec{Kind: auth.KindClassic, UserID: user.ID,
			Scopes: auth.Scopes{"repo", "admin:repo_hook"}})
		return err
	})
	if err != nil {
		return nil, err
	}
	if _, err := a.Repos.Create(ctx, repos.NewRepository{Owner: user, Name: "widgets"}, user); err != nil {
		return nil, err
	}
	return &benchFixture{owner: "bench", repo: "widgets", token: token.Value}, nil
}

// createHooks creates b.hooks json hooks with a secret, subscribed to
// repository events, and returns their ids.
func (b *webhooksBench) createHooks(ctx context.Context, client *http.Client, base string, fx *benchFixture, url string) ([]int64, error) {
	return createHooks(ctx, client, base, fx, url, "repository", b.hooks)
}

// createHooks creates n json hooks with the secret "bench-secret",
// subscribed to one event and delivering to url/0, url/1, ..., and
// returns their ids.
func createHooks(ctx context.Context, client *http.Client, base string, fx *benchFixture, url, event string, n int) ([]int64, error) {
	var ids []int64
	for i := range n {
		body := fmt.Sprintf(`{"config":{"url":%q,"content_type":"json","secret":"bench-secret"},"events":[%q]}`,
			url+"/"+strconv.Itoa(i), event)
		resp, err := call(ctx, client, "POST", base+"/repos/"+fx.owner+"/"+fx.repo+"/hooks", fx.token, body)
		if err != nil {
			return nil, err
		}
		if resp.status != http.StatusCreated {
			return nil, fmt.Errorf("create hook: status %d: %s", resp.status, resp.body)
		}
		var hook struct{ ID int64 }
		if err := json.Unmarshal(resp.body, &hook); err != nil {
			return nil, err
		}
		ids = append(ids, hook.ID)
	}
	return ids, nil
}

// measure triggers events for b.duration and waits for their deliveries.
func (b *webhooksBench) measure(ctx context.Context, client *http.Client, base string, fx *benchFixture, rcv *receiver) webhooksReport {
	var next, apiErrors atomic.Int64
	// A -compare-bare run measured before: count only what follows.
	eventsBefore, receivedBefore := rcv.eventCount(), rcv.receivedCount()
	start := time.Now()
	genCtx, cancel := context.WithTimeout(ctx, b.duration)
	defer cancel()
	var wg sync.WaitGroup
	calls := make([][]time.Duration, b.workers)
	for w := range b.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if b.rate > 0 {
					due := start.Add(time.Duration(float64(i-1) / b.rate * float64(time.Second)))
					if !sleepUntil(genCtx, due) {
						return
					}
				} else if genCtx.Err() != nil {
					return
				}
				desc := "bench-" + strconv.FormatInt(i, 10)
				sentAt := time.Now()
				rcv.sent(desc, sentAt)
				resp, err := call(ctx, client, "PATCH", base+"/repos/"+fx.owner+"/"+fx.repo, fx.token,
					`{"description":"`+desc+`"}`)
				calls[w] = append(calls[w], time.Since(sentAt))
				if err != nil || resp.status != http.StatusOK {
					apiErrors.Add(1)
					rcv.unsent(desc)
				}
			}
		}()
	}
	wg.Wait()
	generation := time.Since(start)
	events := rcv.eventCount() - eventsBefore
	expected := events * int64(b.hooks)
	rcv.await(ctx, receivedBefore+expected, b.drain)
	elapsed := rcv.lastReceipt().Sub(start)
	if elapsed <= 0 {
		elapsed = time.Since(start)
	}
	if b.timeline > 0 {
		printTimeline(os.Stderr, start, b.timeline, rcv.receiptsSince(receivedBefore))
	}
	lat := rcv.latenciesSince(receivedBefore)
	rep := webhooksReport{Scenario: "webhooks", Hooks: b.hooks, TargetEventsPerSec: b.rate, Events: events,
		APIErrors: apiErrors.Load(), EventsPerSec: float64(events) / generation.Seconds(),
		DeliveriesExpected: expected, DeliveriesReceived: int64(len(lat)), Duplicates: rcv.duplicates.Load(),
		BadSignatures: rcv.badSignatures.Load(), DeliveriesPerSec: float64(len(lat)) / elapsed.Seconds(),
		ElapsedSec: elapsed.Seconds(), GenerationSec: generation.Seconds()}
	if len(lat) > 0 {
		rep.LatencyP50Ms = ms(lat[len(lat)/2])
		rep.LatencyP99Ms = ms(lat[min(len(lat)-1, len(lat)*99/100)])
		rep.LatencyMaxMs = ms(lat[len(lat)-1])
	}
	if api := slices.Sorted(slices.Values(slices.Concat(calls...))); len(api) > 0 {
		rep.APIP50Ms, rep.APIP99Ms = ms(api[len(api)/2]), ms(api[min(len(api)-1, len(api)*99/100)])
	}
	return rep
}

// sleepUntil waits until t; false when ctx ends first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

type response struct {
	status int
	body   []byte
}

func call(ctx context.Context, client *http.Client, method, url, token, body string) (response, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewBufferString(body))
	if err != nil {
		return response{}, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, body: b}, err
}

// countLogged counts the successful deliveries of the hooks in the
// delivery log (pings excluded).
func countLogged(ctx context.Context, db *store.DB, hookIDs []int64) (int64, error) {
	var n int64
	for _, id := range hookIDs {
		var c int64
		err := db.QueryRowContext(ctx, `SELECT count(*) FROM hook_deliveries
			WHERE hook_id = $1 AND event = 'repository' AND status_code BETWEEN 200 AND 299`, id).Scan(&c)
		if err != nil {
			return 0, err
		}
		n += c
	}
	return n, nil
}

// receiver is the webhook receiver: it checks each delivery's signature
// and records the latency from the API call that caused it. It knows an
// event by a key: a repository event by the repository's description, a
// push by its after SHA.
type receiver struct {
	secret []byte
	// delay holds each answer back this long (a time.Duration). A
	// delivery whose sender goes away before the answer (or in the
	// middle of the body) counts as cut off, not received.
	delay         atomic.Int64
	cutOff        atomic.Int64
	mu            sync.Mutex
	sentAt        map[string]time.Time    // description -> API call start
	seen          map[string]map[int]bool // description -> hooks that delivered it
	lat           []time.Duration
	epoch         time.Time       // the receiver's start
	receivedAt    []time.Duration // of each latency in lat, since epoch (no pointer for the collector to follow)
	last          time.Time
	pings         int
	changed       chan struct{}
	seq           atomic.Int64
	duplicates    atomic.Int64
	badSignatures atomic.Int64
	// keeping is set while the receiver waits for the delivery to keep:
	// hook 0's of the event whose key is keepKey.
	keeping atomic.Bool
	keepKey string
	sample  *keptDelivery
	bodies  sync.Pool // *bytes.Buffer, a delivery's body
	macs    sync.Pool // hash.Hash, HMAC-SHA256 with secret
}

// keptDelivery is one delivery as received: the event's key (its
// repository description), the payload and the request's header lines.
type keptDelivery struct {
	key    string
	body   []byte
	header http.Header
}

// keep asks the receiver to keep hook 0's delivery of the event key.
func (r *receiver) keep(key string) {
	r.mu.Lock()
	r.keepKey, r.sample = key, nil
	r.mu.Unlock()
	r.keeping.Store(true)
}

// kept is the delivery keep asked for, nil until it arrived.
func (r *receiver) kept() *keptDelivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sample
}

// keepIfAsked keeps the delivery if it is the one keep asked for.
func (r *receiver) keepIfAsked(key string, hook int, body []byte, header http.Header) {
	if !r.keeping.Load() || hook != 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if key == r.keepKey && r.sample == nil {
		r.sample = &keptDelivery{key: key, body: bytes.Clone(body), header: header.Clone()}
		r.keeping.Store(false)
	}
}

// serveReceiver serves rcv on a port of 127.0.0.1 and returns the URL
// hooks deliver to, and the function that stops it.
func serveReceiver(rcv *receiver) (hookURL string, stop func() error, err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: rcv}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String() + "/hook", srv.Close, nil
}

func newReceiver(secret string) *receiver {
	r := &receiver{secret: []byte(secret), sentAt: map[string]time.Time{}, seen: map[string]map[int]bool{},
		epoch: time.Now(), changed: make(chan struct{}, 1)}
	r.bodies.New = func() any { return new(bytes.Buffer) }
	r.macs.New = func() any { return hmac.New(sha256.New, r.secret) }
	return r
}

func (r *receiver) sent(desc string, at time.Time) {
	r.mu.Lock()
	r.sentAt[desc] = at
	r.mu.Unlock()
}

func (r *receiver) unsent(desc string) {
	r.mu.Lock()
	delete(r.sentAt, desc)
	r.mu.Unlock()
}

// forget drops the events whose keys start with prefix: their API call
// times and the hooks that delivered them. A later delivery of one is
// neither counted nor a duplicate.
func (r *receiver) forget(prefix string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for key := range r.sentAt {
		if strings.HasPrefix(key, prefix) {
			delete(r.sentAt, key)
		}
	}
	for key := range r.seen {
		if strings.HasPrefix(key, prefix) {
			delete(r.seen, key)
		}
	}
}

func (r *receiver) eventCount() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return int64(len(r.sentAt))
}

// ServeHTTP takes one delivery at /hook/{n}.
func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	now := time.Now()
	buf := r.bodies.Get().(*bytes.Buffer)
	defer r.bodies.Put(buf)
	buf.Reset()
	if _, err := buf.ReadFrom(req.Body); err != nil { // the sender went away in the middle of the body
		r.cutOff.Add(1)
		return
	}
	payload := buf.Bytes()
	if !r.signedBySecret(req.Header.Get("X-Hub-Signature-256"), payload) {
		r.badSignatures.Add(1)
		http.Error(w, "bad signature", http.StatusBadRequest)
		return
	}
	hook, _ := strconv.Atoi(req.URL.Path[len("/hook/"):])
	event := req.Header.Get("X-Service-Event")
	key := eventKey(event, payload)
	if delay := time.Duration(r.delay.Load()); delay > 0 {
		select {
		case <-time.After(delay):
		case <-req.Context().Done():
			r.cutOff.Add(1)
			return
		}
	}
	w.WriteHeader(http.StatusOK)
	r.keepIfAsked(key, hook, payload, req.Header)
	r.record(event, key, hook, now)
}

// signedBySecret reports whether signature is "sha256=" and the hex
// HMAC-SHA256 of payload with the receiver's secret. It reuses its
// HMACs and the receiver its body buffers: the bench runs the receiver
// in forgeapi's process, and its garbage (two growing copies of each
// body) would make the collector's work on forgeapi's heap a cost of
// the receiver's.
func (r *receiver) signedBySecret(signature string, payload []byte) bool {
	hexSum, ok := strings.CutPrefix(signature, "sha256=")
	var got [sha256.Size]byte
	if !ok || hex.DecodedLen(len(hexSum)) != len(got) {
		return false
	}
	if _, err := hex.Decode(got[:], []byte(hexSum)); err != nil {
		return false
	}
	mac := r.macs.Get().(hash.Hash)
	defer r.macs.Put(mac)
	mac.Reset()
	mac.Write(payload)
	var want [sha256.Size]byte
	return hmac.Equal(mac.Sum(want[:0]), got[:])
}

// eventKey is the key the receiver knows a delivery's event by: a push's
// after SHA, a repository event's repository description, "" for any
// other event. It looks the one value up by its path (stringAt) rather
// than decoding the whole payload: the yardstick is a receiver that
// checks the HMAC, and a decode would cost more than that check, and
// more on forgeapi's nested payload than on the flat loop's
// (BenchmarkEventKey).
func eventKey(event string, payload []byte) string {
	switch event {
	case "push":
		return stringAt(payload, "after")
	case "repository":
		return stringAt(payload, "repository", "description")
	}
	return ""
}

func (r *receiver) record(event, desc string, hook int, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.signal()
	if event == "ping" {
		r.pings++
		return
	}
	start, ok := r.sentAt[desc]
	if !ok {
		return
	}
	hooks := r.seen[desc]
	if hooks == nil {
		hooks = map[int]bool{}
		r.seen[desc] = hooks
	}
	if hooks[hook] {
		r.duplicates.Add(1)
		return
	}
	hooks[hook] = true
	r.lat = append(r.lat, at.Sub(start))
	r.receivedAt = append(r.receivedAt, at.Sub(r.epoch))
	r.last = at
}

func (r *receiver) signal() {
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

// awaitPings waits for the ping of each new hook.
func (r *receiver) awaitPings(ctx context.Context, n int, timeout time.Duration) error {
	if !r.wait(ctx, timeout, func() bool { return r.pings >= n }) {
		return fmt.Errorf("received %d of %d pings", r.pings, n)
	}
	return nil
}

// await waits until n deliveries arrived or timeout passed.
func (r *receiver) await(ctx context.Context, n int64, timeout time.Duration) {
	r.wait(ctx, timeout, func() bool { return int64(len(r.lat)) >= n })
}

func (r *receiver) wait(ctx context.Context, timeout time.Duration, done func() bool) bool {
	deadline := time.After(timeout)
	for {
		r.mu.Lock()
		ok := done()
		r.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-r.changed:
		case <-deadline:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

func (r *receiver) lastReceipt() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last
}

func (r *receiver) latencies() []time.Duration { return r.latenciesSince(0) }

// receivedCount is how many deliveries were received (pings excluded).
func (r *receiver) receivedCount() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return int64(len(r.lat))
}

// nextSeq is a number not returned before, for unique event keys.
func (r *receiver) nextSeq() int64 { return r.seq.Add(1) }

// receipt is one delivery's receipt time and latency.
type receipt struct {
	at      time.Time
	latency time.Duration
}

// receiptsSince returns the deliveries received after the first n, in
// the order of their receipt.
func (r *receiver) receiptsSince(n int64) []receipt {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]receipt, 0, int64(len(r.lat))-n)
	for i := n; i < int64(len(r.lat)); i++ {
		out = append(out, receipt{r.epoch.Add(r.receivedAt[i]), r.lat[i]})
	}
	return out
}

// printTimeline writes, per window of the run from start, how many
// deliveries were received in it and their p50, p99 and max latency.
func printTimeline(w io.Writer, start time.Time, window time.Duration, receipts []receipt) {
	byWindow := map[int][]time.Duration{}
	last := 0
	for _, rc := range receipts {
		i := int(rc.at.Sub(start) / window)
		byWindow[i] = append(byWindow[i], rc.latency)
		last = max(last, i)
	}
	fmt.Fprintf(w, "timeline (window %s): from start, deliveries, p50, p99, max (ms)\n", window)
	for i := 0; i <= last; i++ {
		lat := byWindow[i]
		if len(lat) == 0 {
			fmt.Fprintf(w, "  %8.2fs %6d\n", (time.Duration(i) * window).Seconds(), 0)
			continue
		}
		slices.Sort(lat)
		fmt.Fprintf(w, "  %8.2fs %6d %7.1f %7.1f %7.1f\n", (time.Duration(i) * window).Seconds(), len(lat),
			ms(lat[len(lat)/2]), ms(lat[min(len(lat)-1, len(lat)*99/100)]), ms(lat[len(lat)-1]))
	}
}

// latenciesSince returns the latencies of the deliveries received after
// the first n, sorted.
func (r *receiver) latenciesSince(n int64) []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := slices.Clone(r.lat[n:])
	slices.Sort(out)
	return out
}

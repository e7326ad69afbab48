package httpapi

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
)

// The platform's core rate limits, per hour.
const (
	AnonymousLimit     = 60
	AuthenticatedLimit = 5000
	rateWindow         = time.Hour
)

// RateLimiter counts requests per caller in fixed one-hour windows, in
// memory. Each server process counts its own requests.
type RateLimiter struct {
	mu      sync.Mutex
	now     func() time.Time
	windows map[rateID]*rateWindowState
	sweep   time.Time
}

type rateWindowState struct {
	limit int
	used  int
	reset time.Time
}

// NewRateLimiter returns an empty limiter reading time from now.
func NewRateLimiter(now func() time.Time) *RateLimiter {
	return &RateLimiter{now: now, windows: map[rateID]*rateWindowState{}}
}

// RateKey identifies whose budget a request spends, and its limit.
type RateKey struct {
	ID    rateID
	Limit int
}

// rateID names a budget: an app's, an account's, or a client address's
// (anonymous). It is a map key made without building a string.
type rateID struct {
	kind byte // 'a' app, 'u' account, 'i' client address
	id   int64
	addr string
}

func rateKey(r *http.Request, p *auth.Principal) RateKey {
	if p != nil && p.App != nil {
		return RateKey{ID: rateID{kind: 'a', id: p.App.ID}, Limit: AuthenticatedLimit}
	}
	if !p.Anonymous() {
		return RateKey{ID: rateID{kind: 'u', id: p.Account.ID}, Limit: AuthenticatedLimit}
	}
	return RateKey{ID: rateID{kind: 'i', addr: ClientIP(r)}, Limit: AnonymousLimit}
}

// Reservation is one request's use of a budget.
type Reservation struct {
	key   RateKey
	OK    bool // false when the budget was spent before this request
	Used  int
	Reset time.Time
}

// Reserve spends one request of the key's budget, when any is left.
func (l *RateLimiter) Reserve(k RateKey) Reservation {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	l.sweepExpired(now)
	w := l.windows[k.ID]
	if w == nil || !now.Before(w.reset) {
		w = &rateWindowState{limit: k.Limit, reset: now.Add(rateWindow).Truncate(time.Second)}
		l.windows[k.ID] = w
	}
	res := Reservation{key: k, Reset: w.reset}
	if w.used < w.limit {
		w.used++
		res.OK = true
	}
	res.Used = w.used
	return res
}

// Refund gives back a reservation's request (a 304 does not count).
func (l *RateLimiter) Refund(res Reservation) Reservation {
	if !res.OK {
		return res
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if w := l.windows[res.key.ID]; w != nil && w.reset.Equal(res.Reset) && w.used > 0 {
		w.used--
		res.Used = w.used
	}
	return res
}

// sweepExpired drops windows that have ended, at most once a minute.
func (l *RateLimiter) sweepExpired(now time.Time) {
	if now.Sub(l.sweep) < time.Minute {
		return
	}
	l.sweep = now
	for k, w := range l.windows {
		if !now.Before(w.reset) {
			delete(l.windows, k)
		}
	}
}

// SetHeaders writes the x-ratelimit-* headers when enabled.
func (res Reservation) SetHeaders(h http.Header, enabled bool) { res.setHeaders(h, enabled, nil) }

// setHeaders is SetHeaders with the values' slices taken from the
// request's recorder when it has room for them (rec may be nil). The four
// numbers are one string: one allocation for the five headers.
func (res Reservation) setHeaders(h http.Header, enabled bool, rec *statusRecorder) {
	if !enabled {
		return
	}
	var buf [4 * 20]byte
	b := strconv.AppendInt(buf[:0], int64(res.key.Limit), 10)
	limit := len(b)
	b = strconv.AppendInt(b, int64(max(0, res.key.Limit-res.Used)), 10)
	remaining := len(b)
	b = strconv.AppendInt(b, int64(res.Used), 10)
	used := len(b)
	b = strconv.AppendInt(b, res.Reset.Unix(), 10)
	digits := string(b)
	var vs []string
	if rec != nil && len(rec.vals)-rec.nvalues >= 5 {
		vs = rec.vals[rec.nvalues : rec.nvalues+5]
		rec.nvalues += 5
	} else {
		vs = make([]string, 5)
	}
	vs[0], vs[1], vs[2], vs[3], vs[4] = digits[:limit], digits[limit:remaining], digits[remaining:used], digits[used:], "core"
	// The keys are in canonical form; each slice's capacity is 1, so
	// that Header.Add copies it rather than write over the next value.
	h["X-Ratelimit-Limit"] = vs[0:1:1]
	h["X-Ratelimit-Remaining"] = vs[1:2:2]
	h["X-Ratelimit-Used"] = vs[2:3:3]
	h["X-Ratelimit-Reset"] = vs[3:4:4]
	h["X-Ratelimit-Resource"] = vs[4:5:5]
}

// Limit is the budget of the reservation's caller.
func (res Reservation) Limit() int { return res.key.Limit }

// Error is the 403 sent when the budget is spent, with retry-after.
func (res Reservation) Error() *apierr.Error {
	wait := max(1, int(time.Until(res.Reset).Seconds()))
	msg := "API rate limit exceeded. Authenticated requests get a higher rate limit."
	if res.key.Limit == AuthenticatedLimit {
		msg = "API rate limit exceeded for user."
	}
	return apierr.Forbidden("%s", msg).WithHeader("Retry-After", strconv.Itoa(wait))
}

// Status returns the caller's current budget without spending it.
func (l *RateLimiter) Status(k RateKey) Reservation {
	l.mu.Lock()
	defer l.mu.Unlock()
	res := Reservation{key: k, OK: true, Reset: l.now().Add(rateWindow).Truncate(time.Second)}
	if w := l.windows[k.ID]; w != nil && l.now().Before(w.reset) {
		res.Used, res.Reset = w.used, w.reset
	}
	return res
}

// ChargeAnonymous spends one request of the anonymous budget of the
// request's client address: every failed authentication does, on the
// API and on git over HTTP, so that guessing credentials is limited like
// anonymous use.
func (s *Server) ChargeAnonymous(r *http.Request) Reservation {
	return s.limiter.Reserve(rateKey(r, nil))
}

// RateStatus returns the request's caller's current budget, for the
// /rate_limit endpoint.
func (s *Server) RateStatus(r *http.Request) Reservation {
	return s.limiter.Status(rateKey(r, auth.PrincipalFrom(r.Context())))
}

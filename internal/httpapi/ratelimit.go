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
	windows map[string]*rateWindowState
	sweep   time.Time
}

type rateWindowState struct {
	limit int
	used  int
	reset time.Time
}

// NewRateLimiter returns an empty limiter reading time from now.
func NewRateLimiter(now func() time.Time) *RateLimiter {
	return &RateLimiter{now: now, windows: map[string]*rateWindowState{}}
}

// RateKey identifies whose budget a request spends, and its limit.
type RateKey struct {
	ID    string
	Limit int
}

func rateKey(r *http.Request, p *auth.Principal) RateKey {
	if p != nil && p.App != nil {
		return RateKey{ID: "app" + strconv.FormatInt(p.App.ID, 10), Limit: AuthenticatedLimit}
	}
	if !p.Anonymous() {
		return RateKey{ID: "u" + strconv.FormatInt(p.Account.ID, 10), Limit: AuthenticatedLimit}
	}
	return RateKey{ID: "ip" + ClientIP(r), Limit: AnonymousLimit}
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
func (res Reservation) SetHeaders(h http.Header, enabled bool) {
	if !enabled {
		return
	}
	// One array holds the five values; the keys are in canonical form.
	v := [...]string{
		strconv.Itoa(res.key.Limit),
		strconv.Itoa(max(0, res.key.Limit-res.Used)),
		strconv.Itoa(res.Used),
		strconv.FormatInt(res.Reset.Unix(), 10),
		"core",
	}
	vs := v[:]
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

package httpapi

import (
	"context"
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

// RateResource is a budget of its own, as the platform keeps them: the
// core REST budget, GraphQL's points and search's requests a minute.
// Each caller has one window per resource.
type RateResource struct {
	// Name is what X-RateLimit-Resource and GET /rate_limit call it.
	Name string
	// Limit and AnonymousLimit are the budgets of a window, for a
	// caller with credentials and without.
	Limit, AnonymousLimit int
	// Window is how long a budget lasts from its first use.
	Window time.Duration
	id     byte // the resource in a rateID
}

// The rate-limit resources forgeapi keeps. A route spends Core unless
// it names another (Route.Rate).
var (
	Core    = &RateResource{Name: "core", Limit: AuthenticatedLimit, AnonymousLimit: AnonymousLimit, Window: rateWindow, id: 'c'}
	GraphQL = &RateResource{Name: "graphql", Limit: AuthenticatedLimit, AnonymousLimit: 0, Window: rateWindow, id: 'g'}
	// Search is the search API's budget: 30 requests a minute with
	// credentials, 10 without, as the platform's.
	Search = &RateResource{Name: "search", Limit: 30, AnonymousLimit: 10, Window: time.Minute, id: 's'}
)

// RateLimiter counts requests per caller in fixed windows, in memory.
// Each server process counts its own requests.
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

// RateKey identifies whose budget a request spends, of which resource,
// and its limit.
type RateKey struct {
	ID       rateID
	Limit    int
	Resource *RateResource
}

// rateID names a budget: an app's, an account's, or a client address's
// (anonymous), of one resource. It is a map key made without building a
// string.
type rateID struct {
	kind     byte // 'a' app, 'u' account, 'i' client address
	resource byte // RateResource.id
	id       int64
	addr     string
}

// rateKey is the key of the caller's budget of resource rs (nil: Core).
func rateKey(r *http.Request, p *auth.Principal, rs *RateResource) RateKey {
	if rs == nil {
		rs = Core
	}
	if p != nil && p.App != nil {
		return RateKey{ID: rateID{kind: 'a', resource: rs.id, id: p.App.ID}, Limit: rs.Limit, Resource: rs}
	}
	if !p.Anonymous() {
		return RateKey{ID: rateID{kind: 'u', resource: rs.id, id: p.Account.ID}, Limit: rs.Limit, Resource: rs}
	}
	return RateKey{ID: rateID{kind: 'i', resource: rs.id, addr: ClientIP(r)}, Limit: rs.AnonymousLimit, Resource: rs}
}

// Reservation is one request's use of a budget.
type Reservation struct {
	key   RateKey
	OK    bool // false when the budget could not cover this request
	n     int  // how much it spent
	Used  int
	Reset time.Time
}

// Reserve spends one request of the key's budget, when any is left.
func (l *RateLimiter) Reserve(k RateKey) Reservation { return l.ReserveN(k, 1) }

// ReserveN spends n of the key's budget when that much is left, and
// nothing otherwise (OK false).
func (l *RateLimiter) ReserveN(k RateKey, n int) Reservation {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	l.sweepExpired(now)
	w := l.windows[k.ID]
	if w == nil || !now.Before(w.reset) {
		w = &rateWindowState{limit: k.Limit, reset: now.Add(k.window()).Truncate(time.Second)}
		l.windows[k.ID] = w
	}
	res := Reservation{key: k, Reset: w.reset}
	if w.used+n <= w.limit {
		w.used += n
		res.OK, res.n = true, n
	}
	res.Used = w.used
	return res
}

// window is the length of the key's resource's windows.
func (k RateKey) window() time.Duration {
	if k.Resource == nil {
		return rateWindow
	}
	return k.Resource.Window
}

// resourceName is the key's resource's name.
func (k RateKey) resourceName() string {
	if k.Resource == nil {
		return Core.Name
	}
	return k.Resource.Name
}

// Refund gives back a reservation's request (a 304 does not count).
func (l *RateLimiter) Refund(res Reservation) Reservation {
	if !res.OK {
		return res
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if w := l.windows[res.key.ID]; w != nil && w.reset.Equal(res.Reset) && w.used >= res.n {
		w.used -= res.n
		res.Used, res.n = w.used, 0
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
	vs[0], vs[1], vs[2], vs[3], vs[4] = digits[:limit], digits[limit:remaining], digits[remaining:used], digits[used:], res.key.resourceName()
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
	res := Reservation{key: k, OK: true, Reset: l.now().Add(k.window()).Truncate(time.Second)}
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
	return s.limiter.Reserve(rateKey(r, nil, Core))
}

// RateStatus returns the caller's current budget of the resource
// without spending it (for GET /rate_limit); ok is false outside an API
// request.
func RateStatus(r *http.Request, rs *RateResource) (res Reservation, ok bool) {
	st, ok := r.Context().Value(rateStateKey{}).(*rateState)
	if !ok {
		return Reservation{}, false
	}
	return st.limiter.Status(rateKey(r, auth.PrincipalFrom(r.Context()), rs)), true
}

// rateState is a request's reservation, for its handler.
type rateState struct {
	limiter *RateLimiter
	enabled bool // Config.RateLimit
	res     Reservation
}

type rateStateKey struct{}

// RateOf returns the budget the request spent on arrival (OK false when
// it could not, for a route that HandlesRateLimit), and whether limits
// are enforced. Outside an API request it returns a zero Reservation.
func RateOf(ctx context.Context) (res Reservation, enforced bool) {
	if st, ok := ctx.Value(rateStateKey{}).(*rateState); ok {
		return st.res, st.enabled
	}
	return Reservation{}, false
}

// ChargeTotal makes the request's charge n in all (a GraphQL query's
// points; it spent one on arrival) and rewrites the rate-limit headers of
// w. When limits are enforced and the budget cannot cover it, the request
// is to be refused: ChargeTotal gives back what it spent on arrival and
// returns false.
func ChargeTotal(ctx context.Context, w http.ResponseWriter, n int) bool {
	st, ok := ctx.Value(rateStateKey{}).(*rateState)
	if !ok || n <= st.res.n {
		return true
	}
	if !st.res.OK {
		return !st.enabled
	}
	more := st.limiter.ReserveN(st.res.key, n-st.res.n)
	if more.OK {
		st.res.Used, st.res.Reset, st.res.n = more.Used, more.Reset, n
	} else if st.enabled {
		st.res = st.limiter.Refund(st.res)
	}
	st.res.SetHeaders(w.Header(), st.enabled)
	return more.OK || !st.enabled
}

// Remaining is what is left of the budget after the reservation.
func (res Reservation) Remaining() int { return max(0, res.key.Limit-res.Used) }

// Resource is the reservation's resource's name.
func (res Reservation) Resource() string { return res.key.resourceName() }

package httpapi

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"path"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/semaphore"

	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
)

// HandlerFunc is an API handler: it writes a success response, or returns
// an error that the server writes with WriteError.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// Route is one entry of an area's route table.
type Route struct {
	Method  string // GET, POST, ...
	Pattern string // a net/http.ServeMux path pattern: /repos/{owner}/{repo}
	Handle  HandlerFunc
	Auth    auth.Rule
	// Stream leaves a GET response unbuffered: no automatic ETag.
	Stream bool
	// StreamMedia lists the media type parameters (MediaParam: "diff",
	// "patch") whose GET responses are left unbuffered as Stream leaves
	// all of them; the route's other responses are buffered.
	StreamMedia []string
	// Uncounted requests do not spend the caller's rate-limit budget and
	// are served over the limit (GET /rate_limit); their headers show the
	// budget as it is.
	Uncounted bool
	// Rate is the rate-limit resource the route's requests spend; nil
	// means Core.
	Rate *RateResource
	// HandlesRateLimit leaves a request that its budget cannot cover to
	// the handler, which answers it as its protocol does (GraphQL's 200
	// with a RATE_LIMITED error) instead of the 403: see RateOf.
	HandlesRateLimit bool
	// Docs names the documentation page of the route's area (a page of
	// package docs, such as "webhooks"): the documentation_url of its
	// errors. Empty means DefaultDocsPage.
	Docs string
	// MaxBody is the largest request body the route accepts, in bytes; 0
	// means DefaultMaxBody (1 MiB). A longer body is a 413, refused
	// unread when its Content-Length says so.
	MaxBody int64
	// StreamBody marks a route whose handler streams its body (release
	// asset uploads) rather than reading it into memory: a body over
	// DefaultMaxBody is not held back by LargeBodyBudget.
	StreamBody bool
}

// streams reports whether the route leaves its response to r unbuffered
// (Stream, StreamMedia).
func (rt Route) streams(r *http.Request) bool {
	return rt.Stream || len(rt.StreamMedia) > 0 && slices.Contains(rt.StreamMedia, MediaParam(r))
}

// maxBody is the route's body limit.
func (rt Route) maxBody() int64 {
	if rt.MaxBody > 0 {
		return rt.MaxBody
	}
	return DefaultMaxBody
}

// Guard resolves a route's target from the request path and checks the
// principal's access to it per the rule, returning the request context
// with the resolved target, or the error to send (404 for what the
// caller may not see, 403 for what it may see but not do).
type Guard interface {
	Check(r *http.Request, p *auth.Principal, rule auth.Rule) (context.Context, error)
}

// Config configures the API server.
type Config struct {
	BaseURL string // public URL used in every url field and Link header
	// SSHPort is the port git over SSH listens on, 0 when it is off; the
	// repository object's ssh_url names it (see SSHPort).
	SSHPort   int
	RateLimit bool // enforce rate limits
	Now       func() time.Time
	// AccessLog receives one line per request at info level (see
	// logRequest); nil logs none.
	AccessLog *slog.Logger
	// IdleTimeout ends the reading of a request body that makes no
	// progress for that long, on every route and handler; 0 means none.
	IdleTimeout time.Duration
	// BodyTimeout is the time the body of a request to an API route or a
	// plain handler (but not a streaming one: git) has to arrive, from
	// its first read, plus a second per MinBodyRate bytes received; 0
	// means none. It takes effect only with an IdleTimeout.
	BodyTimeout time.Duration
	// BodyBuffers is the memory budget of the API request bodies being
	// read; 0 means BodyBufferBudget.
	BodyBuffers int64
	// Bodies renders Markdown bodies for the html, text and full media
	// types (body_html, body_text); nil serves the raw form alone.
	Bodies BodyRenderer
}

// Server serves the route tables with the shared middleware.
type Server struct {
	cfg Config
	// mux serves every path at the host root: the API routes and the
	// plain handlers (git, docs, health, downloads); apiMux serves the
	// API routes alone, under APIPrefix.
	mux     *http.ServeMux
	apiMux  *http.ServeMux
	authn   *auth.Authenticator
	guard   Guard
	limiter *RateLimiter
	metrics *Metrics
	routes  []Route
	buffers bufferPool  // bodies of buffered GET responses
	scratch scratchPool // what other responses render their bodies into
	lines   *lineWriter // the access log's, when its handler offers AccessLines
	// largeBodies admits the bodies over DefaultMaxBody of routes that
	// accept them, LargeBodyBudget bytes at once (see admitLargeBody).
	largeBodies *semaphore.Weighted
	// bodyBuffers holds the memory of the other bodies being read
	// (BodyBufferBudget).
	bodyBuffers *bodyBuffers
}

// RequestIDHeader carries every response's request id, and so does
// PlatformRequestIDHeader, the platform's name, which clients log
// (octokit's "id" of a request).
const (
	RequestIDHeader         = "X-Service-Request-Id"
	PlatformRequestIDHeader = "X-Github-Request-Id" // X-GitHub-Request-Id, canonical
)

// NewServer returns a server for the routes. It fails when two routes
// collide or a pattern is malformed.
func NewServer(cfg Config, authn *auth.Authenticator, guard Guard, metrics *Metrics, routes []Route) (s *Server, err error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.BodyBuffers <= 0 {
		cfg.BodyBuffers = BodyBufferBudget
	}
	s = &Server{cfg: cfg, mux: http.NewServeMux(), apiMux: http.NewServeMux(), authn: authn, guard: guard,
		limiter: NewRateLimiter(cfg.Now), metrics: metrics, largeBodies: semaphore.NewWeighted(LargeBodyBudget),
		bodyBuffers: newBodyBuffers(cfg.BodyBuffers, metrics), lines: accessLinesOf(cfg.AccessLog)}
	defer func() {
		if p := recover(); p != nil { // ServeMux panics on conflicting patterns
			err = fmt.Errorf("route table: %v", p)
		}
	}()
	// Unknown paths and methods: a JSON 404 (the catch-all also takes the
	// place of ServeMux's plain-text 405).
	for _, mux := range []*http.ServeMux{s.mux, s.apiMux} {
		mux.Handle("/", http.HandlerFunc(s.notFound))
	}
	for _, rt := range routes {
		h := s.apiHandler(rt)
		s.mux.Handle(rt.Method+" "+rt.Pattern, h)
		s.apiMux.Handle(rt.Method+" "+rt.Pattern, h)
		s.routes = append(s.routes, rt)
	}
	for _, rt := range routes { // after every route, which keeps its own root
		s.handleRoot(s.mux, rt.Method+" "+rt.Pattern)
		s.handleRoot(s.apiMux, rt.Method+" "+rt.Pattern)
	}
	return s, nil
}

// APIPrefix is the path under which the API is served as well as at the
// host root: the self-managed edition's layout, which clients configured
// for it (the gh CLI, go-github's enterprise URLs, octokit) use. Git and
// the other plain handlers stay at the root only.
const APIPrefix = "/api/v3"

// apiPath returns the path of a request under APIPrefix without the
// prefix ("/" for the prefix itself), and whether it was under it.
func apiPath(p string) (string, bool) {
	rest, ok := strings.CutPrefix(p, APIPrefix)
	if !ok || rest != "" && rest[0] != '/' {
		return p, false
	}
	if rest == "" {
		rest = "/"
	}
	return rest, true
}

// notFound answers the JSON 404 of a path or method no route serves.
func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	r.Pattern = "" // metrics count it as unmatched
	WriteError(w, r.WithContext(WithBaseURL(r.Context(), s.cfg.BaseURL)), apierr.NotFound())
}

// handle registers h for pattern. When pattern names a subtree (its path
// ends in "/" or in a {name...} wildcard), the subtree's root without the
// trailing slash gets the JSON 404 for the pattern's method: ServeMux would otherwise answer a
// request for the root with a redirect to root+"/" and an HTML body
// (GET /{owner}/{repo}/{rest...} redirected /applications/grants). A root
// that another pattern serves already keeps it.
func (s *Server) handle(pattern string, h http.Handler) {
	s.mux.Handle(pattern, h)
	s.handleRoot(s.mux, pattern)
}

// handleRoot registers on mux the JSON 404 for the root of pattern's
// subtree, if it is one and no pattern serves the root yet.
func (s *Server) handleRoot(mux *http.ServeMux, pattern string) {
	if root := subtreeRoot(pattern); root != "" {
		defer func() { _ = recover() }() // a pattern serves the root already
		mux.Handle(root, http.HandlerFunc(s.notFound))
	}
}

// subtreeRoot returns the pattern ("[METHOD ]path") of the root of the
// subtree a pattern names, without its trailing slash and with the same
// method ("GET /a/{b}" for "GET /a/{b}/{rest...}" or "GET /a/{b}/"), or ""
// when the pattern is not a subtree.
func subtreeRoot(pattern string) string {
	method, path := "", pattern
	if i := strings.IndexByte(pattern, ' '); i >= 0 {
		method, path = pattern[:i+1], pattern[i+1:]
	}
	if i := strings.LastIndexByte(path, '/'); i >= 0 && strings.HasSuffix(path, "...}") {
		path = path[:i+1]
	}
	if len(path) <= 1 || !strings.HasSuffix(path, "/") {
		return ""
	}
	return method + strings.TrimSuffix(path, "/")
}

// Routes returns the routes the server serves, in registration order.
func (s *Server) Routes() []Route { return slices.Clone(s.routes) }

// Handle registers a plain handler (signed downloads, the web console,
// operational endpoints) that bypasses the API middleware; its request
// context carries the base URL, as an API handler's does. Its request
// bodies are under the whole-body deadline (Config.BodyTimeout).
func (s *Server) Handle(pattern string, h http.Handler) {
	s.handlePlain(pattern, h, true)
}

// HandleStream registers a plain handler as Handle does, for requests
// whose bodies are streams of any length (git pushes): only the idle
// timeout bounds their reading.
func (s *Server) HandleStream(pattern string, h http.Handler) {
	s.handlePlain(pattern, h, false)
}

// Reroute answers r, a GET or HEAD request to a plain handler, as the API
// answers the same request of path (escaped, without APIPrefix; the query
// stays r's) with the Accept header accept: the API route's
// authentication, access rule, rate limit, handler and errors. It serves
// the addresses outside the API that show an API resource in one of its
// media types (a pull request's diff_url). A path no API route serves is
// the JSON 404.
func (s *Server) Reroute(w http.ResponseWriter, r *http.Request, path, accept string) {
	u, err := url.Parse(path)
	if err != nil {
		r.Pattern = ""
		WriteError(w, r, apierr.NotFound())
		return
	}
	api := r.Clone(r.Context())
	api.URL.Path, api.URL.RawPath = u.Path, u.RawPath
	api.Header.Set("Accept", accept)
	s.apiMux.ServeHTTP(w, api)
	r.Pattern = api.Pattern // the route's, in the metrics and the access log
}

func (s *Server) handlePlain(pattern string, h http.Handler, timed bool) {
	s.handle(pattern, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if timed {
			s.timeBody(r)
		}
		inner := r.WithContext(WithBaseURL(r.Context(), s.cfg.BaseURL))
		if !storableText(r.URL.Path) {
			// No repository or page outside the API is named with a NUL
			// or bytes that are not UTF-8 (the API's routes check their
			// names themselves: see storableNames).
			WriteError(w, inner, apierr.NotFound())
			return
		}
		if err := checkQuery(r.URL); err != nil {
			WriteError(w, inner, err)
			return
		}
		h.ServeHTTP(w, inner)
		r.Pattern = inner.Pattern // a handler that clears it answered as no route
	}))
}

// ServeHTTP dispatches the request and records its metrics: a path under
// APIPrefix to the API routes (as at the root), any other to every route
// and handler. The request context gets its values (base URL, API version, principal) in the
// handler the request reaches: one copy of the request per request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	s.metrics.begin()
	rec := &statusRecorder{ResponseWriter: w, scratches: &s.scratch}
	defer func() { s.scratch.put(rec.scratch) }() // last: after the access log line
	r = timeReads(w, r, s.cfg.IdleTimeout)
	requestID := newRequestID()
	ids := rec.values(requestID)
	w.Header()[RequestIDHeader], w.Header()[PlatformRequestIDHeader] = ids, ids
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			slog.ErrorContext(r.Context(), "panic serving request", "path", r.URL.Path, "panic", p, "stack", string(debug.Stack()))
			if !rec.wrote {
				WriteError(rec, r, fmt.Errorf("panic: %v", p))
			}
		}
		end := time.Now()
		elapsed := end.Sub(start)
		s.metrics.Observe(r.Pattern, r.Method, rec.status, elapsed)
		s.metrics.end()
		s.logRequest(r, rec, requestID, end, elapsed)
	}()
	if !cleanPath(r.URL.Path) {
		// ServeMux would redirect to the cleaned path; the platform
		// answers a path with dot or empty segments like any unknown one.
		WriteError(rec, r, apierr.NotFound())
		return
	}
	if p, ok := apiPath(r.URL.Path); ok {
		r.URL.Path = p
		if r.URL.RawPath != "" {
			r.URL.RawPath, _ = apiPath(r.URL.RawPath)
		}
		s.apiMux.ServeHTTP(rec, r) // sets r.Pattern
		return
	}
	s.mux.ServeHTTP(rec, r) // sets r.Pattern
}

// cleanPath reports whether p is what path.Clean makes of it (a trailing
// slash aside): no ".", ".." or empty segments.
func cleanPath(p string) bool {
	c := path.Clean(p)
	return c == p || c+"/" == p
}

func (s *Server) apiHandler(rt Route) http.Handler {
	ah := newAuthHeaders(rt.Auth)
	maxBody := rt.maxBody()
	names := nameWildcards(rt.Pattern)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := recorderOf(w)
		rc := &rec.ctx
		*rc = requestContext{Context: r.Context(), baseURL: s.cfg.BaseURL, sshPort: s.cfg.SSHPort, docs: rt.Docs}
		rc.body = bodyRead{clock: s.timeBody(r), buffers: s.bodyBuffers, limit: maxBody}
		if err := limitBody(w, r, maxBody); err != nil {
			WriteError(w, r.WithContext(rc), err)
			return
		}
		if !storableNames(r, names) {
			WriteError(w, r.WithContext(rc), apierr.NotFound())
			return
		}
		if err := checkQuery(r.URL); err != nil {
			WriteError(w, r.WithContext(rc), err)
			return
		}
		version, err := negotiateVersion(r)
		if err != nil {
			WriteError(w, r.WithContext(rc), err)
			return
		}
		rc.version = version
		h := w.Header()
		h[VersionSelectedHeader] = rec.values(version)
		service, platform := mediaTypeValues(headerValue(r.Header, "Accept"))
		h[MediaTypeHeader], h[PlatformMediaTypeHeader] = rec.values(service), rec.values(platform)
		var ctx context.Context = rc
		p, err := s.authenticate(ctx, r, rt.Auth)
		if err == nil && p.Token != nil && !p.Token.Kind.API() {
			// A token of a kind made for something else (a clone token
			// is for git) authenticates nobody here, on every route.
			err = auth.ErrBadCredentials()
		}
		if err == nil && rt.Auth.OTP {
			err = s.authn.CheckOTP(ctx, p, otpCode(r))
		}
		if err != nil {
			// A failed authentication spends the client address's
			// anonymous budget, not the account's.
			s.ChargeAnonymous(r).setHeaders(h, s.cfg.RateLimit, rec)
			WriteError(w, r.WithContext(rc), err)
			return
		}
		rc.principal = p // the context answers auth.PrincipalFrom
		r = r.WithContext(rc)
		rec.principal = p // for the access log
		s.setAuthHeaders(rec, h, p, ah)

		var reservation Reservation
		if rt.Uncounted {
			reservation = s.limiter.Status(rateKey(r, p, rt.Rate))
		} else {
			reservation = s.limiter.Reserve(rateKey(r, p, rt.Rate))
		}
		rc.rate = rateState{limiter: s.limiter, enabled: s.cfg.RateLimit, res: reservation}
		conditional := r.Method == http.MethodGet && !rt.streams(r)
		if s.cfg.RateLimit && !reservation.OK && !rt.HandlesRateLimit && !(conditional && isConditional(r)) {
			reservation.setHeaders(h, true, rec)
			WriteError(w, r, reservation.Error())
			return
		}
		if conditional {
			s.serveConditional(rec, r, rt, reservation)
			return
		}
		reservation.setHeaders(h, s.cfg.RateLimit, rec)
		var admitted int64
		if !rt.StreamBody {
			admitted, err = s.admitLargeBody(r, maxBody)
		}
		if err != nil {
			WriteError(w, r, err)
			return
		}
		if admitted > 0 {
			defer s.largeBodies.Release(admitted)
		}
		rc.body.budgeted = admitted == 0
		if err := s.authorizeAndServe(w, r, rt); err != nil {
			WriteError(w, r, err)
		}
	})
}

// LargeBodyBudget is how many bytes of request bodies over DefaultMaxBody
// the server admits at once, across the routes whose MaxBody allows them
// (artifact cluster batches): a request beyond it waits until earlier
// ones finish, so that a burst of maximum-size batches, whose handling
// takes several times their size in memory, cannot take the server's
// memory with it. Bodies within DefaultMaxBody are never held back.
const LargeBodyBudget = 16 << 20

// admitLargeBody waits until the request's body fits the large-body
// budget and returns the weight to release when the request is done (0
// for a body within DefaultMaxBody, or a route that accepts no more). A
// body of unknown length (chunked) counts as the route's limit. It fails
// only when the client goes away while waiting.
func (s *Server) admitLargeBody(r *http.Request, limit int64) (int64, error) {
	n := r.ContentLength
	if n < 0 {
		n = limit
	}
	if limit <= DefaultMaxBody || n <= DefaultMaxBody {
		return 0, nil
	}
	n = min(n, LargeBodyBudget)
	if err := s.largeBodies.Acquire(r.Context(), n); err != nil {
		return 0, apierr.New(http.StatusServiceUnavailable, "The request was cancelled while waiting for other large requests to finish.")
	}
	return n, nil
}

// authorizeAndServe enforces the route's rule, resolves its target and
// runs the handler.
func (s *Server) authorizeAndServe(w http.ResponseWriter, r *http.Request, rt Route) error {
	p := auth.PrincipalFrom(r.Context())
	if err := s.enforce(r, p, rt.Auth); err != nil {
		return err
	}
	ctx, err := s.checkTarget(r, p, rt.Auth)
	if err != nil {
		return err
	}
	if ctx != r.Context() {
		r = r.WithContext(ctx)
	}
	if f := bodyFormatOf(r); s.cfg.Bodies != nil && (f.html || f.text) && !rt.streams(r) {
		return s.serveWithBodies(w, r, f, rt.Handle)
	}
	return rt.Handle(w, r)
}

// checkTarget runs the guard with the request's context open to the
// values it resolves (WithTargetValue).
func (s *Server) checkTarget(r *http.Request, p *auth.Principal, rule auth.Rule) (context.Context, error) {
	rc, ok := r.Context().(*requestContext)
	if !ok {
		return s.guard.Check(r, p, rule)
	}
	rc.guarding = true
	defer func() { rc.guarding = false }()
	return s.guard.Check(r, p, rule)
}

// serveConditional buffers a GET response to give it an ETag and answer
// If-None-Match / If-Modified-Since with 304, also when the handler
// answered it itself through NotModified. A 304 does not count against
// the rate limit: it gives back its reservation, and it is served even to
// a caller whose budget is spent (any other answer to that caller is the
// rate-limit refusal).
func (s *Server) serveConditional(w *statusRecorder, r *http.Request, rt Route, reservation Reservation) {
	// The handler writes its headers into w's own; buf remembers the ones
	// set before it, to take the handler's back out of a rate-limit
	// refusal or of the 500 that answers its panic.
	buf := s.buffers.get(w)
	defer s.buffers.put(buf) // after the body is copied to w
	served := false
	defer func() {
		if !served { // the handler panicked
			buf.restoreHeader()
		}
	}()
	if err := s.authorizeAndServe(buf, r, rt); err != nil {
		WriteError(buf, r, err)
	}
	served = true
	h := w.Header()
	if buf.status == http.StatusNotModified { // the handler's own fast path (NotModified)
		s.writeNotModified(w, reservation)
		return
	}
	if buf.status == http.StatusOK {
		etag := headerValue(h, etagHeader)
		if etag == "" {
			etag = computeETag(auth.PrincipalFrom(r.Context()).CacheKey(), buf.body.Bytes())
			h[etagHeader] = []string{etag}
		}
		if notModified(r, etag, headerValue(h, "Last-Modified")) {
			s.writeNotModified(w, reservation)
			return
		}
	}
	if s.cfg.RateLimit && !reservation.OK {
		buf.restoreHeader()
		reservation.setHeaders(h, true, w)
		WriteError(w, r, reservation.Error())
		return
	}
	reservation.setHeaders(h, s.cfg.RateLimit, w)
	w.WriteHeader(buf.status)
	_, _ = w.Write(buf.body.Bytes())
}

// writeNotModified answers 304 with the headers the handler set, but
// not its body's, and gives back the reservation.
func (s *Server) writeNotModified(w *statusRecorder, reservation Reservation) {
	h := w.Header()
	delete(h, "Content-Type")
	delete(h, "Content-Length")
	s.limiter.Refund(reservation).setHeaders(h, s.cfg.RateLimit, w)
	w.WriteHeader(http.StatusNotModified)
}

// isConditional reports whether the request carries a validator that
// could make its answer a 304.
func isConditional(r *http.Request) bool {
	return headerValue(r.Header, "If-None-Match") != "" || headerValue(r.Header, "If-Modified-Since") != ""
}

// otpCode returns the request's one-time password (X-Service-OTP, or
// the platform's X-GitHub-OTP).
func otpCode(r *http.Request) string {
	if code := r.Header.Get("X-Service-OTP"); code != "" {
		return code
	}
	return r.Header.Get("X-GitHub-OTP")
}

// authenticate returns the request's principal: anonymous for a route
// whose caller is an application with client credentials (its handler
// checks them), the app for a route that takes apps' JWTs, else who the
// Authorization header names.
func (s *Server) authenticate(ctx context.Context, r *http.Request, rule auth.Rule) (*auth.Principal, error) {
	switch {
	case rule.ClientCredentials:
		return &auth.Principal{}, nil
	case rule.AppJWT:
		return s.authn.AuthenticateApp(ctx, r)
	}
	return s.authn.Authenticate(ctx, r)
}

// enforce checks what the rule says about the credentials themselves
// (the one-time password is checked with them, before the rate limit);
// the guard checks them against the target.
func (s *Server) enforce(r *http.Request, p *auth.Principal, rule auth.Rule) error {
	if p.Anonymous() && !rule.Public && !rule.ClientCredentials {
		if !rule.Unauthorized401 {
			return apierr.NotFound()
		}
		return apierr.Unauthorized("Requires authentication")
	}
	if rule.PasswordOnly && p.Method != auth.MethodPassword {
		return apierr.Unauthorized("This API only accepts HTTP Basic authentication with a username and password; tokens are not accepted.")
	}
	if rule.FineGrainedOnly && !p.Anonymous() && !p.FineGrained() {
		return apierr.Forbidden("This endpoint accepts only fine-grained tokens: app user access tokens, app installation access tokens and fine-grained personal access tokens.")
	}
	if p.FineGrained() && !rule.TokenTypes.Allows(p.Token.Kind) {
		return apierr.Forbidden("%s", NotAccessibleMessage(p.Token.Kind))
	}
	return nil
}

// NotAccessibleMessage is the platform's 403 message for a
// permission-based token that cannot use an endpoint or resource.
func NotAccessibleMessage(k auth.Kind) string {
	if k == auth.KindFineGrained {
		return "Resource not accessible by personal access token"
	}
	return "Resource not accessible by integration"
}

// authHeaders holds a route's X-Accepted-* header values, rendered once.
type authHeaders struct {
	scopes, permissions string
}

func newAuthHeaders(rule auth.Rule) authHeaders {
	h := authHeaders{scopes: strings.Join(rule.Scopes, ", ")}
	if len(rule.Permissions) > 0 {
		h.permissions = rule.Permissions.String()
	}
	return h
}

// setAuthHeaders sets X-OAuth-Scopes and the route's X-Accepted-* headers
// (the keys below are in canonical form).
func (s *Server) setAuthHeaders(rec *statusRecorder, h http.Header, p *auth.Principal, ah authHeaders) {
	if p.ScopeBased() {
		h["X-Oauth-Scopes"] = rec.values(p.Token.ScopesHeader())
		h["X-Accepted-Oauth-Scopes"] = rec.values(ah.scopes)
	}
	if ah.permissions != "" {
		h["X-Accepted-Service-Permissions"] = rec.values(ah.permissions)
	}
}

type baseURLKey struct{}

type sshPortKey struct{}

type docsKey struct{}

// requestContext carries an API request's base URL, SSH port, version,
// documentation page and principal in one context value (instead of a
// context.WithValue for each), and the values the access guard resolves
// (see WithTargetValue).
type requestContext struct {
	context.Context
	baseURL, version, docs string
	sshPort                int
	principal              *auth.Principal // nil until authenticated
	body                   bodyRead        // for DecodeJSON
	guarding               bool            // the guard is checking the request: targets go in targets
	ntargets               int
	targets                [2]targetValue // the route's target and the caller's role on it
	rate                   rateState      // for RateOf and ChargeMore
}

// targetValue is one value the guard put in the request's context.
type targetValue struct{ key, val any }

func (c *requestContext) Value(key any) any {
	switch key.(type) {
	case baseURLKey:
		return c.baseURL
	case sshPortKey:
		return c.sshPort
	case versionKey:
		return c.version
	case docsKey:
		return c.docs
	case bodyReadKey:
		return c.body
	case rateStateKey:
		return &c.rate
	case auth.PrincipalKey:
		if c.principal != nil {
			return c.principal
		}
	}
	for i := c.ntargets - 1; i >= 0; i-- {
		if c.targets[i].key == key {
			return c.targets[i].val
		}
	}
	return c.Context.Value(key)
}

// WithTargetValue returns ctx with val under key, as context.WithValue
// does. While the API server's guard checks a request (Guard.Check), and
// only then, the value goes into the request's own context instead and
// ctx itself is returned: no context is made, and the handler gets the
// request without a copy made for the guard's values. At any other
// moment the request's context is immutable like any other.
func WithTargetValue(ctx context.Context, key, val any) context.Context {
	if c, ok := ctx.(*requestContext); ok && c.guarding && c.ntargets < len(c.targets) {
		c.targets[c.ntargets] = targetValue{key, val}
		c.ntargets++
		return c
	}
	return context.WithValue(ctx, key, val)
}

// docsPage returns the documentation page of the request's route ("" for
// none).
func docsPage(ctx context.Context) string {
	s, _ := ctx.Value(docsKey{}).(string)
	return s
}

// BaseURL returns the public base URL of the API (no trailing slash).
func BaseURL(ctx context.Context) string {
	s, _ := ctx.Value(baseURLKey{}).(string)
	return s
}

// WithBaseURL returns a context carrying the base URL, for code that
// renders API objects outside a request (webhook payloads, CLI output).
func WithBaseURL(ctx context.Context, base string) context.Context {
	return context.WithValue(ctx, baseURLKey{}, base)
}

// SSHPort returns the port git over SSH listens on (Config.SSHPort) for
// an API request, 0 when it is off or unknown.
func SSHPort(ctx context.Context) int {
	p, _ := ctx.Value(sshPortKey{}).(int)
	return p
}

// WithSSHPort returns a context carrying the SSH port, for code that
// renders API objects outside a request, as WithBaseURL.
func WithSSHPort(ctx context.Context, port int) context.Context {
	return context.WithValue(ctx, sshPortKey{}, port)
}

// newRequestID returns 8 random bytes as upper-case hex,
// "XXXXXXXX:XXXXXXXX". The bytes come from math/rand/v2's global source:
// the runtime's per-thread ChaCha8 generator, seeded from the operating
// system's entropy, which needs no system call or lock per request (an id
// names a request in logs; it guards nothing).
func newRequestID() string {
	const digits = "0123456789ABCDEF"
	v := rand.Uint64()
	var id [17]byte
	for i, j := 0, 0; i < 8; i++ {
		if i == 4 {
			id[j] = ':'
			j++
		}
		b := byte(v >> (56 - 8*i))
		id[j], id[j+1] = digits[b>>4], digits[b&0x0f]
		j += 2
	}
	return string(id[:])
}

// ClientIP returns the request's remote address without the port (see
// auth.ClientAddress).
func ClientIP(r *http.Request) string { return auth.ClientAddress(r) }

package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"forgeapi/internal/auth"
)

// logRequest writes the access log line of a served request: method,
// route pattern (not the path, and never the query string, which may
// carry a token), status, response bytes, duration, request id, the
// principal's kind and account id (and token id), and the client address.
// Credentials never appear. Nothing is formatted when the logger's level
// is above info. A handler that offers AccessLines gets the line written
// directly (the same bytes); any other gets a slog record.
func (s *Server) logRequest(r *http.Request, rec *statusRecorder, requestID string, end time.Time, elapsed time.Duration) {
	log := s.cfg.AccessLog
	if log == nil || !log.Enabled(context.Background(), slog.LevelInfo) {
		return
	}
	status := rec.status
	if status == 0 {
		status = http.StatusOK
	}
	route := r.Pattern
	if route == "" {
		route = "unmatched"
	}
	kind, accountID, tokenID := principalAttrs(rec.principal)
	if s.lines != nil {
		s.lines.write(&accessLine{end: end, method: r.Method, route: route, status: status, bytes: rec.bytes,
			elapsed: elapsed, requestID: requestID, kind: kind, accountID: accountID, tokenID: tokenID, client: ClientIP(r)})
		return
	}
	// The record is made here and given to the handler, as Logger.LogAttrs
	// would, but without the caller's program counter, which LogAttrs
	// looks up on every call (runtime.Callers) for a source attribute that
	// this line never needs; its time is the end of the request.
	line := slog.NewRecord(end, slog.LevelInfo, "request", 0)
	line.AddAttrs(
		slog.String("method", r.Method),
		slog.String("route", route),
		slog.Int("status", status),
		slog.Int64("bytes", rec.bytes),
		slog.Duration("duration", elapsed),
		slog.String("request_id", requestID),
		slog.String("principal", kind),
		slog.Int64("principal_id", accountID),
		slog.Int64("token_id", tokenID),
		slog.String("client", ClientIP(r)),
	)
	_ = log.Handler().Handle(context.Background(), line)
}

// accessLinesOf returns the direct line writer of an access logger whose
// handler offers one (AccessLines), else nil.
func accessLinesOf(log *slog.Logger) *lineWriter {
	if log == nil {
		return nil
	}
	al, ok := log.Handler().(AccessLines)
	if !ok {
		return nil
	}
	w, json := al.AccessLines()
	return &lineWriter{w: w, json: json}
}

// principalAttrs names how a request authenticated: "anonymous",
// "password", or the token kind ("classic", "fine_grained",
// "installation", "oauth", "app_user"), or "app_jwt" for an app; with the
// account id (the app id for an app) and the token id (0 when none).
func principalAttrs(p *auth.Principal) (kind string, accountID, tokenID int64) {
	switch {
	case p.Anonymous():
		return "anonymous", 0, 0
	case p.App != nil:
		return "app_jwt", p.App.ID, 0
	case p.Token != nil:
		return string(p.Token.Kind), p.Account.ID, p.Token.ID
	default:
		return "password", p.Account.ID, 0
	}
}

// NotePrincipal tells the access log who a request authenticated as. API
// routes note it themselves; plain handlers that authenticate (git over
// HTTP) call it with the ResponseWriter they were given.
func NotePrincipal(w http.ResponseWriter, p *auth.Principal) {
	if rec := findRecorder(w); rec != nil {
		rec.principal = p
	}
}

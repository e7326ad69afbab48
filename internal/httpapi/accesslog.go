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
// is above info.
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
	for {
		switch x := w.(type) {
		case *statusRecorder:
			x.principal = p
			return
		case interface{ Unwrap() http.ResponseWriter }:
			w = x.Unwrap()
		default:
			return
		}
	}
}

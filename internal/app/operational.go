package app

import (
	"context"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/store"
)

// operationalRoutes are the endpoints about the service itself.
func operationalRoutes() []httpapi.Route {
	return []httpapi.Route{
		{Method: "GET", Pattern: "/rate_limit", Handle: rateLimitStatus, Stream: true, Uncounted: true,
			Auth: auth.Rule{Public: true, TokenTypes: auth.AllTokenTypes}},
	}
}

// searchLimit is the platform's search budget per minute, which
// GET /rate_limit reports.
const searchLimit = 30

// rateLimitStatus serves GET /rate_limit from the rate-limit headers the
// middleware set. The route is Uncounted, as on the platform: asking for
// the budget does not spend it.
func rateLimitStatus(w http.ResponseWriter, r *http.Request) error {
	h := w.Header()
	limit, _ := strconv.Atoi(h.Get("X-Ratelimit-Limit"))
	used, _ := strconv.Atoi(h.Get("X-Ratelimit-Used"))
	reset, _ := strconv.ParseInt(h.Get("X-Ratelimit-Reset"), 10, 64)
	if limit == 0 { // rate limiting is off
		limit, reset = httpapi.AuthenticatedLimit, time.Now().Add(time.Hour).Unix()
		if auth.PrincipalFrom(r.Context()).Anonymous() {
			limit = httpapi.AnonymousLimit
		}
	}
	core := map[string]any{"limit": limit, "remaining": max(0, limit-used), "used": used, "reset": reset, "resource": "core"}
	// forgeapi serves no search endpoint, so the search budget (the
	// platform's 30 requests a minute) is never spent; clients read it.
	search := map[string]any{"limit": searchLimit, "remaining": searchLimit, "used": 0,
		"reset": time.Now().Add(time.Minute).Unix(), "resource": "search"}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"resources": map[string]any{"core": core, "search": search}, "rate": core})
	return nil
}

// health is the body of GET /healthz.
type health struct {
	Status string    `json:"status"` // ok, or unavailable when the database does not answer
	Build  BuildInfo `json:"build"`
}

// healthHandler serves GET /healthz: 200 {"status":"ok"} when the
// database answers within 2 s, else 503 {"status":"unavailable"}; both
// carry the build information (version, revision, Go version).
func healthHandler(db *store.DB, build BuildInfo) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := db.PingContext(ctx); err != nil {
			httpapi.WriteJSON(w, http.StatusServiceUnavailable, health{Status: "unavailable", Build: build})
			return
		}
		httpapi.WriteJSON(w, http.StatusOK, health{Status: "ok", Build: build})
	})
}

// databaseKind is "sqlite" or "postgres" for a --database value.
func databaseKind(dsn string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		return "postgres"
	}
	return "sqlite"
}

// DescribeDatabase names the database for logs and messages without its
// credentials: "sqlite PATH" or "postgres USER@HOST/DB" (no password, no
// query parameters, which may carry one).
func DescribeDatabase(dataDir, dsn string) string {
	switch {
	case dsn == "":
		return "sqlite " + filepath.Join(dataDir, "forgeapi.db")
	case databaseKind(dsn) == "postgres":
		u, err := url.Parse(dsn)
		if err != nil {
			return "postgres"
		}
		where := u.Host + u.Path
		if u.User != nil && u.User.Username() != "" {
			where = u.User.Username() + "@" + where
		}
		return "postgres " + where
	default:
		return "sqlite " + strings.TrimPrefix(strings.TrimPrefix(dsn, "sqlite://"), "file:")
	}
}

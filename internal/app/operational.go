package app

import (
	"context"
	"net/http"
	"strconv"
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
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"resources": map[string]any{"core": core}, "rate": core})
	return nil
}

func healthHandler(db *store.DB) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := db.PingContext(ctx); err != nil {
			httpapi.WriteJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable"})
			return
		}
		httpapi.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
}

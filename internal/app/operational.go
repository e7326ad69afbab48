package app

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"path/filepath"
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

// rateLimitStatus serves GET /rate_limit from the rate limiter: the
// caller's budgets of the core REST API, of search and of GraphQL's
// points. The
// route is Uncounted, as on the platform: asking for the budget does not
// spend it.
func rateLimitStatus(w http.ResponseWriter, r *http.Request) error {
	core, err := rateResource(r, httpapi.Core)
	if err != nil {
		return err
	}
	graphql, err := rateResource(r, httpapi.GraphQL)
	if err != nil {
		return err
	}
	search, err := rateResource(r, httpapi.Search)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{
		"resources": map[string]any{"core": core, "search": search, "graphql": graphql}, "rate": core})
	return nil
}

// rateResource is the caller's budget of one resource as GET /rate_limit
// shows it.
func rateResource(r *http.Request, rs *httpapi.RateResource) (map[string]any, error) {
	res, ok := httpapi.RateStatus(r, rs)
	if !ok {
		return nil, errors.New("rate_limit: no rate limiter in the request")
	}
	return map[string]any{"limit": res.Limit(), "remaining": res.Remaining(), "used": res.Used,
		"reset": res.Reset.Unix(), "resource": rs.Name}, nil
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

package e2e_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"forgeapi/internal/access"
	"forgeapi/internal/apptest"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
)

// TestStreamMediaAndReroute: a route's answers in its StreamMedia are
// left unbuffered (no automatic ETag) while its JSON is buffered, and a
// plain handler that reroutes a request to the API gets the API route's
// answer and names its route in the metrics.
func TestStreamMediaAndReroute(t *testing.T) {
	t.Parallel()
	db := apptest.OpenStore(t)
	routes := []httpapi.Route{{Method: "GET", Pattern: "/things/{id}", Auth: auth.Rule{Public: true}, StreamMedia: []string{"diff"},
		Handle: func(w http.ResponseWriter, r *http.Request) error {
			if httpapi.MediaParam(r) == "diff" {
				w.Header().Set("Content-Type", "application/vnd.github.diff; charset=utf-8")
				_, _ = io.WriteString(w, "diff of "+r.PathValue("id")+"\n")
				return nil
			}
			httpapi.WriteJSON(w, http.StatusOK, map[string]string{"id": r.PathValue("id")})
			return nil
		}}}
	metrics := httpapi.NewMetrics()
	srv, err := httpapi.NewServer(httpapi.Config{BaseURL: testBaseURL}, &auth.Authenticator{DB: db}, &access.Guard{DB: db}, metrics, routes)
	apptest.Must(t, "new server", err)
	srv.Handle("GET /web/{id}", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		srv.Reroute(w, r, "/things/"+r.PathValue("id")+"%2Fx", "application/vnd.github.diff")
	}))
	srv.Handle("GET /metrics", metrics.Handler())
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)

	resp, body := middlewareGet(t, ts.URL+"/things/a")
	if resp.StatusCode != 200 || body != `{"id":"a"}`+"\n" || resp.Header.Get("ETag") == "" {
		t.Errorf("JSON: %d %q, ETag %q", resp.StatusCode, body, resp.Header.Get("ETag"))
	}
	resp, body = middlewareGet(t, ts.URL+"/things/a", "Accept", "application/vnd.github.v3.diff")
	if resp.StatusCode != 200 || body != "diff of a\n" || resp.Header.Get("ETag") != "" {
		t.Errorf("diff: %d %q, ETag %q", resp.StatusCode, body, resp.Header.Get("ETag"))
	}
	resp, body = middlewareGet(t, ts.URL+"/web/b", "Accept", "text/html")
	if resp.StatusCode != 200 || body != "diff of b/x\n" || resp.Header.Get(httpapi.PlatformMediaTypeHeader) != "github.v3; param=diff" {
		t.Errorf("rerouted: %d %q, %v", resp.StatusCode, body, resp.Header)
	}
	_, text := middlewareGet(t, ts.URL+"/metrics")
	if want := `forgeapi_http_requests_total{method="GET",route="GET /things/{id}",status="200"} 3`; !strings.Contains(text, want+"\n") {
		t.Errorf("metrics lack %s", want)
	}
}

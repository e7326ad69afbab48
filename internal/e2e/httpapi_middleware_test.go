package e2e_test

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"forgeapi/internal/access"
	"forgeapi/internal/apptest"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
)

// The middleware's contract for buffered GETs, served by the real
// middleware, authenticator and guard over a real store with routes of
// its own: a handler's headers reach its answer and its 304, but neither
// a rate-limit refusal nor the 500 that answers its panic; metrics count
// every request by route, method and status; plain handlers see the base
// URL.

const testBaseURL = "https://api.example.test"

func startMiddlewareServer(t *testing.T) (url string, metrics *httpapi.Metrics) {
	t.Helper()
	db := apptest.OpenStore(t)
	modified := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	public := auth.Rule{Public: true}
	routes := []httpapi.Route{
		{Method: "GET", Pattern: "/tagged", Auth: public, Handle: func(w http.ResponseWriter, r *http.Request) error {
			w.Header().Set("X-Handler", "yes")
			httpapi.SetLastModified(w, modified)
			httpapi.WriteJSON(w, http.StatusOK, map[string]string{"base": httpapi.BaseURL(r.Context()), "version": httpapi.APIVersion(r.Context())})
			return nil
		}},
		{Method: "GET", Pattern: "/panics", Auth: public, Handle: func(w http.ResponseWriter, r *http.Request) error {
			w.Header().Set("X-Handler", "yes")
			w.Header().Set("ETag", `W/"x"`)
			panic("handler bug")
		}},
	}
	metrics = httpapi.NewMetrics()
	srv, err := httpapi.NewServer(httpapi.Config{BaseURL: testBaseURL, RateLimit: true}, &auth.Authenticator{DB: db}, &access.Guard{DB: db}, metrics, routes)
	apptest.Must(t, "new server", err)
	srv.Handle("GET /plain", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, httpapi.BaseURL(r.Context()))
	}))
	srv.Handle("GET /metrics", metrics.Handler())
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return ts.URL, metrics
}

func middlewareGet(t *testing.T, url string, header ...string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	apptest.Must(t, "request", err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	apptest.Must(t, "read body", err)
	return resp, string(body)
}

// wantHeaders checks the headers every API answer carries.
func wantHeaders(t *testing.T, what string, resp *http.Response) {
	t.Helper()
	if id := resp.Header.Get(httpapi.RequestIDHeader); len(id) != 17 || id[8] != ':' {
		t.Errorf("%s: request id %q", what, id)
	}
	if v := resp.Header.Get(httpapi.VersionSelectedHeader); v != httpapi.Version20260310 {
		t.Errorf("%s: version selected %q", what, v)
	}
}

func TestBufferedGETHeaders(t *testing.T) {
	t.Parallel()
	url, _ := startMiddlewareServer(t)
	version := []string{httpapi.VersionAliasHeader, httpapi.Version20260310}

	// A panic is a JSON 500 without the handler's headers.
	resp, body := middlewareGet(t, url+"/panics", version...)
	wantHeaders(t, "panic", resp)
	if resp.StatusCode != 500 || !strings.Contains(body, `"message":"Internal Server Error"`) ||
		resp.Header.Get("X-Handler") != "" || resp.Header.Get("ETag") != "" {
		t.Errorf("panic: %d %v %s", resp.StatusCode, resp.Header, body)
	}

	resp, body = middlewareGet(t, url+"/tagged", version...)
	wantHeaders(t, "first", resp)
	etag := resp.Header.Get("ETag")
	if resp.StatusCode != 200 || etag == "" || resp.Header.Get("X-Handler") != "yes" ||
		body != `{"base":"`+testBaseURL+`","version":"`+httpapi.Version20260310+`"}`+"\n" {
		t.Fatalf("first: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	used, _ := strconv.Atoi(resp.Header.Get("X-Ratelimit-Used"))
	for ; used < httpapi.AnonymousLimit; used++ {
		if resp, body = middlewareGet(t, url+"/tagged", version...); resp.StatusCode != 200 {
			t.Fatalf("request %d: %d %s", used+1, resp.StatusCode, body)
		}
	}

	// Over the limit, a current copy is still a 304 with the handler's
	// headers but not its body's.
	resp, body = middlewareGet(t, url+"/tagged", append(version, "If-None-Match", etag)...)
	wantHeaders(t, "304", resp)
	if resp.StatusCode != 304 || body != "" || resp.Header.Get("ETag") != etag || resp.Header.Get("X-Handler") != "yes" ||
		resp.Header.Get("Content-Type") != "" || resp.Header.Get("X-Ratelimit-Remaining") != "0" {
		t.Errorf("304 over the limit: %d %v %q", resp.StatusCode, resp.Header, body)
	}

	// Any other answer is the refusal, without the handler's headers.
	resp, body = middlewareGet(t, url+"/tagged", append(version, "If-None-Match", `W/"stale"`)...)
	wantHeaders(t, "refusal", resp)
	if resp.StatusCode != 403 || !strings.Contains(body, "rate limit") || resp.Header.Get("Retry-After") == "" ||
		resp.Header.Get("X-Ratelimit-Remaining") != "0" {
		t.Errorf("refusal: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	for _, k := range []string{"X-Handler", "ETag", "Last-Modified"} {
		if v := resp.Header.Get(k); v != "" {
			t.Errorf("refusal carries the handler's %s: %q", k, v)
		}
	}
}

func TestPlainHandlerAndMetrics(t *testing.T) {
	t.Parallel()
	url, _ := startMiddlewareServer(t)
	if resp, body := middlewareGet(t, url+"/plain"); resp.StatusCode != 200 || body != testBaseURL ||
		resp.Header.Get(httpapi.RequestIDHeader) == "" {
		t.Errorf("plain handler: %d %q", resp.StatusCode, body)
	}
	resp, _ := middlewareGet(t, url+"/tagged")
	etag := resp.Header.Get("ETag")
	for range 2 {
		middlewareGet(t, url+"/tagged", "If-None-Match", etag)
	}
	middlewareGet(t, url+"/panics")
	middlewareGet(t, url+"/nowhere")
	middlewareGet(t, url+"/tagged", httpapi.VersionHeader, "1999-01-01")

	_, text := middlewareGet(t, url+"/metrics")
	for _, want := range []string{
		`forgeapi_http_requests_total{method="GET",route="GET /plain",status="200"} 1`,
		`forgeapi_http_requests_total{method="GET",route="GET /tagged",status="200"} 1`,
		`forgeapi_http_requests_total{method="GET",route="GET /tagged",status="304"} 2`,
		`forgeapi_http_requests_total{method="GET",route="GET /tagged",status="400"} 1`,
		`forgeapi_http_requests_total{method="GET",route="GET /panics",status="500"} 1`,
		`forgeapi_http_requests_total{method="GET",route="unmatched",status="404"} 1`,
		`forgeapi_http_request_duration_seconds_count{route="GET /tagged"} 4`,
	} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("metrics lack %s", want)
		}
	}
}

func TestETagFormat(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"", "v1", strings.Repeat("x", 254), strings.Repeat("y", 255), strings.Repeat("z", 4000)} {
		sum := sha256.Sum256([]byte("caller\x00" + version))
		want := `W/"` + hex.EncodeToString(sum[:16]) + `"`
		if got := httpapi.ETag("caller", version); got != want {
			t.Errorf("ETag of a %d-byte version: %s, want %s", len(version), got, want)
		}
	}
}

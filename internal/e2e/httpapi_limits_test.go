package e2e_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"forgeapi/internal/access"
	"forgeapi/internal/apptest"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/testwait"
)

// The body limit's contract, served by the real middleware: a route
// accepts bodies up to its MaxBody (httpapi.DefaultMaxBody when unset);
// a longer one is a JSON 413, refused unread when its Content-Length
// says so, and refused once reading passes the limit when it is sent
// without a length (chunked).

const smallLimit = 4 << 10

// startLimitServer serves two public POST routes that echo the length of
// the "text" field they decode: /default (the default limit) and /small
// (MaxBody smallLimit).
func startLimitServer(t *testing.T) string {
	t.Helper()
	db := apptest.OpenStore(t)
	echo := func(w http.ResponseWriter, r *http.Request) error {
		var body struct {
			Text string `json:"text"`
		}
		if err := httpapi.DecodeJSON(r, &body); err != nil {
			return err
		}
		httpapi.WriteJSON(w, http.StatusOK, map[string]int{"length": len(body.Text)})
		return nil
	}
	public := auth.Rule{Public: true}
	routes := []httpapi.Route{
		{Method: "POST", Pattern: "/default", Auth: public, Handle: echo},
		{Method: "POST", Pattern: "/small", Auth: public, Handle: echo, MaxBody: smallLimit},
	}
	srv, err := httpapi.NewServer(httpapi.Config{BaseURL: testBaseURL}, &auth.Authenticator{DB: db}, &access.Guard{DB: db}, httpapi.NewMetrics(), routes)
	apptest.Must(t, "new server", err)
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return ts.URL
}

// textBody is a JSON body of exactly size bytes: {"text":"xxx..."}.
func textBody(size int) string {
	const frame = len(`{"text":""}`)
	return `{"text":"` + strings.Repeat("x", size-frame) + `"}`
}

// post sends body to url; chunked hides its length (Transfer-Encoding:
// chunked).
func postBody(t *testing.T, url, body string, chunked bool) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	apptest.Must(t, "request", err)
	if chunked {
		req.ContentLength, req.TransferEncoding = -1, []string{"chunked"}
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	apptest.Must(t, "POST "+url, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	apptest.Must(t, "read body", err)
	return resp, string(b)
}

// want413 checks a 413 with the JSON error body naming the limit.
func want413(t *testing.T, what string, status int, header http.Header, body string, limit int) {
	t.Helper()
	var e struct {
		Message          string `json:"message"`
		DocumentationURL string `json:"documentation_url"`
		Status           string `json:"status"`
	}
	if status != http.StatusRequestEntityTooLarge || !strings.HasPrefix(header.Get("Content-Type"), "application/json") ||
		json.Unmarshal([]byte(body), &e) != nil || e.DocumentationURL == "" || e.Status != "413" ||
		!strings.Contains(e.Message, fmt.Sprintf("(%d bytes)", limit)) {
		t.Errorf("%s: %d %v %s, want a JSON 413 naming the limit %d", what, status, header, body, limit)
	}
}

func TestBodyLimit(t *testing.T) {
	t.Parallel()
	url := startLimitServer(t)
	for _, c := range []struct {
		route string
		limit int
	}{{"/default", httpapi.DefaultMaxBody}, {"/small", smallLimit}} {
		for _, chunked := range []bool{false, true} {
			what := fmt.Sprintf("%s chunked=%v", c.route, chunked)
			resp, body := postBody(t, url+c.route, textBody(c.limit), chunked)
			if want := fmt.Sprintf(`{"length":%d}`, c.limit-len(`{"text":""}`)); resp.StatusCode != 200 || strings.TrimSpace(body) != want {
				t.Errorf("%s: a body of exactly the limit: %d %s", what, resp.StatusCode, body)
			}
			resp, body = postBody(t, url+c.route, textBody(c.limit+1), chunked)
			want413(t, what+": one byte over", resp.StatusCode, resp.Header, body, c.limit)
		}
	}
	if httpapi.DefaultMaxBody != 1<<20 {
		t.Errorf("DefaultMaxBody = %d, want 1 MiB", httpapi.DefaultMaxBody)
	}
}

// TestBodyLimitRefusesLongContentLengthUnread sends only the headers of
// a request whose Content-Length is over the limit: the answer comes
// without the server waiting for (or reading) the body.
func TestBodyLimitRefusesLongContentLengthUnread(t *testing.T) {
	t.Parallel()
	url := startLimitServer(t)
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	apptest.Must(t, "dial", err)
	defer conn.Close()
	apptest.Must(t, "deadline", conn.SetDeadline(time.Now().Add(30*time.Second)))
	_, err = fmt.Fprintf(conn, "POST /default HTTP/1.1\r\nHost: api\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", 1<<30)
	apptest.Must(t, "write headers", err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	apptest.Must(t, "read the answer (the server waited for the body)", err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	apptest.Must(t, "read body", err)
	want413(t, "Content-Length of 1 GiB", resp.StatusCode, resp.Header, string(body), httpapi.DefaultMaxBody)
}

// TestLargeBodiesAreAdmittedWithinTheBudget sends more concurrent
// requests with bodies over DefaultMaxBody than httpapi.LargeBodyBudget
// holds, to a route that accepts them and whose handler waits: at most
// budget/size of them are in the handler at once, the others wait and
// are served after; requests within DefaultMaxBody are never held back.
func TestLargeBodiesAreAdmittedWithinTheBudget(t *testing.T) {
	t.Parallel()
	db := apptest.OpenStore(t)
	const size = 4 << 20
	inHandler, release := make(chan int64, 64), make(chan struct{})
	wait := func(w http.ResponseWriter, r *http.Request) error {
		n, err := io.Copy(io.Discard, r.Body)
		if err != nil {
			return err
		}
		inHandler <- n
		<-release
		httpapi.NoContent(w)
		return nil
	}
	public := auth.Rule{Public: true}
	routes := []httpapi.Route{{Method: "POST", Pattern: "/batch", Auth: public, Handle: wait, MaxBody: size}}
	srv, err := httpapi.NewServer(httpapi.Config{BaseURL: testBaseURL}, &auth.Authenticator{DB: db}, &access.Guard{DB: db}, httpapi.NewMetrics(), routes)
	apptest.Must(t, "new server", err)
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)

	admitted := httpapi.LargeBodyBudget / size
	done := make(chan int, admitted+3)
	send := func(n int) {
		resp, err := http.Post(ts.URL+"/batch", "application/json", strings.NewReader(strings.Repeat("x", n)))
		if err != nil {
			done <- 0
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}
	for range admitted + 2 {
		go send(size)
	}
	for range admitted {
		<-inHandler
	}
	go send(1 << 10) // a small body passes the waiting large ones
	if n := <-inHandler; n != 1<<10 {
		t.Fatalf("a %d-byte body reached the handler while the budget was spent; want only the small one", n)
	}
	select {
	case n := <-inHandler:
		t.Fatalf("a %d-byte body was admitted beyond the budget of %d bodies", n, admitted)
	case <-time.After(300 * time.Millisecond):
	}
	close(release)
	for range admitted + 3 {
		if status := <-done; status != http.StatusNoContent {
			t.Fatalf("status %d, want 204", status)
		}
	}
}

// TestBodyBuffersWaitForTheBudget reads bodies with a buffer budget of
// 256 KiB: a body that has sent 150 KiB of 200 KiB holds 184 KiB of it; a
// second 200 KiB body waits for the budget (and gets a 503 once its body
// timeout passes), while a small body, within the part of each buffer
// the budget does not count, is served at once; the first body, sent to
// its end, is served. The buffers never hold more than the budget and
// 16 KiB a body.
func TestBodyBuffersWaitForTheBudget(t *testing.T) {
	t.Parallel()
	db := apptest.OpenStore(t)
	const budget, size = 256 << 10, 200 << 10
	metrics := httpapi.NewMetrics()
	echo := func(w http.ResponseWriter, r *http.Request) error {
		var body struct {
			Text string `json:"text"`
		}
		if err := httpapi.DecodeJSON(r, &body); err != nil {
			return err
		}
		httpapi.WriteJSON(w, http.StatusOK, map[string]int{"length": len(body.Text)})
		return nil
	}
	routes := []httpapi.Route{{Method: "POST", Pattern: "/echo", Auth: auth.Rule{Public: true}, Handle: echo}}
	srv, err := httpapi.NewServer(httpapi.Config{BaseURL: testBaseURL, IdleTimeout: time.Minute, BodyTimeout: 4 * time.Second,
		BodyBuffers: budget}, &auth.Authenticator{DB: db}, &access.Guard{DB: db}, metrics, routes)
	apptest.Must(t, "new server", err)
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)

	gauge := func(name string) float64 {
		families, err := metrics.Registry().Gather()
		apptest.Must(t, "gather metrics", err)
		for _, f := range families {
			if f.GetName() == name {
				return f.GetMetric()[0].GetGauge().GetValue()
			}
		}
		t.Fatalf("no metric %s", name)
		return 0
	}
	waitGauge := func(name string, want float64) {
		t.Helper()
		testwait.For(t, fmt.Sprintf("%s to be %v", name, want), func() error {
			if got := gauge(name); got != want {
				return fmt.Errorf("it is %v", got)
			}
			return nil
		})
	}
	// send posts the first part bytes of a size-byte body on a connection
	// of its own, and returns a channel with the answer once it comes.
	send := func(body string, part int) (net.Conn, chan *http.Response) {
		conn, err := net.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
		apptest.Must(t, "dial", err)
		t.Cleanup(func() { conn.Close() })
		_, err = fmt.Fprintf(conn, "POST /echo HTTP/1.1\r\nHost: api\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
			len(body), body[:part])
		apptest.Must(t, "send", err)
		answer := make(chan *http.Response, 1)
		go func() {
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				close(answer)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			answer <- resp
		}()
		return conn, answer
	}
	first, firstAnswer := send(textBody(size), 150<<10)
	waitGauge("forgeapi_http_request_body_buffer_bytes", size+1) // grown as its bytes came, to its length
	_, secondAnswer := send(textBody(size), size)
	waitGauge("forgeapi_http_request_bodies_waiting", 1)
	if resp, body := postBody(t, ts.URL+"/echo", textBody(1<<10), false); resp.StatusCode != http.StatusOK {
		t.Errorf("a small body while the budget is spent: %d %s, want 200", resp.StatusCode, body)
	}
	if held := gauge("forgeapi_http_request_body_buffer_bytes"); held > budget+2*16<<10 {
		t.Errorf("bodies being read hold %v bytes, over the budget of %d and 16 KiB each", held, budget)
	}
	if resp := <-secondAnswer; resp == nil || resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("the body that waited past its timeout: %v, want a 503 with Retry-After", resp)
	}
	_, err = io.WriteString(first, textBody(size)[150<<10:])
	apptest.Must(t, "send the rest", err)
	if resp := <-firstAnswer; resp == nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the first body, sent to its end: %v, want 200", resp)
	}
	waitGauge("forgeapi_http_request_bodies_reading", 0)
	waitGauge("forgeapi_http_request_body_buffer_bytes", 0)
}

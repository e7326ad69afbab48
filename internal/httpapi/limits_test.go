package httpapi_test

import (
	"bufio"
	"context"
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
	"forgeapi/internal/store"
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
	db, err := store.Open(context.Background(), apptest.DatabaseURL(t), t.TempDir())
	apptest.Must(t, "open store", err)
	t.Cleanup(func() { db.Close() })
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
func post(t *testing.T, url, body string, chunked bool) (*http.Response, string) {
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
			resp, body := post(t, url+c.route, textBody(c.limit), chunked)
			if want := fmt.Sprintf(`{"length":%d}`, c.limit-len(`{"text":""}`)); resp.StatusCode != 200 || strings.TrimSpace(body) != want {
				t.Errorf("%s: a body of exactly the limit: %d %s", what, resp.StatusCode, body)
			}
			resp, body = post(t, url+c.route, textBody(c.limit+1), chunked)
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
	db, err := store.Open(context.Background(), apptest.DatabaseURL(t), t.TempDir())
	apptest.Must(t, "open store", err)
	t.Cleanup(func() { db.Close() })
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

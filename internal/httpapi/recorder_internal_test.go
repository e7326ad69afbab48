package httpapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"forgeapi/internal/auth"
)

func TestRequestIDFormat(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 1000 {
		id := newRequestID()
		if len(id) != 17 || id[8] != ':' {
			t.Fatalf("request id %q", id)
		}
		for i, c := range []byte(id) {
			if i != 8 && !('0' <= c && c <= '9' || 'A' <= c && c <= 'F') {
				t.Fatalf("request id %q: %q is not an upper-case hex digit", id, c)
			}
		}
		if seen[id] {
			t.Fatalf("request id %q twice", id)
		}
		seen[id] = true
	}
}

// The recorder's header values share one array: adding a value to one
// header must not change another's, and past the array's room values
// are still given.
func TestRecorderHeaderValues(t *testing.T) {
	t.Parallel()
	rec := &statusRecorder{ResponseWriter: httptest.NewRecorder()}
	h := rec.Header()
	for i := range recorderValues + 3 {
		h[http.CanonicalHeaderKey("X-H"+string(rune('a'+i)))] = rec.values(string(rune('a' + i)))
	}
	h.Add("X-Ha", "again")
	for i := range recorderValues + 3 {
		k, want := http.CanonicalHeaderKey("X-H"+string(rune('a'+i))), []string{string(rune('a' + i))}
		if i == 0 {
			want = append(want, "again")
		}
		if got := h[k]; !slices.Equal(got, want) {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
}

// The rate-limit headers are the same whether their values come from the
// recorder or not, and a header added to later does not change the others.
func TestRateHeadersFromRecorder(t *testing.T) {
	t.Parallel()
	reset := time.Unix(1795759891, 0)
	res := Reservation{key: RateKey{Limit: AuthenticatedLimit}, OK: true, Used: 123, Reset: reset}
	plain := http.Header{}
	res.SetHeaders(plain, true)
	rec := &statusRecorder{ResponseWriter: httptest.NewRecorder()}
	rec.values("id")
	res.setHeaders(rec.Header(), true, rec)
	want := http.Header{"X-Ratelimit-Limit": {"5000"}, "X-Ratelimit-Remaining": {"4877"}, "X-Ratelimit-Used": {"123"},
		"X-Ratelimit-Reset": {"1795759891"}, "X-Ratelimit-Resource": {"core"}}
	for k, v := range want {
		if !slices.Equal(plain[k], v) || !slices.Equal(rec.Header()[k], v) {
			t.Errorf("%s: %q and %q, want %q", k, plain[k], rec.Header()[k], v)
		}
	}
	rec.Header().Add("X-Ratelimit-Limit", "x")
	if got := rec.Header()["X-Ratelimit-Remaining"]; !slices.Equal(got, []string{"4877"}) {
		t.Errorf("remaining after an Add to the limit: %q", got)
	}
	off := http.Header{}
	res.setHeaders(off, false, rec)
	if len(off) != 0 {
		t.Errorf("headers with limits off: %v", off)
	}
}

// Budgets are apart by kind: an app, an account and a client address
// with the same number spend their own.
func TestRateKeysApart(t *testing.T) {
	t.Parallel()
	l := NewRateLimiter(time.Now)
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "7.7.7.7:1234"
	user := &auth.Principal{Account: &auth.Account{ID: 7}}
	app := &auth.Principal{App: &auth.App{ID: 7}}
	for range 3 {
		l.Reserve(rateKey(r, user, nil))
	}
	l.Reserve(rateKey(r, app, nil))
	if got := l.Status(rateKey(r, user, nil)).Used; got != 3 {
		t.Errorf("user: %d used", got)
	}
	if got := l.Status(rateKey(r, app, nil)).Used; got != 1 {
		t.Errorf("app: %d used", got)
	}
	if got := l.Status(rateKey(r, nil, nil)); got.Used != 0 || got.Limit() != AnonymousLimit {
		t.Errorf("address: %d used of %d", got.Used, got.Limit())
	}
	res := l.Reserve(rateKey(r, nil, nil))
	if got := l.Refund(res); got.Used != 0 {
		t.Errorf("refunded: %d used", got.Used)
	}
}

// The request context answers auth.PrincipalFrom with its principal once
// set, before that with its parent's, and contexts made from it see it.
func TestRequestContextPrincipal(t *testing.T) {
	t.Parallel()
	parent := &auth.Principal{Account: &auth.Account{ID: 1}}
	rc := &requestContext{Context: auth.WithPrincipal(context.Background(), parent)}
	if auth.PrincipalFrom(rc) != parent {
		t.Errorf("before: not the parent's principal")
	}
	p := &auth.Principal{Account: &auth.Account{ID: 2}}
	rc.principal = p
	type key struct{}
	if auth.PrincipalFrom(rc) != p || auth.PrincipalFrom(context.WithValue(rc, key{}, 1)) != p {
		t.Errorf("after: not the request's principal")
	}
	if !auth.PrincipalFrom(&requestContext{Context: context.Background()}).Anonymous() {
		t.Errorf("none: not anonymous")
	}
}

// If-None-Match lists ETags separated by commas, with or without spaces
// and weak prefixes; any of them, or "*", matches.
func TestNotModifiedReadsETagLists(t *testing.T) {
	t.Parallel()
	const etag = `W/"abc"`
	for inm, want := range map[string]bool{
		`"abc"`:                 true,
		`W/"abc"`:               true,
		`"x", "abc"`:            true,
		`"x",W/"abc" , "y"`:     true,
		`*`:                     true,
		`"x", *`:                true,
		`"x"`:                   false,
		`"x", "abcd", W/"ab"`:   false,
		`,`:                     false,
		`"abc"x`:                false,
		` "x" ,  "y" , W/"abc"`: true,
	} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("If-None-Match", inm)
		if got := notModified(r, etag, ""); got != want {
			t.Errorf("If-None-Match %q against %s: %v, want %v", inm, etag, got, want)
		}
	}
}

// SetHeader takes the value from the request's recorder, also through a
// conditional GET's buffer, and sets it as Header.Set would without one.
func TestSetHeaderUsesTheRecordersValues(t *testing.T) {
	t.Parallel()
	rec := &statusRecorder{ResponseWriter: httptest.NewRecorder()}
	var pool bufferPool
	buf := pool.get(rec)
	SetHeader(buf, "X-Poll-Interval", "60")
	if got := rec.Header()["X-Poll-Interval"]; !slices.Equal(got, []string{"60"}) || rec.nvalues != 1 {
		t.Errorf("through the buffer: header %q, %d recorder values used", got, rec.nvalues)
	}
	plain := httptest.NewRecorder()
	SetHeader(plain, "Etag", `"x"`)
	if got := plain.Header().Get("ETag"); got != `"x"` {
		t.Errorf("without a recorder: ETag %q", got)
	}
}

// rawJSON is a JSONAppender of its own text.
type rawJSON string

func (j rawJSON) AppendJSON(b []byte) []byte { return append(b, j...) }

// bodyWriter keeps the last body written to it, with a header map made
// once.
type bodyWriter struct {
	header http.Header
	body   []byte
}

func (w *bodyWriter) Header() http.Header { return w.header }
func (w *bodyWriter) WriteHeader(int)     {}
func (w *bodyWriter) Write(p []byte) (int, error) {
	w.body = append(w.body[:0], p...)
	return len(p), nil
}

// TestWriteJSONRendersIntoTheScratch: WriteJSON renders a response into
// the request's scratch buffer from the server's pool, which the next
// request reuses: the bodies arrive whole, and a 6 KB body allocates
// less than rendered into a slice of its own.
func TestWriteJSONRendersIntoTheScratch(t *testing.T) {
	var pool scratchPool
	w := &bodyWriter{header: http.Header{}, body: make([]byte, 0, 16<<10)}
	serve := func(scratches *scratchPool, body rawJSON) {
		rec := &statusRecorder{ResponseWriter: w, scratches: scratches}
		WriteJSON(rec, http.StatusOK, body)
		pool.put(rec.scratch)
	}
	for _, body := range []rawJSON{rawJSON(strings.Repeat("a", 6000)), "[]", rawJSON(strings.Repeat("b", 20000))} {
		serve(&pool, body)
		if string(w.body) != string(body)+"\n" {
			t.Fatalf("body of %d bytes arrived as %d bytes %.20q", len(body), len(w.body), w.body)
		}
	}
	body := rawJSON(strings.Repeat("c", 6000))
	pooled := testing.AllocsPerRun(50, func() { serve(&pool, body) })
	unpooled := testing.AllocsPerRun(50, func() { serve(nil, body) })
	if pooled >= unpooled {
		t.Errorf("a 6 KB body allocates %v times with the scratch pool, %v without", pooled, unpooled)
	}
}

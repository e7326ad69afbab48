package httpapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"forgeapi/internal/auth"
)

// statusRecorder remembers the status and size of a response, and who
// the request authenticated as, for the metrics and the access log. It
// is made once per request and also holds the request's other small
// state, so that one allocation serves them all: the API request context
// and the backing array of the header values the middleware sets.
type statusRecorder struct {
	http.ResponseWriter
	status    int
	wrote     bool
	bytes     int64
	principal *auth.Principal // set by NotePrincipal; nil: anonymous

	ctx     requestContext // an API route's (apiHandler)
	nvalues int
	vals    [recorderValues]string

	// scratch is the buffer AvailableBuffer hands out, taken from
	// scratches on first use; ServeHTTP gives it back.
	scratches *scratchPool
	scratch   *[]byte
}

// recorderValues is how many header values a recorder holds: the
// request id, the version, the two media types, the three X-*-Scopes and
// X-Accepted-* headers, the five rate-limit headers, and two a handler
// sets with SetHeader (a feed's ETag and X-Poll-Interval).
const recorderValues = 14

// values returns a one-value slice for a header: from the recorder's own
// array while it has room, else a new one. Its capacity is 1, so that
// Header.Add copies it rather than write over the next header's value.
func (s *statusRecorder) values(v string) []string {
	if s.nvalues == len(s.vals) {
		return []string{v}
	}
	i := s.nvalues
	s.nvalues++
	s.vals[i] = v
	return s.vals[i : i+1 : i+1]
}

// recorderOf returns the statusRecorder that ServeHTTP wrapped the
// response in, or a new one when the writer is not one (a handler served
// outside ServeHTTP).
func recorderOf(w http.ResponseWriter) *statusRecorder {
	if rec := findRecorder(w); rec != nil {
		return rec
	}
	return &statusRecorder{ResponseWriter: w}
}

// findRecorder returns the statusRecorder of the request w answers: w
// itself, one it wraps, or the one a conditional GET's buffer belongs
// to; nil when there is none (a writer outside ServeHTTP).
func findRecorder(w http.ResponseWriter) *statusRecorder {
	for {
		switch x := w.(type) {
		case *statusRecorder:
			return x
		case *bufferedWriter:
			return x.rec
		case interface{ Unwrap() http.ResponseWriter }:
			w = x.Unwrap()
		default:
			return nil
		}
	}
}

// SetHeader sets the header name, which must be in canonical form, to
// value, as w.Header().Set does, the value's slice taken from the
// request's own array while it has room (see statusRecorder.values).
func SetHeader(w http.ResponseWriter, name, value string) {
	if rec := findRecorder(w); rec != nil {
		w.Header()[name] = rec.values(value)
		return
	}
	w.Header()[name] = []string{value}
}

func (s *statusRecorder) WriteHeader(code int) {
	if !s.wrote {
		s.status, s.wrote = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if !s.wrote {
		s.status, s.wrote = http.StatusOK, true
	}
	n, err := s.ResponseWriter.Write(b)
	s.bytes += int64(n)
	return n, err
}

// ReadFrom copies r into the response through the ResponseWriter's own
// ReadFrom, so that a streamed file (http.ServeContent: release assets,
// archive downloads) goes out with sendfile rather than through a buffer.
func (s *statusRecorder) ReadFrom(r io.Reader) (int64, error) {
	if !s.wrote {
		s.status, s.wrote = http.StatusOK, true
	}
	n, err := io.Copy(s.ResponseWriter, r)
	s.bytes += n
	return n, err
}

// AvailableBuffer returns an empty slice to append a response body to
// and pass to Write (see WriteJSON): the request's scratch buffer, from
// the server's pool. Without it every response, a PATCH's repository
// object say, would be rendered into a fresh slice grown several times.
func (s *statusRecorder) AvailableBuffer() []byte {
	if s.scratch == nil {
		if s.scratches == nil {
			return nil
		}
		s.scratch = s.scratches.get()
	}
	return (*s.scratch)[:0]
}

// scratchPool recycles the scratch buffers of responses rendered with
// AvailableBuffer between requests.
type scratchPool struct{ pool sync.Pool }

// scratchSize is a new scratch buffer's capacity: a repository object
// with room to spare.
const scratchSize = 8 << 10

func (p *scratchPool) get() *[]byte {
	if b, ok := p.pool.Get().(*[]byte); ok {
		return b
	}
	b := make([]byte, 0, scratchSize)
	return &b
}

// put recycles b (nil: nothing to recycle); the caller must not use it,
// or any slice of it, afterwards.
func (p *scratchPool) put(b *[]byte) {
	if b != nil {
		p.pool.Put(b)
	}
}

// Unwrap lets http.ResponseController reach the connection (flush,
// deadlines) for streaming handlers such as git over HTTP.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// bufferedWriter holds a response's status and body until the server
// decides between the body, a 304 and a rate-limit refusal. Its header
// is the response's own: restoreHeader takes back what was set through
// the writer.
type bufferedWriter struct {
	rec    *statusRecorder // the request's
	header http.Header
	before []headerEntry // the header's entries when the writer was made
	status int
	body   bytes.Buffer
	wrote  bool
}

type headerEntry struct {
	key    string
	values []string
}

// bufferPool recycles bufferedWriters between requests, so that a
// response body is not a fresh allocation each time.
type bufferPool struct{ pool sync.Pool }

// maxPooledBody bounds the buffers kept: a rare large response does not
// pin its memory.
const maxPooledBody = 64 << 10

// get returns an empty writer over the header, remembering its entries.
func (p *bufferPool) get(rec *statusRecorder) *bufferedWriter {
	b, _ := p.pool.Get().(*bufferedWriter)
	if b == nil {
		b = &bufferedWriter{}
	}
	h := rec.Header()
	b.rec, b.header, b.status, b.wrote = rec, h, http.StatusOK, false
	for k, v := range h {
		b.before = append(b.before, headerEntry{k, v[:len(v):len(v)]})
	}
	b.body.Reset()
	return b
}

// put recycles the writer; the caller must not use it, or any slice of
// its body, afterwards.
func (p *bufferPool) put(b *bufferedWriter) {
	if b.body.Cap() > maxPooledBody {
		return
	}
	b.rec, b.header = nil, nil
	clear(b.before)
	b.before = b.before[:0]
	p.pool.Put(b)
}

func (b *bufferedWriter) Header() http.Header { return b.header }

// restoreHeader gives the header back the entries it had when the writer
// was made, and no others. (Header.Set and Header.Del replace a value
// slice rather than change it, and Header.Add appends past the
// remembered length, so the remembered slices still hold the values.)
func (b *bufferedWriter) restoreHeader() {
	for k := range b.header {
		if !slices.ContainsFunc(b.before, func(e headerEntry) bool { return e.key == k }) {
			delete(b.header, k)
		}
	}
	for _, e := range b.before {
		b.header[e.key] = e.values
	}
}

func (b *bufferedWriter) WriteHeader(code int) {
	if !b.wrote {
		b.status, b.wrote = code, true
	}
}

// AvailableBuffer returns an empty slice with room for a typical JSON
// body, to append a response to and pass to Write without a copy (as
// bufio.Writer.AvailableBuffer).
func (b *bufferedWriter) AvailableBuffer() []byte {
	b.body.Grow(6 << 10) // a repository object is 5.7 KB
	return b.body.AvailableBuffer()
}

func (b *bufferedWriter) Write(p []byte) (int, error) {
	b.wrote = true
	return b.body.Write(p)
}

// etagHeader is "ETag" in the canonical form http.Header keys have.
const etagHeader = "Etag"

// headerValue is Header.Get for a key already in canonical form.
func headerValue(h http.Header, canonicalKey string) string {
	if v := h[canonicalKey]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// computeETag returns W/"<hex of the first 16 bytes of
// sha256(callerKey NUL body)>".
func computeETag(callerKey string, body []byte) string {
	var sum [sha256.Size]byte
	if n := len(callerKey) + 1 + len(body); n <= 256 { // ETag's versions: hash on the stack
		var in [256]byte
		b := append(append(append(in[:0], callerKey...), 0), body...)
		sum = sha256.Sum256(b)
	} else {
		h := sha256.New()
		_, _ = io.WriteString(h, callerKey)
		h.Write([]byte{0})
		h.Write(body)
		h.Sum(sum[:0])
	}
	var out [3 + 32 + 1]byte
	copy(out[:], `W/"`)
	hex.Encode(out[3:35], sum[:16])
	out[35] = '"'
	return string(out[:])
}

// ETag builds a weak ETag from a version string of a resource and the
// caller, for handlers that can tell freshness without rendering the body.
func ETag(callerKey, version string) string {
	return computeETag(callerKey, []byte(version))
}

// NotModified is the fast path of a GET handler that can tell freshness
// without rendering its body: it sets the ETag header and, when the
// request's If-None-Match lists etag, answers 304 (which the server does
// not count against the rate limit) and returns true; the handler then
// returns nil without writing a body.
func NotModified(w http.ResponseWriter, r *http.Request, etag string) bool {
	SetHeader(w, etagHeader, etag)
	if headerValue(r.Header, "If-None-Match") == "" || !notModified(r, etag, "") {
		return false
	}
	w.WriteHeader(http.StatusNotModified)
	return true
}

// notModified reports whether the client's copy is current: its
// If-None-Match lists the ETag (weak comparison), or, without
// If-None-Match, its If-Modified-Since is not before Last-Modified.
func notModified(r *http.Request, etag, lastModified string) bool {
	if inm := headerValue(r.Header, "If-None-Match"); inm != "" {
		want := strings.TrimPrefix(etag, "W/")
		for more := true; more; {
			var candidate string
			candidate, inm, more = strings.Cut(inm, ",")
			if c := strings.TrimPrefix(strings.TrimSpace(candidate), "W/"); c == "*" || c == want {
				return true
			}
		}
		return false
	}
	ims := headerValue(r.Header, "If-Modified-Since")
	if ims == "" || lastModified == "" {
		return false
	}
	since, err1 := http.ParseTime(ims)
	modified, err2 := http.ParseTime(lastModified)
	return err1 == nil && err2 == nil && !modified.After(since)
}

// SetLastModified sets the Last-Modified header from a time.
func SetLastModified(w http.ResponseWriter, t time.Time) {
	if !t.IsZero() {
		w.Header().Set("Last-Modified", t.UTC().Format(http.TimeFormat))
	}
}

package httpapi

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"time"

	"golang.org/x/sync/semaphore"

	"forgeapi/internal/apierr"
)

// MinBodyRate is the rate, in bytes a second, at which a request body
// under a whole-body deadline earns more time: each MinBodyRate bytes
// received move its deadline a second later. A client that sends at
// least that fast is never cut; one that trickles is cut after
// Config.BodyTimeout.
const MinBodyRate = 16 << 10

// BodyBufferBudget is how many bytes of memory the server gives at once
// to the API request bodies being read into memory (DecodeJSON), beyond
// the first freeBodyBuffer bytes of each: once a body has sent more than
// that, its declared size is charged to the budget, or it waits until
// other bodies are done (see bodyBuffer.charge). The memory of bodies
// being read is so at most the budget plus freeBodyBuffer a connection.
// Bodies admitted as large (LargeBodyBudget) are not counted again. A
// body larger than the whole budget is read alone. Config.BodyBuffers
// overrides it.
const BodyBufferBudget = 64 << 20

// freeBodyBuffer is the part of each body's buffer that is not charged
// to the budget: most bodies fit in it and never wait. Its memory is
// bounded by the number of connections, as the connections' own buffers
// are.
const freeBodyBuffer = 16 << 10

// firstBodyBuffer is the size of the buffer a body is first read into
// (its length and one byte, when that is less). The buffer then grows as
// bytes arrive, never to the declared length ahead of them: a client
// that declares 1 MiB and sends a byte holds this much, not 1 MiB.
const firstBodyBuffer = 4 << 10

// timedBody bounds the reading of a request body in time. Each read must
// make progress within idle: a client that stops sending is dropped, one
// that keeps sending is not (a git push, which streams a pack of any
// size, is bound by this alone). When whole is set (the bodies of API
// routes and of the plain handlers but git's, see Server.timeBody), the
// body must also arrive within whole of its first read, plus a second
// for each MinBodyRate bytes received. After a failed read the deadline
// stays: the connection is not read from again.
type timedBody struct {
	io.ReadCloser
	rc       *http.ResponseController
	idle     time.Duration // 0: none
	whole    time.Duration // 0: none
	start    time.Time     // of the first read
	received int64
}

// timeReads returns r with its body wrapped in a timedBody with the idle
// timeout and sets the connection's read deadline at once, so that the
// server's own reading of a body the handler left unread (up to 256 KiB,
// to reuse the connection) is bounded too. It returns r itself when idle
// is 0 or the request has no body.
//
// The wrapped body goes on a copy of the request: net/http looks at the
// Body of its own request, after the handler, to tell whether the body
// was left unread and closed early (then the connection must close, or
// what is left of the body would be read as the next request).
func timeReads(w http.ResponseWriter, r *http.Request, idle time.Duration) *http.Request {
	if idle <= 0 || r.Body == nil || r.Body == http.NoBody {
		return r
	}
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(idle))
	timed := r.WithContext(r.Context())
	timed.Body = &timedBody{ReadCloser: r.Body, rc: rc, idle: idle}
	return timed
}

// Read sets the connection's read deadline before each read of the body
// and clears it at the end of the body, so that the server's background
// read (which notices a client going away during a long response) does
// not time out.
func (b *timedBody) Read(p []byte) (int, error) {
	now := time.Now()
	if b.start.IsZero() {
		b.start = now
	}
	_ = b.rc.SetReadDeadline(b.deadline(now))
	n, err := b.ReadCloser.Read(p)
	b.received += int64(n)
	if err == io.EOF {
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// deadline is when the read starting at now must be done by.
func (b *timedBody) deadline(now time.Time) time.Time {
	var d time.Time
	if b.idle > 0 {
		d = now.Add(b.idle)
	}
	if b.whole > 0 {
		start := b.start
		if start.IsZero() {
			start = now
		}
		whole := start.Add(b.whole + time.Duration(b.received)*time.Second/MinBodyRate)
		if d.IsZero() || whole.Before(d) {
			d = whole
		}
	}
	return d
}

// timeBody puts r's body under the whole-body deadline (Config.BodyTimeout)
// and returns its timedBody, nil when the body is not timed.
func (s *Server) timeBody(r *http.Request) *timedBody {
	b, ok := r.Body.(*timedBody)
	if !ok {
		return nil
	}
	b.whole = s.cfg.BodyTimeout
	return b
}

// bodyBuffers is the server's memory budget for request bodies being read
// into memory (BodyBufferBudget).
type bodyBuffers struct {
	budget  *semaphore.Weighted
	size    int64
	metrics *Metrics
}

func newBodyBuffers(size int64, m *Metrics) *bodyBuffers {
	return &bodyBuffers{budget: semaphore.NewWeighted(size), size: size, metrics: m}
}

// bodyRead is what DecodeJSON needs to read an API request's body: the
// body's clock (nil when it is not timed), the server's buffers (nil
// outside the API routes), whether the body is charged to their budget
// (not when it was admitted as large), and the route's limit.
type bodyRead struct {
	clock    *timedBody
	buffers  *bodyBuffers
	budgeted bool
	limit    int64
}

// bodyReadOf returns the bodyRead of an API request (the zero value for
// any other).
func bodyReadOf(ctx context.Context) bodyRead {
	read, _ := ctx.Value(bodyReadKey{}).(bodyRead)
	return read
}

type bodyReadKey struct{}

// errBodyBuffersBusy is the 503 of a body that waited for the budget
// until its deadline. The connection is closed after it: the rest of the
// body was not read.
func errBodyBuffersBusy() *apierr.Error {
	return apierr.New(http.StatusServiceUnavailable, "The server is receiving too many request bodies at once; try again later.").
		WithHeader("Retry-After", "5").WithHeader("Connection", "close")
}

// errBodyTimeout is the 408 of a body that did not arrive in time (its
// idle or whole-body deadline passed). The connection is closed after it.
func errBodyTimeout() *apierr.Error {
	return apierr.New(http.StatusRequestTimeout, "Timed out reading the request body.").WithHeader("Connection", "close")
}

// isTimeout reports whether a body read failed on its deadline.
func isTimeout(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }

// bodyBuffer is a request body being read into memory: it grows as bytes
// arrive, charging what it holds over freeBodyBuffer to the budget.
type bodyBuffer struct {
	read     bodyRead
	buf      []byte
	size     int64 // the most the body can hold (its length or the route's limit), -1 unknown
	charged  int64 // held of the budget
	released bool
}

// readBody reads the whole body of r into memory. The buffer grows with
// what arrives, up to the body's declared length (one allocation for a
// body of up to firstBodyBuffer bytes). release gives its memory back to
// the budget: call it once the body is no longer used.
func readBody(r *http.Request) (body []byte, release func(), err error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, func() {}, nil
	}
	read := bodyReadOf(r.Context())
	b := &bodyBuffer{read: read, size: r.ContentLength}
	if b.size < 0 && read.limit > 0 {
		b.size = read.limit
	}
	b.metrics().bodyReading(1)
	for {
		if len(b.buf) == cap(b.buf) {
			if err := b.grow(r.Context()); err != nil {
				b.release()
				return nil, func() {}, err
			}
		}
		n, err := r.Body.Read(b.buf[len(b.buf):cap(b.buf)])
		b.buf = b.buf[:len(b.buf)+n]
		if err == io.EOF {
			return b.buf, b.release, nil
		}
		if err != nil {
			b.release()
			return nil, func() {}, err
		}
	}
}

// metrics returns the metrics that count the body (nil: none).
func (b *bodyBuffer) metrics() *Metrics {
	if b.read.buffers == nil {
		return nil
	}
	return b.read.buffers.metrics
}

// grow makes room for more of the body: the first buffer, then twice the
// last, never more than the body's size and one byte (to see its end).
func (b *bodyBuffer) grow(ctx context.Context) error {
	next := int64(firstBodyBuffer)
	if c := int64(cap(b.buf)); c > 0 {
		next = 2 * c
	}
	if b.size >= 0 && next > b.size+1 {
		next = b.size + 1
	}
	if err := b.charge(ctx, next); err != nil {
		return err
	}
	grown := make([]byte, len(b.buf), next)
	copy(grown, b.buf)
	b.metrics().bodyBuffered(next - int64(cap(b.buf)))
	b.buf = grown
	return nil
}

// charge takes from the budget, once a buffer of capacity c outgrows
// freeBodyBuffer, all the body may need beyond freeBodyBuffer (its size,
// within the whole budget), waiting for it at most until the body's next
// read would time out. It takes it all at once, not as the buffer grows:
// bodies waiting while holding part of the budget could keep each other
// from finishing, and a body that gave its part back to wait would still
// hold its buffer.
func (b *bodyBuffer) charge(ctx context.Context, c int64) error {
	bb := b.read.buffers
	if bb == nil || !b.read.budgeted || c <= freeBodyBuffer || b.charged > 0 {
		return nil
	}
	all := bb.size
	if b.size >= 0 {
		all = min(b.size+1-freeBodyBuffer, bb.size)
	}
	if !bb.budget.TryAcquire(all) {
		if clock := b.read.clock; clock != nil {
			if d := clock.deadline(time.Now()); !d.IsZero() {
				var cancel context.CancelFunc
				ctx, cancel = context.WithDeadline(ctx, d)
				defer cancel()
			}
		}
		bb.metrics.bodyWaiting(1)
		err := bb.budget.Acquire(ctx, all)
		bb.metrics.bodyWaiting(-1)
		if err != nil {
			return errBodyBuffersBusy()
		}
	}
	b.charged = all
	return nil
}

// release gives the buffer's charge back and counts the body out of the
// metrics; calls after the first do nothing.
func (b *bodyBuffer) release() {
	if b.released {
		return
	}
	b.released = true
	if b.charged > 0 {
		b.read.buffers.budget.Release(b.charged)
		b.charged = 0
	}
	m := b.metrics()
	m.bodyBuffered(-int64(cap(b.buf)))
	m.bodyReading(-1)
}

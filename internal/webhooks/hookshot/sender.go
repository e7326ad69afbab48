package hookshot

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Defaults applied by [NewSender] to zero Config fields.
const (
	DefaultTimeout = 10 * time.Second
	// DefaultMaxPayloadBytes is the platform's payload cap, 25 MB of JSON
	// (not 25 MiB): the sender's default and the events sink's
	// (webhooks.Config.MaxPayloadBytes), one number for both.
	DefaultMaxPayloadBytes  = 25_000_000
	DefaultMaxResponseBytes = 64 << 10 // 64 KiB of response body kept for the delivery log
	DefaultVersion          = "1"
)

// Header names sent with every delivery.
const (
	HeaderDelivery               = "X-Service-Delivery"
	HeaderEvent                  = "X-Service-Event"
	HeaderHookID                 = "X-Service-Hook-ID"
	HeaderInstallationTargetID   = "X-Service-Hook-Installation-Target-ID"
	HeaderInstallationTargetType = "X-Service-Hook-Installation-Target-Type"
)

// The platform's names of the same headers, which receivers' libraries
// route on (go-github's WebHookType, @octokit/webhooks).
const (
	PlatformHeaderDelivery               = "X-GitHub-Delivery"
	PlatformHeaderEvent                  = "X-GitHub-Event"
	PlatformHeaderHookID                 = "X-GitHub-Hook-ID"
	PlatformHeaderInstallationTargetID   = "X-GitHub-Hook-Installation-Target-ID"
	PlatformHeaderInstallationTargetType = "X-GitHub-Hook-Installation-Target-Type"
)

// HeaderNames says which names the delivery headers are sent under.
type HeaderNames string

// The header name sets: the spec's X-Service-* names, the platform's
// X-GitHub-* names, or both (the default).
const (
	HeaderNamesService  HeaderNames = "service"
	HeaderNamesPlatform HeaderNames = "platform"
	HeaderNamesBoth     HeaderNames = "both"
)

// ParseHeaderNames checks a --webhook-header-names value ("" is both).
func ParseHeaderNames(s string) (HeaderNames, error) {
	switch n := HeaderNames(s); n {
	case "":
		return HeaderNamesBoth, nil
	case HeaderNamesService, HeaderNamesPlatform, HeaderNamesBoth:
		return n, nil
	}
	return "", fmt.Errorf("want service, platform or both, not %q", s)
}

// TargetType is the kind of object a hook is installed on.
type TargetType string

// The installation target types.
const (
	TargetRepository   TargetType = "repository"
	TargetOrganization TargetType = "organization"
	// TargetIntegration is an app's own webhook; its target id is the app's.
	TargetIntegration TargetType = "integration"
)

// Config configures a [Sender]. The zero value is usable: every zero field
// takes the default documented on it.
type Config struct {
	// Timeout bounds one delivery: connecting, sending, and reading the
	// response headers and the kept part of the body. Default 10 s.
	Timeout time.Duration
	// MaxPayloadBytes is the largest payload (Request.Payload, the JSON
	// before any form encoding) that is sent; larger ones are not sent.
	// It caps the JSON, as the platform's cap does, so that a form hook
	// is sent every payload a JSON hook is, though URL encoding makes its
	// body up to three times as large. Default DefaultMaxPayloadBytes.
	MaxPayloadBytes int64
	// MaxResponseBytes is how much of the response body is kept in the
	// Result; the rest is discarded. Default 64 KiB.
	MaxResponseBytes int64
	// HeaderNames chooses the names of the delivery, event, hook and
	// installation target headers. Default HeaderNamesBoth.
	HeaderNames HeaderNames
	// Version goes into the user agent, "Service-Hookshot/<Version>".
	// Default "1".
	Version string
	// Allow decides which destinations may be connected to. Default (nil):
	// public unicast addresses only, see [DefaultAllowList].
	Allow *AllowList
	// Resolver resolves host names before the allow list checks them.
	// Default: net.DefaultResolver.
	Resolver Resolver
	// RootCAs verifies receivers' certificates. Default (nil): the system
	// roots.
	RootCAs *x509.CertPool
}

func (c Config) withDefaults() Config {
	if c.HeaderNames == "" {
		c.HeaderNames = HeaderNamesBoth
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxPayloadBytes <= 0 {
		c.MaxPayloadBytes = DefaultMaxPayloadBytes
	}
	if c.MaxResponseBytes <= 0 {
		c.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if c.Version == "" {
		c.Version = DefaultVersion
	}
	if c.Allow == nil {
		c.Allow = DefaultAllowList()
	}
	if c.Resolver == nil {
		c.Resolver = net.DefaultResolver
	}
	return c
}

// Request is one delivery to send.
type Request struct {
	URL         string      // config.url; only http and https are sent
	ContentType ContentType // config.content_type; empty means form
	Secret      string      // config.secret in clear; empty sends no signatures
	// Username and Password (config.username and config.password, the
	// password in clear) are sent as HTTP Basic credentials when either
	// is set; the delivery log shows "Authorization: ********".
	Username, Password string
	InsecureSSL        bool   // config.insecure_ssl == "1": do not verify TLS certificates
	Event              string // event name, e.g. "push"
	DeliveryGUID       string // X-Service-Delivery
	HookID             int64
	TargetID           int64      // id of the repository, organization or app the hook is on
	TargetType         TargetType // TargetRepository, TargetOrganization or TargetIntegration
	Payload            []byte     // the JSON payload
}

// Result records one delivery attempt for the delivery log.
type Result struct {
	// RequestHeaders are the delivery headers, spelled as the delivery log
	// shows them. They are recorded even when nothing could be sent, and are
	// nil only for an unsupported content type. The secret never appears,
	// only the signatures, and Basic credentials appear as
	// "Authorization: ********".
	RequestHeaders Headers
	// StatusCode is the response status, 0 when no response was received.
	StatusCode int
	// ResponseHeaders are the response headers; nil without a response.
	ResponseHeaders http.Header
	// ResponseBody is at most Config.MaxResponseBytes of the response body;
	// ResponseTruncated reports that more was discarded.
	ResponseBody      []byte
	ResponseTruncated bool
	// Duration is the time from the start of Send to its end.
	Duration time.Duration
	// Status is the delivery log's status text: "OK" for a 2xx response,
	// "Invalid HTTP Response: <code>" for any other, and for failures without
	// a response a short message such as "timed out",
	// "failed to connect to host" or "refused: address 127.0.0.1 is not
	// allowed (loopback)".
	Status string
	// Err says why no response was received, or why reading the response
	// body failed; nil otherwise. It is for logs and for errors.Is/As
	// (*RefusedError, ErrPayloadTooLarge, *UnsupportedContentTypeError); it
	// never holds the secret.
	Err error
}

// OK reports whether the receiver answered with a 2xx status.
func (r Result) OK() bool { return r.StatusCode >= 200 && r.StatusCode < 300 }

// Sender POSTs webhook deliveries. It is safe for concurrent use and keeps
// connections alive between deliveries to the same receiver. Create it with
// [NewSender] and release its idle connections with Close.
type Sender struct {
	cfg      Config
	verified *http.Transport
	insecure *http.Transport
	wire     wireNames
	signer   signer
}

// NewSender returns a Sender configured by cfg, with defaults for zero fields.
// Environment proxy settings are ignored: deliveries always connect directly,
// so the allow list sees the receiver's own address.
func NewSender(cfg Config) *Sender {
	cfg = cfg.withDefaults()
	dialer := &guardedDialer{allow: cfg.Allow, resolver: cfg.Resolver}
	return &Sender{
		cfg:      cfg,
		verified: newTransport(dialer, &tls.Config{RootCAs: cfg.RootCAs, MinVersion: tls.VersionTLS12}),
		insecure: newTransport(dialer, &tls.Config{InsecureSkipVerify: true}), //nolint:gosec // only when the hook asks for insecure_ssl=1
		wire:     newWireNames(),
	}
}

// MaxIdleConnsPerHost is how many idle connections a Sender keeps to one
// receiver. Many hooks often point at one receiver (a CI service, a chat
// bridge), each with up to 16 concurrent sends in the dispatcher: with
// fewer idle connections than concurrent sends, every burst closes the
// surplus and the next dials again (before: 64, and dialing was 90% of
// the sender's CPU with 40 hooks on one receiver).
const MaxIdleConnsPerHost = 256

// writeBufferSize is the size of a connection's write buffer: a delivery
// whose request line, headers and body fit in it goes out in one write.
// With the transport's default of 4 KiB, a 4 KiB payload took two writes
// and a copy buffer made for each delivery.
const writeBufferSize = 32 << 10

// newTransport returns the transport deliveries are sent with. Requests go
// to its RoundTrip, not through an http.Client: a delivery never follows
// a redirect (a 3xx is recorded as it is), and the client's redirect
// bookkeeping copied every request's headers.
func newTransport(d *guardedDialer, tlsConfig *tls.Config) *http.Transport {
	return &http.Transport{
		Proxy:               nil,
		DialContext:         d.DialContext,
		TLSClientConfig:     tlsConfig,
		ForceAttemptHTTP2:   true,
		DisableCompression:  true, // send exactly the recorded headers; keep the raw body
		MaxIdleConns:        4 * MaxIdleConnsPerHost,
		MaxIdleConnsPerHost: MaxIdleConnsPerHost,
		IdleConnTimeout:     90 * time.Second,
		WriteBufferSize:     writeBufferSize,
	}
}

// Close closes idle connections. The Sender stays usable.
func (s *Sender) Close() {
	s.verified.CloseIdleConnections()
	s.insecure.CloseIdleConnections()
}

// Send delivers req once and records the outcome. It never returns an error:
// every failure is described by the Result (StatusCode 0, Status and Err).
// Redirects are not followed; a 3xx response is recorded as it is. A payload
// larger than Config.MaxPayloadBytes, a URL that is not http or https, and a
// destination refused by the allow list are not sent. ctx cancels the
// delivery; Config.Timeout bounds it.
func (s *Sender) Send(ctx context.Context, req Request) Result {
	start := time.Now()
	res := s.send(ctx, req)
	res.Duration = time.Since(start)
	return res
}

func (s *Sender) send(ctx context.Context, req Request) Result {
	body, mediaType, err := EncodeBody(req.ContentType, req.Payload)
	if err != nil {
		return failure(Result{}, "invalid content type", err)
	}
	headers := s.headers(req, mediaType, body)
	target, targetErr := parseTarget(req.URL)
	if targetErr == nil {
		headers = headers.withURLCredentials(target)
	}
	res := Result{RequestHeaders: headers}
	if int64(len(req.Payload)) > s.cfg.MaxPayloadBytes {
		return failure(res, fmt.Sprintf("payload too large: %d bytes, limit %d", len(req.Payload), s.cfg.MaxPayloadBytes), ErrPayloadTooLarge)
	}
	if targetErr != nil {
		return failure(res, "invalid url: "+targetErr.Error(), targetErr)
	}

	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	httpReq, err := http.NewRequestWithContext(ctx, http.MethodPost, target.String(), bytes.NewReader(body))
	if err != nil {
		return failure(res, "invalid url", err)
	}
	httpReq.Header = headers.header(s.wire)
	resp, err := s.transport(req.InsecureSSL).RoundTrip(httpReq)
	if err != nil {
		return failure(res, describe(ctx, err), err)
	}
	defer resp.Body.Close()
	return s.record(ctx, res, resp)
}

func (s *Sender) transport(insecure bool) *http.Transport {
	if insecure {
		return s.insecure
	}
	return s.verified
}

// record fills res from resp, keeping at most MaxResponseBytes of the body.
func (s *Sender) record(ctx context.Context, res Result, resp *http.Response) Result {
	res.StatusCode = resp.StatusCode
	res.ResponseHeaders = resp.Header
	res.Status = statusText(resp.StatusCode)
	kept, err := io.ReadAll(io.LimitReader(resp.Body, s.cfg.MaxResponseBytes+1))
	if int64(len(kept)) > s.cfg.MaxResponseBytes {
		kept, res.ResponseTruncated = kept[:s.cfg.MaxResponseBytes], true
		drain(resp.Body, s.cfg.MaxResponseBytes)
	}
	res.ResponseBody = kept
	if err != nil && !res.ResponseTruncated {
		res.Err = fmt.Errorf("reading response body: %w", err)
	}
	return res
}

// drain reads up to limit more bytes so that a connection with a modest
// unread remainder can be reused; larger remainders close the connection.
func drain(body io.Reader, limit int64) {
	_, _ = io.Copy(io.Discard, io.LimitReader(body, limit))
}

// statusText is the delivery log's status for a response code.
func statusText(code int) string {
	if code >= 200 && code < 300 {
		return "OK"
	}
	return "Invalid HTTP Response: " + strconv.Itoa(code)
}

// ErrPayloadTooLarge is the Result.Err of a delivery whose payload exceeds
// Config.MaxPayloadBytes; such a delivery is not sent.
var ErrPayloadTooLarge = errors.New("payload too large")

func failure(res Result, status string, err error) Result {
	res.Status = status
	res.Err = err
	return res
}

// parseTarget accepts absolute http and https URLs with a host.
func parseTarget(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, errors.New("cannot be parsed")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("scheme %q is not http or https", u.Scheme)
	}
	if u.Hostname() == "" {
		return nil, errors.New("no host")
	}
	return u, nil
}

// describe turns a transport error into the delivery log's status text.
func describe(ctx context.Context, err error) string {
	var refused *RefusedError
	var dnsErr *net.DNSError
	var certErr *tls.CertificateVerificationError
	var netErr net.Error
	switch {
	case errors.As(err, &refused):
		return "refused: " + refused.Error()
	case errors.Is(ctx.Err(), context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return "timed out"
	case errors.Is(ctx.Err(), context.Canceled):
		return "canceled"
	case errors.As(err, &dnsErr):
		return "failed to resolve host"
	case errors.As(err, &certErr), isCertError(err):
		return "TLS certificate verification failed"
	case isDialError(err):
		return "failed to connect to host"
	default:
		return "failed to deliver"
	}
}

func isCertError(err error) bool {
	var unknown x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	return errors.As(err, &unknown) || errors.As(err, &hostname) || errors.As(err, &invalid)
}

func isDialError(err error) bool {
	var opErr *net.OpError
	return errors.As(err, &opErr) && opErr.Op == "dial"
}

package hookshot

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"
)

const testSecret = "It's a Secret to Everybody"

var testPayload = []byte(`{"zen":"Keep it logically awesome.","hook_id":42,"text":"a&b=c+d é"}`)

// delivery is what a receiver saw.
type delivery struct {
	header     http.Header
	body       []byte
	payload    []byte // from github.ValidatePayload
	validation error  // from github.ValidatePayload
}

// receiver is a real HTTP server that records every request it gets.
type receiver struct {
	*httptest.Server
	secret     []byte
	deliveries chan delivery
	hits       atomic.Int32
}

// newReceiver starts a plain HTTP receiver answering with respond.
func newReceiver(t *testing.T, secret string, respond http.HandlerFunc) *receiver {
	t.Helper()
	r := &receiver{secret: []byte(secret), deliveries: make(chan delivery, 64)}
	r.Server = httptest.NewServer(r.handler(respond))
	t.Cleanup(r.Close)
	return r
}

// newTLSReceiver starts an HTTPS receiver with httptest's self-signed certificate.
func newTLSReceiver(t *testing.T, secret string) *receiver {
	t.Helper()
	r := &receiver{secret: []byte(secret), deliveries: make(chan delivery, 64)}
	r.Server = httptest.NewUnstartedServer(r.handler(nil))
	r.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are expected
	r.StartTLS()
	t.Cleanup(r.Close)
	return r
}

func (rc *receiver) handler(respond http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		rc.hits.Add(1)
		body, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
		payload, err := github.ValidatePayload(req, rc.secret)
		rc.deliveries <- delivery{header: req.Header.Clone(), body: body, payload: payload, validation: err}
		if respond != nil {
			respond(w, req)
			return
		}
		w.Header().Set("X-Receiver", "yes")
		io.WriteString(w, "thanks")
	})
}

func (rc *receiver) next(t *testing.T) delivery {
	t.Helper()
	select {
	case d := <-rc.deliveries:
		return d
	default:
		t.Fatal("the receiver got no delivery")
		return delivery{}
	}
}

// loopbackSender returns a Sender allowed to reach the local test receivers.
func loopbackSender(t *testing.T, cfg Config) *Sender {
	t.Helper()
	if cfg.Allow == nil {
		cfg.Allow = mustAllow(t, "loopback")
	}
	s := NewSender(cfg)
	t.Cleanup(s.Close)
	return s
}

func mustAllow(t *testing.T, list string) *AllowList {
	t.Helper()
	a, err := ParseAllowList(list)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func newRequest(rawURL string, ct ContentType, secret string) Request {
	return Request{
		URL:          rawURL,
		ContentType:  ct,
		Secret:       secret,
		Event:        "ping",
		DeliveryGUID: "0b989ba4-242f-11e5-81e1-c7b6966d2516",
		HookID:       42,
		TargetID:     1296269,
		TargetType:   TargetRepository,
		Payload:      testPayload,
	}
}

// staticResolver resolves host names from a table, like a DNS server that
// answers whatever an attacker configured.
type staticResolver map[string][]netip.Addr

func (r staticResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	addrs, ok := r[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return addrs, nil
}

// withHost returns rawURL with its host name replaced by host, keeping the port.
func withHost(t *testing.T, rawURL, host string) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = net.JoinHostPort(host, u.Port())
	return u.String()
}

func TestSendSignsAndEncodes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		ct        ContentType
		mediaType string
	}{
		{ContentJSON, "application/json"},
		{ContentForm, "application/x-www-form-urlencoded"},
		{"", "application/x-www-form-urlencoded"},
	}
	for _, tt := range tests {
		t.Run(string(tt.ct), func(t *testing.T) {
			t.Parallel()
			rc := newReceiver(t, testSecret, nil)
			s := loopbackSender(t, Config{Version: "test"})

			res := s.Send(t.Context(), newRequest(rc.URL+"/hook", tt.ct, testSecret))

			if res.Status != "OK" || res.StatusCode != 200 || !res.OK() || res.Err != nil {
				t.Fatalf("result = %q %d %v, want OK 200", res.Status, res.StatusCode, res.Err)
			}
			d := rc.next(t)
			if d.validation != nil {
				t.Fatalf("github.ValidatePayload: %v", d.validation)
			}
			if !bytes.Equal(d.payload, testPayload) {
				t.Errorf("payload = %s, want %s", d.payload, testPayload)
			}
			if err := github.ValidateSignature(d.header.Get("X-Hub-Signature"), d.body, []byte(testSecret)); err != nil {
				t.Errorf("sha1 signature: %v", err)
			}
			checkBody(t, tt.ct, d.body)
			wantHeaders := map[string]string{
				"Accept":                                  "*/*",
				"User-Agent":                              "Service-Hookshot/test",
				"X-Service-Delivery":                      "0b989ba4-242f-11e5-81e1-c7b6966d2516",
				"X-Service-Event":                         "ping",
				"X-Service-Hook-ID":                       "42",
				"X-Service-Hook-Installation-Target-ID":   "1296269",
				"X-Service-Hook-Installation-Target-Type": "repository",
				"X-GitHub-Delivery":                       "0b989ba4-242f-11e5-81e1-c7b6966d2516",
				"X-GitHub-Event":                          "ping",
				"X-GitHub-Hook-ID":                        "42",
				"X-GitHub-Hook-Installation-Target-ID":    "1296269",
				"X-GitHub-Hook-Installation-Target-Type":  "repository",
				"content-type":                            tt.mediaType,
				"X-Hub-Signature":                         d.header.Get("X-Hub-Signature"),
				"X-Hub-Signature-256":                     d.header.Get("X-Hub-Signature-256"),
			}
			checkHeaders(t, res.RequestHeaders.Map(), wantHeaders)
			checkWireHeaders(t, d.header, wantHeaders)
			if res.ResponseHeaders.Get("X-Receiver") != "yes" || string(res.ResponseBody) != "thanks" || res.ResponseTruncated {
				t.Errorf("response = %v %q truncated=%v", res.ResponseHeaders, res.ResponseBody, res.ResponseTruncated)
			}
			if res.Duration <= 0 {
				t.Errorf("duration = %v, want > 0", res.Duration)
			}
		})
	}
}

func checkBody(t *testing.T, ct ContentType, body []byte) {
	t.Helper()
	if ct == ContentJSON {
		if !bytes.Equal(body, testPayload) {
			t.Errorf("json body = %s, want the payload unchanged", body)
		}
		return
	}
	form, err := url.ParseQuery(string(body))
	if err != nil || len(form) != 1 || form.Get("payload") != string(testPayload) {
		t.Errorf("form body = %q (%v), want only payload=<url-encoded JSON>", body, err)
	}
	if !strings.HasPrefix(string(body), "payload=") {
		t.Errorf("form body = %q, want it to start with payload=", body)
	}
}

// checkHeaders compares the recorded headers exactly, and that the secret is absent.
func checkHeaders(t *testing.T, got, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("recorded headers = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v || v == "" && k != "X-Hub-Signature" && k != "X-Hub-Signature-256" {
			t.Errorf("recorded header %s = %q, want %q", k, got[k], v)
		}
	}
	for k, v := range got {
		if strings.Contains(v, testSecret) {
			t.Errorf("recorded header %s leaks the secret", k)
		}
	}
}

// checkWireHeaders checks the headers that arrived, and that nothing else did
// beyond what HTTP itself adds.
func checkWireHeaders(t *testing.T, got http.Header, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got.Get(k) != v {
			t.Errorf("wire header %s = %q, want %q", k, got.Get(k), v)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok && http.CanonicalHeaderKey(k) != "Content-Length" && !inCanonical(want, k) {
			t.Errorf("unexpected wire header %s: %q", k, got[k])
		}
	}
}

func inCanonical(m map[string]string, key string) bool {
	for k := range m {
		if http.CanonicalHeaderKey(k) == key {
			return true
		}
	}
	return false
}

func TestSendWithoutSecretSendsNoSignatures(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, "", nil)
	s := loopbackSender(t, Config{})

	res := s.Send(t.Context(), newRequest(rc.URL, ContentJSON, ""))

	d := rc.next(t)
	if !res.OK() || d.validation != nil {
		t.Fatalf("result %q, validation %v", res.Status, d.validation)
	}
	for _, h := range []string{"X-Hub-Signature", "X-Hub-Signature-256"} {
		if d.header.Get(h) != "" {
			t.Errorf("%s sent without a secret", h)
		}
		if _, ok := res.RequestHeaders.Get(h); ok {
			t.Errorf("%s recorded without a secret", h)
		}
	}
	if res.RequestHeaders.Map()["User-Agent"] != "Service-Hookshot/"+DefaultVersion {
		t.Errorf("default user agent = %q", res.RequestHeaders.Map()["User-Agent"])
	}
}

// TestSendBasicAuthorization checks the credentials a delivery carries:
// the hook's username and password, else the user information of its
// URL (as an HTTP client sends it), each as Basic authorization on the
// wire and masked in the delivery log; the hook's own win over the URL's.
func TestSendBasicAuthorization(t *testing.T) {
	t.Parallel()
	basic := func(user, password string) string {
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))
	}
	tests := []struct {
		name, userinfo, user, password, want string
	}{
		{"none", "", "", "", ""},
		{"the hook's", "", "hook", "s3cret", basic("hook", "s3cret")},
		{"the URL's", "url:p%40ss@", "", "", basic("url", "p@ss")},
		{"the hook's over the URL's", "url:pass@", "hook", "s3cret", basic("hook", "s3cret")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rc := newReceiver(t, testSecret, nil)
			s := loopbackSender(t, Config{})
			req := newRequest(strings.Replace(rc.URL, "http://", "http://"+tt.userinfo, 1), ContentJSON, testSecret)
			req.Username, req.Password = tt.user, tt.password

			res := s.Send(t.Context(), req)

			d := rc.next(t)
			if !res.OK() {
				t.Fatalf("result %q %v", res.Status, res.Err)
			}
			if got := d.header.Get("Authorization"); got != tt.want {
				t.Errorf("Authorization on the wire = %q, want %q", got, tt.want)
			}
			logged, ok := res.RequestHeaders.Get("Authorization")
			if tt.want == "" && ok || tt.want != "" && logged != MaskedValue {
				t.Errorf("Authorization in the log = %q (present %v), want it masked when sent", logged, ok)
			}
		})
	}
}

// TestSendPayloadsAroundTheWriteBuffer sends payloads smaller than,
// about as large as and larger than a connection's write buffer on one
// connection: each arrives whole and signed.
func TestSendPayloadsAroundTheWriteBuffer(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, testSecret, nil)
	s := loopbackSender(t, Config{})
	for _, size := range []int{100, writeBufferSize - 600, writeBufferSize, 3*writeBufferSize + 7} {
		payload := []byte(`{"zen":"` + strings.Repeat("z", size) + `"}`)
		req := newRequest(rc.URL, ContentJSON, testSecret)
		req.Payload = payload

		res := s.Send(t.Context(), req)

		d := rc.next(t)
		if !res.OK() || d.validation != nil {
			t.Fatalf("%d bytes: result %q, validation %v", size, res.Status, d.validation)
		}
		if !bytes.Equal(d.payload, payload) {
			t.Errorf("%d bytes: the receiver got %d bytes", size, len(d.payload))
		}
	}
}

func TestSendOrganizationTarget(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, "", nil)
	s := loopbackSender(t, Config{})
	req := newRequest(rc.URL, ContentJSON, "")
	req.TargetType, req.TargetID, req.Event = TargetOrganization, 9919, "push"

	s.Send(t.Context(), req)

	d := rc.next(t)
	if d.header.Get("X-Service-Hook-Installation-Target-Type") != "organization" ||
		d.header.Get("X-Service-Hook-Installation-Target-Id") != "9919" ||
		d.header.Get("X-Service-Event") != "push" {
		t.Errorf("headers = %v", d.header)
	}
}

func TestSendRecordsNon2xx(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, "", func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "no such hook", http.StatusNotFound)
	})
	s := loopbackSender(t, Config{})

	res := s.Send(t.Context(), newRequest(rc.URL, ContentJSON, ""))

	if res.StatusCode != 404 || res.Status != "Invalid HTTP Response: 404" || res.OK() {
		t.Errorf("result = %d %q", res.StatusCode, res.Status)
	}
	if string(res.ResponseBody) != "no such hook\n" {
		t.Errorf("response body = %q", res.ResponseBody)
	}
}

func TestSendDoesNotFollowRedirects(t *testing.T) {
	t.Parallel()
	target := newReceiver(t, "", nil)
	rc := newReceiver(t, "", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL, http.StatusFound)
	})
	s := loopbackSender(t, Config{})

	res := s.Send(t.Context(), newRequest(rc.URL, ContentJSON, ""))

	if res.StatusCode != 302 || res.Status != "Invalid HTTP Response: 302" {
		t.Errorf("result = %d %q, want the 302 as is", res.StatusCode, res.Status)
	}
	if res.ResponseHeaders.Get("Location") != target.URL {
		t.Errorf("Location = %q", res.ResponseHeaders.Get("Location"))
	}
	if n := target.hits.Load(); n != 0 {
		t.Errorf("redirect target hit %d times", n)
	}
}

func TestSendCapsResponseBody(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("0123456789", 1000)
	rc := newReceiver(t, "", func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, big)
	})
	s := loopbackSender(t, Config{MaxResponseBytes: 100})

	res := s.Send(t.Context(), newRequest(rc.URL, ContentJSON, ""))

	if !res.OK() || string(res.ResponseBody) != big[:100] || !res.ResponseTruncated || res.Err != nil {
		t.Errorf("result = %q, body %d bytes, truncated=%v, err=%v", res.Status, len(res.ResponseBody), res.ResponseTruncated, res.Err)
	}
}

// TestSendRefusesPayloadOverMax: the cap is on the payload (the JSON),
// not on the encoded body: a payload of exactly MaxPayloadBytes is sent
// as JSON and as a form, whose body is larger; one byte over is sent as
// neither, and its headers are still recorded.
func TestSendRefusesPayloadOverMax(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, "", nil)
	atCap := loopbackSender(t, Config{MaxPayloadBytes: int64(len(testPayload))})
	underCap := loopbackSender(t, Config{MaxPayloadBytes: int64(len(testPayload)) - 1})

	for _, ct := range []ContentType{ContentJSON, ContentForm} {
		body, _, err := EncodeBody(ct, testPayload)
		if err != nil {
			t.Fatal(err)
		}
		if res := atCap.Send(t.Context(), newRequest(rc.URL, ct, testSecret)); !res.OK() {
			t.Errorf("%s payload of exactly the cap (a %d-byte body): %q", ct, len(body), res.Status)
		}
		res := underCap.Send(t.Context(), newRequest(rc.URL, ct, testSecret))
		if res.StatusCode != 0 || !strings.HasPrefix(res.Status, "payload too large") || !errors.Is(res.Err, ErrPayloadTooLarge) {
			t.Errorf("%s payload over the cap: %d %q %v, want payload too large", ct, res.StatusCode, res.Status, res.Err)
		}
		if res.RequestHeaders.Map()["X-Service-Delivery"] == "" {
			t.Errorf("%s: headers of an unsent delivery are not recorded", ct)
		}
	}
	if n := rc.hits.Load(); n != 2 {
		t.Errorf("receiver hit %d times, want 2 (the payloads of exactly the cap)", n)
	}
}

func TestSendTimesOut(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	rc := newReceiver(t, "", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release) // runs before the server's cleanup closes it
	s := loopbackSender(t, Config{Timeout: 50 * time.Millisecond})

	res := s.Send(t.Context(), newRequest(rc.URL, ContentJSON, ""))

	if res.StatusCode != 0 || res.Status != "timed out" || res.Err == nil {
		t.Errorf("result = %d %q %v, want timed out", res.StatusCode, res.Status, res.Err)
	}
	if res.Duration < 50*time.Millisecond {
		t.Errorf("duration = %v, shorter than the timeout", res.Duration)
	}
}

func TestSendCanceled(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, "", nil)
	s := loopbackSender(t, Config{})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()

	res := s.Send(ctx, newRequest(rc.URL, ContentJSON, ""))

	if res.StatusCode != 0 || res.Status != "canceled" {
		t.Errorf("result = %d %q, want canceled", res.StatusCode, res.Status)
	}
}

func TestSendTLS(t *testing.T) {
	t.Parallel()
	rc := newTLSReceiver(t, testSecret)
	pool := x509.NewCertPool()
	pool.AddCert(rc.Certificate())
	tests := []struct {
		name     string
		rootCAs  *x509.CertPool
		insecure bool
		status   string
	}{
		{"unknown authority is refused", nil, false, "TLS certificate verification failed"},
		{"insecure_ssl skips verification", nil, true, "OK"},
		{"trusted authority verifies", pool, false, "OK"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := loopbackSender(t, Config{RootCAs: tt.rootCAs})
			req := newRequest(rc.URL, ContentJSON, testSecret)
			req.InsecureSSL = tt.insecure

			res := s.Send(t.Context(), req)

			if res.Status != tt.status {
				t.Errorf("status = %q (%v), want %q", res.Status, res.Err, tt.status)
			}
		})
	}
}

func TestSendRefusesLoopbackByDefault(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, "", nil)
	s := NewSender(Config{}) // default allow list: external
	defer s.Close()

	res := s.Send(t.Context(), newRequest(rc.URL, ContentJSON, ""))

	checkRefused(t, res, netip.MustParseAddr("127.0.0.1"))
	if n := rc.hits.Load(); n != 0 {
		t.Errorf("receiver hit %d times", n)
	}
}

func checkRefused(t *testing.T, res Result, addr netip.Addr) {
	t.Helper()
	var refused *RefusedError
	if !errors.As(res.Err, &refused) {
		t.Fatalf("err = %v, want *RefusedError", res.Err)
	}
	if refused.Addr != addr || refused.Class != ClassLoopback {
		t.Errorf("refusal = %+v", refused)
	}
	want := "refused: address " + addr.String() + " is not allowed (loopback)"
	if res.StatusCode != 0 || res.Status != want {
		t.Errorf("result = %d %q, want %q", res.StatusCode, res.Status, want)
	}
}

// A host name whose DNS answer is 127.0.0.1 must be refused on the resolved
// address, not let through because the name looks external.
func TestSendRefusesHostResolvingToLoopback(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, "", nil)
	resolver := staticResolver{"hooks.rebind.example": {netip.MustParseAddr("127.0.0.1")}}
	s := NewSender(Config{Resolver: resolver})
	defer s.Close()

	res := s.Send(t.Context(), newRequest(withHost(t, rc.URL, "hooks.rebind.example"), ContentJSON, ""))

	checkRefused(t, res, netip.MustParseAddr("127.0.0.1"))
	if n := rc.hits.Load(); n != 0 {
		t.Errorf("receiver hit %d times", n)
	}
}

// localhost, resolved by the system resolver, is refused the same way.
func TestSendRefusesLocalhost(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, "", nil)
	s := NewSender(Config{})
	defer s.Close()

	res := s.Send(t.Context(), newRequest(withHost(t, rc.URL, "localhost"), ContentJSON, ""))

	var refused *RefusedError
	if !errors.As(res.Err, &refused) || refused.Class != ClassLoopback || !strings.HasPrefix(res.Status, "refused: address ") {
		t.Errorf("result = %q %v, want a loopback refusal", res.Status, res.Err)
	}
	if n := rc.hits.Load(); n != 0 {
		t.Errorf("receiver hit %d times", n)
	}
}

func TestSendAllowListRules(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, "", nil)
	resolver := staticResolver{
		"ci.internal.example":   {netip.MustParseAddr("127.0.0.1")},
		"ci.elsewhere.example":  {netip.MustParseAddr("127.0.0.1")},
		"dual.internal.example": {netip.MustParseAddr("169.254.169.254"), netip.MustParseAddr("127.0.0.1")},
	}
	tests := []struct {
		list    string
		host    string
		allowed bool
	}{
		{"external", "127.0.0.1", false},
		{"loopback", "127.0.0.1", true},
		{"external,loopback", "ci.internal.example", true},
		{"private", "127.0.0.1", false},
		{"*", "127.0.0.1", true},
		{"*", "ci.elsewhere.example", true},
		{"127.0.0.0/8", "127.0.0.1", true},
		{"127.0.0.1", "ci.elsewhere.example", true},
		{"10.0.0.0/8", "127.0.0.1", false},
		{"*.internal.example", "ci.internal.example", true},
		{"*.internal.example", "ci.elsewhere.example", false},
		{"*.internal.example", "127.0.0.1", false},
		// the refused metadata address is skipped, the allowed one is dialed.
		{"*.internal.example", "dual.internal.example", true},
	}
	for _, tt := range tests {
		t.Run(tt.list+"/"+tt.host, func(t *testing.T) {
			t.Parallel()
			s := NewSender(Config{Allow: mustAllow(t, tt.list), Resolver: resolver})
			defer s.Close()

			res := s.Send(t.Context(), newRequest(withHost(t, rc.URL, tt.host), ContentJSON, ""))

			var refused *RefusedError
			if tt.allowed && !res.OK() {
				t.Errorf("result = %q %v, want OK", res.Status, res.Err)
			}
			if !tt.allowed && (!errors.As(res.Err, &refused) || res.StatusCode != 0) {
				t.Errorf("result = %d %q %v, want a refusal", res.StatusCode, res.Status, res.Err)
			}
		})
	}
}

func TestSendRejectsBadRequests(t *testing.T) {
	t.Parallel()
	s := NewSender(Config{Allow: mustAllow(t, "*")})
	defer s.Close()
	tests := []struct {
		name   string
		url    string
		ct     ContentType
		status string
	}{
		{"ftp scheme", "ftp://example.com/hook", ContentJSON, `invalid url: scheme "ftp" is not http or https`},
		{"file scheme", "file:///etc/passwd", ContentJSON, `invalid url: scheme "file" is not http or https`},
		{"relative", "/hook", ContentJSON, `invalid url: scheme "" is not http or https`},
		{"no host", "http:///hook", ContentJSON, "invalid url: no host"},
		{"unparsable", "http://[::1", ContentJSON, "invalid url: cannot be parsed"},
		{"content type", "http://example.com/", "xml", "invalid content type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := s.Send(t.Context(), newRequest(tt.url, tt.ct, testSecret))
			if res.StatusCode != 0 || res.Status != tt.status || res.Err == nil {
				t.Errorf("result = %d %q %v, want %q", res.StatusCode, res.Status, res.Err, tt.status)
			}
		})
	}
}

func TestSendReportsConnectionFailures(t *testing.T) {
	t.Parallel()
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close() // nothing listens on this port any more
	resolver := staticResolver{}
	s := NewSender(Config{Allow: mustAllow(t, "loopback"), Resolver: resolver})
	defer s.Close()

	refused := s.Send(t.Context(), newRequest(closedURL, ContentJSON, ""))
	unknown := s.Send(t.Context(), newRequest("http://nowhere.invalid/", ContentJSON, ""))

	if refused.StatusCode != 0 || refused.Status != "failed to connect to host" {
		t.Errorf("closed port: %d %q %v", refused.StatusCode, refused.Status, refused.Err)
	}
	if unknown.StatusCode != 0 || unknown.Status != "failed to resolve host" {
		t.Errorf("unknown host: %d %q %v", unknown.StatusCode, unknown.Status, unknown.Err)
	}
}

func TestSendConcurrently(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, testSecret, nil)
	s := loopbackSender(t, Config{})
	const n = 32
	var wg sync.WaitGroup
	results := make([]Result, n)
	for i := range n {
		wg.Go(func() {
			req := newRequest(rc.URL, ContentJSON, testSecret)
			req.HookID = int64(i)
			results[i] = s.Send(t.Context(), req)
		})
	}
	wg.Wait()

	for i, res := range results {
		if !res.OK() || res.RequestHeaders.Map()["X-Service-Hook-ID"] != strconv.Itoa(i) {
			t.Errorf("delivery %d: %q %v", i, res.Status, res.RequestHeaders.Map()["X-Service-Hook-ID"])
		}
	}
	for range n {
		if d := rc.next(t); d.validation != nil {
			t.Errorf("signature: %v", d.validation)
		}
	}
}

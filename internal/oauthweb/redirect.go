package oauthweb

import (
	"errors"
	"net"
	"net/url"
	"strings"
)

// errBadCallback is a callback URL that is not an absolute http(s) URL.
var errBadCallback = errors.New("oauthweb: the callback URL must be an absolute http or https URL without a fragment")

// parseCallback parses an absolute http or https URL with a host, no
// user information and no fragment.
func parseCallback(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" || u.User != nil ||
		u.Fragment != "" || u.Opaque != "" {
		return nil, errBadCallback
	}
	return u, nil
}

// RedirectAllowed reports whether redirect_uri may be used with an
// application whose callback URL is callback, by the platform's rules:
// the same scheme; the callback's host or one of its subdomains; the
// same port, except that a loopback IP address (127.0.0.1, [::1]) may
// take any port; and the callback's path or a path below it.
//
//	callback http://example.com/path
//	good     http://example.com/path/subdir/other, http://oauth.example.com/path
//	bad      http://example.com/bar, http://example.com/, http://example.com:8080/path, http://example.org
func RedirectAllowed(callback, redirect string) bool {
	cb, err := parseCallback(callback)
	if err != nil {
		return false
	}
	r, err := parseCallback(redirect)
	if err != nil || r.Scheme != cb.Scheme {
		return false
	}
	ch, rh := strings.ToLower(cb.Hostname()), strings.ToLower(r.Hostname())
	if ip := net.ParseIP(ch); ip != nil {
		if rh != ch && !net.ParseIP(rh).Equal(ip) {
			return false
		}
		if !ip.IsLoopback() && port(cb) != port(r) {
			return false
		}
	} else if rh != ch && !strings.HasSuffix(rh, "."+ch) || port(cb) != port(r) {
		return false
	}
	return pathBelow(cb.EscapedPath(), r.EscapedPath())
}

// port is the URL's port, the scheme's default when it names none.
func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}

// pathBelow reports whether the escaped path p is base or a path below
// it. p must not climb out of base in any spelling that a browser or the
// application's server might normalise (see unsafeSegment).
func pathBelow(base, p string) bool {
	base = strings.TrimSuffix(base, "/")
	if p == "" {
		p = "/"
	}
	for _, seg := range strings.Split(p, "/") {
		if unsafeSegment(seg) {
			return false
		}
	}
	return base == "" || p == base || strings.HasPrefix(p, base+"/")
}

// unsafeSegment reports whether an escaped path segment is, or may be
// read as, a dot segment or more than one segment: once or more times
// percent-decoded (a server behind a proxy may decode twice), it holds a
// separator ("/", "%2F"; a backslash, which browsers read as "/"), or it
// is made of dots alone ("..", "%2e%2E", ".%2e", "%252e%252e", and "..."
// that Windows servers trim to ".."), also before a ";" parameter ("..;x",
// which Java servers read as "..").
func unsafeSegment(seg string) bool {
	for decodes := 0; ; decodes++ {
		name, _, _ := strings.Cut(seg, ";")
		if strings.ContainsAny(seg, `/\`) || name != "" && strings.Trim(name, ".") == "" {
			return true
		}
		decoded, err := url.PathUnescape(seg)
		if err != nil || decoded == seg {
			return false
		}
		if decodes == 3 { // encoded more times than any server decodes
			return true
		}
		seg = decoded
	}
}

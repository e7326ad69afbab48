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

// pathBelow reports whether p is base or a path below it; p must not
// climb out of base with dot segments.
func pathBelow(base, p string) bool {
	base = strings.TrimSuffix(base, "/")
	if p == "" {
		p = "/"
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "." || seg == ".." || strings.EqualFold(seg, "%2e") || strings.EqualFold(seg, "%2e%2e") {
			return false
		}
	}
	return base == "" || p == base || strings.HasPrefix(p, base+"/")
}

package app

import (
	"fmt"
	"net/url"
	"strings"
)

// PublicBaseURL returns the base URL that url fields start with, from
// --base-url or the bound address: an http or https URL with a host and
// an optional path, without a trailing slash, and without the scheme's
// default port (https://forge.example:443 is https://forge.example, as
// clients compare hosts and the platform writes none). It refuses
// anything else, which would render unusable links.
func PublicBaseURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return "", err
	case u.Scheme != "http" && u.Scheme != "https":
		return "", fmt.Errorf("%q is not an http:// or https:// URL", raw)
	case u.Host == "" || u.Hostname() == "":
		return "", fmt.Errorf("%q has no host", raw)
	case u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		return "", fmt.Errorf("%q may hold a scheme, a host, a port and a path only", raw)
	}
	if port := u.Port(); (u.Scheme == "https" && port == "443") || (u.Scheme == "http" && port == "80") {
		u.Host = u.Hostname()
		if strings.Contains(u.Host, ":") {
			u.Host = "[" + u.Host + "]" // an IPv6 literal
		}
	}
	return trimSlash(u.String()), nil
}

package httpapi

import (
	"net/http"
	"strings"
)

// Media type headers: a response names the media type the server used,
// as the platform does (X-GitHub-Media-Type: github.v3; format=json), in
// the spec's name and in the platform's, which clients read.
const (
	MediaTypeHeader         = "X-Service-Media-Type"
	PlatformMediaTypeHeader = "X-Github-Media-Type" // X-GitHub-Media-Type, canonical
)

// MediaParam returns the parameter of the request's media type, from
// Accept: "raw" for application/vnd.github.raw+json (or .v3.raw, or the
// spec's application/vnd.service.raw), "" for plain JSON. The spec's
// vnd.service and the platform's vnd.github are the same.
func MediaParam(r *http.Request) string {
	param, _ := parseMedia(r.Header.Get("Accept"))
	return param
}

// parseMedia reads the first vendor media type of an Accept header:
// its parameter (raw, text, html, full, diff, patch, sha, object, ...)
// and the format it names after "+" ("" when it names none, as when
// there is no vendor media type).
func parseMedia(accept string) (param, format string) {
	for _, part := range strings.Split(accept, ",") {
		mt := strings.TrimSpace(part)
		if i := strings.IndexByte(mt, ';'); i >= 0 {
			mt = mt[:i]
		}
		var rest string
		var ok bool
		if rest, ok = strings.CutPrefix(mt, "application/vnd.github"); !ok {
			if rest, ok = strings.CutPrefix(mt, "application/vnd.service"); !ok {
				continue
			}
		}
		if base, f, found := strings.Cut(rest, "+"); found {
			rest, format = base, f
		}
		rest = strings.TrimPrefix(rest, ".v3")
		return strings.TrimPrefix(rest, "."), format
	}
	return "", format
}

// textMedia are the parameters of the media types that are text, not
// JSON: the platform names no format for them unless the Accept header
// does (X-GitHub-Media-Type: github.v3; param=diff).
var textMedia = map[string]bool{"diff": true, "patch": true, "sha": true}

// mediaTypeValues returns the two headers' values for an Accept header.
func mediaTypeValues(accept string) (service, platform string) {
	if accept == "" || accept == "*/*" || accept == "application/json" || accept == "application/vnd.github+json" ||
		accept == "application/vnd.service+json" {
		return "service.v3; format=json", "github.v3; format=json"
	}
	param, format := parseMedia(accept)
	if format == "" && !textMedia[param] {
		format = "json"
	}
	suffix := ""
	if param != "" {
		suffix = "; param=" + param
	}
	if format != "" {
		suffix += "; format=" + format
	}
	return "service.v3" + suffix, "github.v3" + suffix
}

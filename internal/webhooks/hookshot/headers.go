package hookshot

import (
	"encoding/base64"
	"net/http"
	"net/textproto"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"forgeapi/internal/wire"
)

// MaskedValue is how the delivery log shows a credential header.
const MaskedValue = "********"

// headerField is one request header, Name spelled as the delivery log shows it.
type headerField struct {
	Name, Value string
	masked      bool // a credential: the delivery log shows MaskedValue
}

// Headers are the request headers of one delivery, in the order they are
// built, as sent and as the delivery log shows them (see Result).
type Headers []headerField

// headers builds the delivery headers for req with the given body.
func (s *Sender) headers(req Request, mediaType string, body []byte) Headers {
	h := make(Headers, 0, 16) // 15 with both header sets and a password
	h = append(h,
		headerField{Name: "Accept", Value: "*/*"},
		headerField{Name: "User-Agent", Value: "Service-Hookshot/" + s.cfg.Version})
	hookID, targetID := strconv.FormatInt(req.HookID, 10), strconv.FormatInt(req.TargetID, 10)
	if s.cfg.HeaderNames != HeaderNamesPlatform {
		h = append(h,
			headerField{Name: HeaderDelivery, Value: req.DeliveryGUID},
			headerField{Name: HeaderEvent, Value: req.Event},
			headerField{Name: HeaderHookID, Value: hookID},
			headerField{Name: HeaderInstallationTargetID, Value: targetID},
			headerField{Name: HeaderInstallationTargetType, Value: string(req.TargetType)})
	}
	if s.cfg.HeaderNames != HeaderNamesService {
		h = append(h,
			headerField{Name: PlatformHeaderDelivery, Value: req.DeliveryGUID},
			headerField{Name: PlatformHeaderEvent, Value: req.Event},
			headerField{Name: PlatformHeaderHookID, Value: hookID},
			headerField{Name: PlatformHeaderInstallationTargetID, Value: targetID},
			headerField{Name: PlatformHeaderInstallationTargetType, Value: string(req.TargetType)})
	}
	h = append(h, headerField{Name: "content-type", Value: mediaType})
	if sigs, ok := s.signer.sign(body, req.Secret); ok {
		h = append(h, headerField{Name: HeaderSignature, Value: sigs.SHA1}, headerField{Name: HeaderSignature256, Value: sigs.SHA256})
	}
	if req.Username != "" || req.Password != "" {
		h = append(h, basicAuthorization(req.Username, req.Password))
	}
	return h
}

// withURLCredentials adds the Basic authorization of a URL's user
// information (https://user:pass@host/...), as a client sends it, unless
// the headers already carry an Authorization.
func (h Headers) withURLCredentials(u *url.URL) Headers {
	if u.User == nil {
		return h
	}
	for _, f := range h {
		if f.Name == "Authorization" {
			return h
		}
	}
	password, _ := u.User.Password()
	return append(h, basicAuthorization(u.User.Username(), password))
}

// basicAuthorization is the masked Authorization header of a user and password.
func basicAuthorization(user, password string) headerField {
	basic := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	return headerField{Name: "Authorization", Value: "Basic " + basic, masked: true}
}

// Map returns the headers as the delivery log's request.headers object.
func (h Headers) Map() map[string]string {
	m := make(map[string]string, len(h))
	for _, f := range h {
		m[f.Name] = f.logged()
	}
	return m
}

// Get returns the value the delivery log shows for the header name
// (spelled as the log does), and whether there is one.
func (h Headers) Get(name string) (string, bool) {
	for _, f := range h {
		if f.Name == name {
			return f.logged(), true
		}
	}
	return "", false
}

// appendJSON appends the delivery log's request.headers object, less the
// headers named in omit, names in the order of json.Marshal's map keys
// (bytewise). Written from the list without a map, it was a third of the
// allocations of encoding the log's columns.
func (h Headers) appendJSON(b []byte, omit []string) []byte {
	var orderArray [24]int
	order := orderArray[:0]
	for i := range h {
		if !slices.Contains(omit, h[i].Name) {
			order = append(order, i)
		}
	}
	slices.SortFunc(order, func(i, j int) int { return strings.Compare(h[i].Name, h[j].Name) })
	b = append(b, '{')
	for n, i := range order {
		if n > 0 {
			b = append(b, ',')
		}
		b = wire.AppendString(b, h[i].Name)
		b = append(b, ':')
		b = wire.AppendString(b, h[i].logged())
	}
	return append(b, '}')
}

// logged is the value the delivery log shows.
func (f headerField) logged() string {
	if f.masked {
		return MaskedValue
	}
	return f.Value
}

// header returns the headers of an outgoing request (names canonicalised
// on the wire), in a map made for them with one array behind their
// values: set one by one, they were the most allocated bytes of a send.
func (h Headers) header(wire wireNames) http.Header {
	dst := make(http.Header, len(h))
	values := make([]string, len(h))
	for i, f := range h {
		values[i] = f.Value
		dst[wire.of(f.Name)] = values[i : i+1 : i+1]
	}
	return dst
}

// wireNames maps the header names a delivery carries to their canonical
// form, which net/http writes: most are spelled otherwise in the log
// (X-GitHub-Hook-ID, content-type), and canonicalising them anew made a
// string per header and delivery.
type wireNames map[string]string

func newWireNames() wireNames {
	names := []string{"Accept", "User-Agent", "content-type", "Authorization", HeaderSignature, HeaderSignature256,
		HeaderDelivery, HeaderEvent, HeaderHookID, HeaderInstallationTargetID, HeaderInstallationTargetType,
		PlatformHeaderDelivery, PlatformHeaderEvent, PlatformHeaderHookID, PlatformHeaderInstallationTargetID,
		PlatformHeaderInstallationTargetType}
	w := make(wireNames, len(names))
	for _, n := range names {
		w[n] = textproto.CanonicalMIMEHeaderKey(n)
	}
	return w
}

// of returns name's canonical form.
func (w wireNames) of(name string) string {
	if c, ok := w[name]; ok {
		return c
	}
	return textproto.CanonicalMIMEHeaderKey(name)
}

package hookshot

import (
	"net/http"
	"strconv"
)

// headerField is one request header, Name spelled as the delivery log shows it.
type headerField struct {
	Name, Value string
}

// requestHeaders are the headers of one delivery, in the order they are built.
type requestHeaders []headerField

// headers builds the delivery headers for req with the given body.
func (s *Sender) headers(req Request, mediaType string, body []byte) requestHeaders {
	h := requestHeaders{
		{"Accept", "*/*"},
		{"User-Agent", "Service-Hookshot/" + s.cfg.Version},
		{HeaderDelivery, req.DeliveryGUID},
		{HeaderEvent, req.Event},
		{HeaderHookID, strconv.FormatInt(req.HookID, 10)},
		{HeaderInstallationTargetID, strconv.FormatInt(req.TargetID, 10)},
		{HeaderInstallationTargetType, string(req.TargetType)},
		{"content-type", mediaType},
	}
	if sigs, ok := Sign(body, req.Secret); ok {
		h = append(h, headerField{HeaderSignature, sigs.SHA1}, headerField{HeaderSignature256, sigs.SHA256})
	}
	return h
}

// logged returns the headers as the delivery log's request.headers object.
func (h requestHeaders) logged() map[string]string {
	m := make(map[string]string, len(h))
	for _, f := range h {
		m[f.Name] = f.Value
	}
	return m
}

// apply sets the headers on an outgoing request (names canonicalised on the wire).
func (h requestHeaders) apply(dst http.Header) {
	for _, f := range h {
		dst.Set(f.Name, f.Value)
	}
}

// Package httpapi is the HTTP machinery every API area shares: the Route
// type and the server that enforces each route's auth.Rule, the JSON
// request decoder and response writer, the one error writer, pagination
// with Link headers, conditional requests, API versions, rate limits,
// request ids and metrics.
package httpapi

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"forgeapi/internal/apierr"
	"forgeapi/internal/store"
)

// DefaultDocsPage is the documentation page that errors link to when
// their route names none (unknown paths, plain handlers): the API
// conventions, which explain the error format.
const DefaultDocsPage = "api"

// DocumentationURL is the documentation_url of an error answered under
// the API base URL base for a route whose area is documented on page
// (empty for DefaultDocsPage): the server's own rendering of
// docs/<page>.md, which is served at the web root (WebBase), never under
// APIPrefix, as the platform's documentation is not under /api/v3.
func DocumentationURL(base, page string) string {
	if page == "" {
		page = DefaultDocsPage
	}
	return WebBase(base) + "/docs/" + page
}

// WebBase is the web root for an API base URL: base without a trailing
// APIPrefix. Web pages, git, the documentation pages and signed
// downloads are served there, not under APIPrefix.
func WebBase(base string) string { return strings.TrimSuffix(base, APIPrefix) }

// errorBody is the JSON shape of every error response.
type errorBody struct {
	Message          string `json:"message"`
	Errors           any    `json:"errors,omitempty"` // []apierr.FieldError or []string; nil without
	URL              string `json:"url,omitempty"`    // a redirect's new address
	DocumentationURL string `json:"documentation_url"`
	Status           string `json:"status"`
}

// WriteError is the one error writer. An *apierr.Error is sent with its
// status, message, field errors and headers; store.ErrNotFound is a 404;
// anything else is logged and sent as a 500 without its text.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	var apiErr *apierr.Error
	switch {
	case errors.As(err, &apiErr):
	case errors.Is(err, store.ErrNotFound):
		apiErr = apierr.NotFound()
	default:
		if r.Context().Err() != nil {
			// The client went away; nobody reads this answer.
			apiErr = apierr.New(499, "Client closed request")
			break
		}
		slog.ErrorContext(r.Context(), "internal error", "method", r.Method, "path", r.URL.Path,
			"request_id", w.Header().Get(RequestIDHeader), "err", err)
		apiErr = apierr.New(http.StatusInternalServerError, "Internal Server Error")
	}
	for k, vs := range apiErr.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	body := errorBody{
		Message:          apiErr.Message,
		URL:              apiErr.URL,
		DocumentationURL: DocumentationURL(BaseURL(r.Context()), docsPage(r.Context())),
		Status:           strconv.Itoa(apiErr.Status),
	}
	switch {
	case len(apiErr.Messages) > 0:
		body.Errors = apiErr.Messages
	case len(apiErr.Errors) > 0:
		body.Errors = apiErr.Errors
	}
	WriteJSON(w, apiErr.Status, body)
}

// WriteJSON writes v as JSON with the status. A nil v writes no body; a
// JSONAppender renders itself.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	if v == nil {
		return
	}
	if a, ok := v.(JSONAppender); ok {
		var b []byte
		if ab, ok := w.(interface{ AvailableBuffer() []byte }); ok {
			b = ab.AvailableBuffer() // render in place: Write then copies nothing
		}
		_, _ = w.Write(append(a.AppendJSON(b), '\n'))
		return
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// WriteCreated answers 201 with v as JSON and its address in Location.
func WriteCreated(w http.ResponseWriter, location string, v any) {
	w.Header().Set("Location", location)
	WriteJSON(w, http.StatusCreated, v)
}

// JSONAppender is a response value that renders itself, byte for byte
// as encoding/json would (the value's tests check it), for hot
// responses where reflection costs too much.
type JSONAppender interface {
	AppendJSON(b []byte) []byte
}

// NoContent writes a 204.
func NoContent(w http.ResponseWriter) { w.WriteHeader(http.StatusNoContent) }

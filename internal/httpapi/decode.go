package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"forgeapi/internal/apierr"
)

// DefaultMaxBody is the largest request body a route accepts unless its
// Route.MaxBody says otherwise: 1 MiB, room for any JSON body of the API
// whose strings are within their length limits.
const DefaultMaxBody = 1 << 20

// bodyTooLarge is the 413 of a body over limit bytes.
func bodyTooLarge(limit int64) *apierr.Error {
	return apierr.TooLarge("Request body too large: this endpoint accepts at most %s (%d bytes).", humanBytes(limit), limit)
}

// humanBytes writes a limit in MiB or KiB when it is a whole number of them.
func humanBytes(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// limitBody applies the route's body limit to r before anything reads
// it: a Content-Length over the limit is refused unread, and r.Body
// becomes an http.MaxBytesReader, so that a body sent without a length
// (chunked) fails once it passes the limit (DecodeJSON then answers 413
// and the connection is closed after the answer).
func limitBody(w http.ResponseWriter, r *http.Request, limit int64) error {
	if r.ContentLength > limit {
		return bodyTooLarge(limit)
	}
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = http.MaxBytesReader(w, r.Body, limit)
	}
	return nil
}

// DecodeJSON reads the request body into v. An empty body leaves v as
// it is (every field absent). Malformed JSON is a 400 "Problems parsing
// JSON"; a value of the wrong type, or a string holding a NUL character,
// is a 422 naming the field; a body over
// the route's limit (Route.MaxBody) is a 413; a body that does not arrive
// in time (Config.IdleTimeout, Config.BodyTimeout) is a 408.
func DecodeJSON(r *http.Request, v any) error {
	body, release, err := readBody(r)
	defer release()
	if err != nil {
		var tooLarge *http.MaxBytesError
		var apiErr *apierr.Error
		switch {
		case errors.As(err, &tooLarge):
			return bodyTooLarge(tooLarge.Limit)
		case isTimeout(err):
			return errBodyTimeout()
		case errors.As(err, &apiErr):
			return apiErr
		}
		return apierr.BadRequest("Problems reading the request body")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	// Unmarshal decodes the body in place: a json.Decoder would copy it
	// into buffers of its own, doubling the memory a large body takes.
	// It refuses a second value after the first (400).
	if err := json.Unmarshal(body, v); err != nil {
		return decodeError(err)
	}
	return checkBodyText(body, v)
}

func decodeError(err error) error {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		field := typeErr.Field
		if field == "" {
			return apierr.BadRequest("Problems parsing JSON")
		}
		e := apierr.Validation(apierr.FieldError{Resource: "", Field: field, Code: apierr.CodeInvalid,
			Message: fmt.Sprintf("For '%s', %s is not %s.", field, typeErr.Value, article(typeErr.Type.Kind().String()))})
		e.Message = fmt.Sprintf("Invalid request.\n\nFor '%s', %s is not %s.", field, typeErr.Value, article(typeErr.Type.Kind().String()))
		return e
	}
	return apierr.BadRequest("Problems parsing JSON")
}

func article(kind string) string {
	switch kind {
	case "slice", "array":
		return "an array"
	case "map", "struct", "ptr":
		return "an object"
	case "int", "int64", "int32", "uint", "uint64", "float64":
		return "an integer"
	case "bool":
		return "a boolean"
	}
	return "a " + kind
}

// PathInt64 reads a numeric path parameter. A value that is not a
// positive integer names nothing: 404.
func PathInt64(r *http.Request, name string) (int64, error) {
	v, err := strconv.ParseInt(r.PathValue(name), 10, 64)
	if err != nil || v <= 0 {
		return 0, apierr.NotFound()
	}
	return v, nil
}

// QueryBool reads a boolean query parameter ("true"/"false", "1"/"0");
// absent gives def, anything else a 422.
func QueryBool(r *http.Request, name string, def bool) (bool, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return def, nil
	}
	v, err := strconv.ParseBool(strings.ToLower(s))
	if err != nil {
		return false, apierr.Invalid("", name, apierr.CodeInvalid)
	}
	return v, nil
}

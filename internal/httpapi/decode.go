package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"forgeapi/internal/apierr"
)

// MaxBodyBytes is the largest request body the API reads.
const MaxBodyBytes = 25 << 20

var errBodyTooLarge = errors.New("request body too large")

// DecodeJSON reads the request body into v. An empty body leaves v as
// it is (every field absent). Malformed JSON is a 400 "Problems parsing
// JSON"; a value of the wrong type is a 422 naming the field; a body over
// MaxBodyBytes is a 413.
func DecodeJSON(r *http.Request, v any) error {
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, MaxBodyBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return errBodyTooLarge
		}
		return apierr.BadRequest("Problems reading the request body")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return decodeError(err)
	}
	if dec.More() {
		return apierr.BadRequest("Problems parsing JSON")
	}
	return nil
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

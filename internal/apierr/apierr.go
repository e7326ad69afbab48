// Package apierr holds the error values that services return for things a
// client did wrong. Each carries the HTTP status and the message the client
// sees; httpapi's error writer renders them. Anything that is not an
// *Error is an internal error: logged, and sent as a bare 500.
package apierr

import (
	"fmt"
	"net/http"
	"unicode/utf8"
)

// Validation error codes, as the platform uses them in errors[].code.
const (
	CodeMissing       = "missing"
	CodeMissingField  = "missing_field"
	CodeInvalid       = "invalid"
	CodeAlreadyExists = "already_exists"
	CodeUnprocessable = "unprocessable"
	CodeCustom        = "custom"
)

// FieldError is one entry of a validation error's errors[].
type FieldError struct {
	Resource string `json:"resource"`
	Field    string `json:"field"`
	Code     string `json:"code"`
	Message  string `json:"message,omitempty"`
	Value    any    `json:"value,omitempty"`
}

// Error is a client-facing error: a status, a message, optional field
// errors and optional response headers.
type Error struct {
	Status  int
	Message string
	Errors  []FieldError
	// Messages, when set, are the errors[] instead of Errors: the strings
	// of the platform's "simple" validation answer (validation-error-simple),
	// which some operations give instead of field objects.
	Messages []string
	Header   http.Header
	// URL, when set, is the body's url: where a moved resource is now
	// (Moved).
	URL string
}

func (e *Error) Error() string {
	if len(e.Errors) > 0 {
		return fmt.Sprintf("%d %s: %+v", e.Status, e.Message, e.Errors)
	}
	return fmt.Sprintf("%d %s", e.Status, e.Message)
}

// WithHeader returns e with a response header added.
func (e *Error) WithHeader(key, value string) *Error {
	if e.Header == nil {
		e.Header = http.Header{}
	}
	e.Header.Set(key, value)
	return e
}

// New returns an error with the given status and message.
func New(status int, format string, args ...any) *Error {
	return &Error{Status: status, Message: fmt.Sprintf(format, args...)}
}

// Moved answers a request for a resource that lives at location now: 301
// Moved Permanently for GET and HEAD, 307 Temporary Redirect for other
// methods (which clients repeat with their body), as the platform answers
// for a renamed repository.
func Moved(method, location string) *Error {
	e := &Error{Status: http.StatusMovedPermanently, Message: "Moved Permanently"}
	if method != http.MethodGet && method != http.MethodHead {
		e = &Error{Status: http.StatusTemporaryRedirect, Message: "Temporary Redirect"}
	}
	e.URL = location // the platform's body names it too
	return e.WithHeader("Location", location)
}

// NotFound is the platform's 404, also used for resources the caller may
// not see, so that their existence is not revealed.
func NotFound() *Error { return &Error{Status: http.StatusNotFound, Message: "Not Found"} }

// BadRequest is a 400 with the given message.
func BadRequest(format string, args ...any) *Error {
	return New(http.StatusBadRequest, format, args...)
}

// Unauthorized is a 401 with the given message.
func Unauthorized(format string, args ...any) *Error {
	return New(http.StatusUnauthorized, format, args...)
}

// Forbidden is a 403 with the given message.
func Forbidden(format string, args ...any) *Error { return New(http.StatusForbidden, format, args...) }

// Gone is a 410 with the given message.
func Gone(format string, args ...any) *Error { return New(http.StatusGone, format, args...) }

// Unprocessable is a 422 with a message and no field errors.
func Unprocessable(format string, args ...any) *Error {
	return New(http.StatusUnprocessableEntity, format, args...)
}

// TooLarge is a 413: a request body over the endpoint's limit.
func TooLarge(format string, args ...any) *Error {
	return New(http.StatusRequestEntityTooLarge, format, args...)
}

// Validation is the platform's 422 "Validation Failed" with field errors.
func Validation(errs ...FieldError) *Error {
	return &Error{Status: http.StatusUnprocessableEntity, Message: "Validation Failed", Errors: errs}
}

// Simple turns a validation error with field errors into the platform's
// "simple" form, "Unprocessable Entity" with errors[] as strings (each
// field error's message, or "<field> is invalid" / "<field> is missing"),
// for the operations that answer so (reviews). Other errors pass as they
// are.
func Simple(err error) error {
	e, ok := err.(*Error)
	if !ok || e.Status != http.StatusUnprocessableEntity || len(e.Errors) == 0 {
		return err
	}
	out := &Error{Status: e.Status, Message: "Unprocessable Entity", Header: e.Header}
	for _, fe := range e.Errors {
		switch {
		case fe.Message != "":
			out.Messages = append(out.Messages, fe.Message)
		case fe.Code == CodeMissing || fe.Code == CodeMissingField:
			out.Messages = append(out.Messages, fe.Field+" is missing")
		default:
			out.Messages = append(out.Messages, fe.Field+" is invalid")
		}
	}
	return out
}

// Invalid is a validation error for one field.
func Invalid(resource, field, code string) *Error {
	return Validation(FieldError{Resource: resource, Field: field, Code: code})
}

// Custom is a validation error for one field with the code "custom" and a
// message that says what is wrong.
func Custom(resource, field, format string, args ...any) *Error {
	return Validation(FieldError{Resource: resource, Field: field, Code: CodeCustom, Message: fmt.Sprintf(format, args...)})
}

// Fields collects field errors and turns them into one validation error.
type Fields []FieldError

// Add appends a field error.
func (f *Fields) Add(resource, field, code string) {
	*f = append(*f, FieldError{Resource: resource, Field: field, Code: code})
}

// Addf appends a field error with code "custom" and a message.
func (f *Fields) Addf(resource, field, format string, args ...any) {
	*f = append(*f, FieldError{Resource: resource, Field: field, Code: CodeCustom, Message: fmt.Sprintf(format, args...)})
}

// TooLong is the field error of a string longer than its limit, in the
// platform's words: code "custom", message "description is too long
// (maximum is 350 characters)".
func TooLong(resource, field string, max int) FieldError {
	return FieldError{Resource: resource, Field: field, Code: CodeCustom, Message: TooLongMessage(field, max)}
}

// TooLongMessage is TooLong's message about what ("name", "a key of
// tags").
func TooLongMessage(what string, max int) string {
	return fmt.Sprintf("%s is too long (maximum is %d characters)", what, max)
}

// TooLongFor reports whether v has more than max characters (Unicode
// code points; invalid UTF-8 bytes count one each).
func TooLongFor(v string, max int) bool {
	return len(v) > max && utf8.RuneCountInString(v) > max
}

// MaxLength adds TooLong(resource, field, max) when v has more than max
// characters, and reports whether v fits. Every length limit of a stored
// string goes through it, so that they all answer alike.
func (f *Fields) MaxLength(resource, field, v string, max int) bool {
	if TooLongFor(v, max) {
		*f = append(*f, TooLong(resource, field, max))
		return false
	}
	return true
}

// Err returns the validation error, or nil when nothing was added.
func (f Fields) Err() error {
	if len(f) == 0 {
		return nil
	}
	return Validation(f...)
}

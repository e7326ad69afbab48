package wire

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"
)

// Object appends a JSON object field by field, writing exactly what
// encoding/json's Encoder (with SetEscapeHTML(false), as
// httpapi.WriteJSON uses it) writes for the same values. Hot responses
// render through it instead of reflection; their tests compare the two
// byte for byte.
type Object struct {
	B     []byte
	begun bool
}

// Begin opens the object on b.
func Begin(b []byte) Object { return Object{B: append(b, '{')} }

// End closes the object and returns the bytes.
func (o *Object) End() []byte { return append(o.B, '}') }

// Key writes the separator and the field name; the caller appends the value to o.B.
func (o *Object) Key(name string) {
	if o.begun {
		o.B = append(o.B, ',')
	}
	o.begun = true
	o.B = append(o.B, '"')
	o.B = append(o.B, name...)
	o.B = append(o.B, '"', ':')
}

// String writes a string field.
func (o *Object) String(name, v string) {
	o.Key(name)
	o.B = AppendString(o.B, v)
}

// StringPtr writes a string field, null when v is nil.
func (o *Object) StringPtr(name string, v *string) {
	o.Key(name)
	if v == nil {
		o.B = append(o.B, "null"...)
		return
	}
	o.B = AppendString(o.B, *v)
}

// Int writes an integer field.
func (o *Object) Int(name string, v int64) {
	o.Key(name)
	o.B = strconv.AppendInt(o.B, v, 10)
}

// Bool writes a boolean field.
func (o *Object) Bool(name string, v bool) {
	o.Key(name)
	o.B = strconv.AppendBool(o.B, v)
}

// Strings writes a string array field, null when v is nil.
func (o *Object) Strings(name string, v []string) {
	o.Key(name)
	if v == nil {
		o.B = append(o.B, "null"...)
		return
	}
	o.B = append(o.B, '[')
	for i, s := range v {
		if i > 0 {
			o.B = append(o.B, ',')
		}
		o.B = AppendString(o.B, s)
	}
	o.B = append(o.B, ']')
}

// Null writes a null field.
func (o *Object) Null(name string) {
	o.Key(name)
	o.B = append(o.B, "null"...)
}

// Time writes a time field as Time.MarshalJSON renders it.
func (o *Object) Time(name string, t Time) {
	o.Key(name)
	o.B = t.AppendJSON(o.B)
}

// Value writes a field through encoding/json, for the rare values that
// have no appender.
func (o *Object) Value(name string, v any) {
	o.Key(name)
	o.B = appendEncoded(o.B, v)
}

// AppendJSON appends the time as MarshalJSON renders it.
func (t Time) AppendJSON(b []byte) []byte {
	if t.IsZero() {
		return append(b, "null"...)
	}
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, time.RFC3339)
	return append(b, '"')
}

// AppendString appends s as a JSON string, as encoding/json's Encoder
// with SetEscapeHTML(false) writes it.
func AppendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return appendEncoded(b, s) // escapes, non-ASCII, invalid UTF-8
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendEncoded appends v as encoding/json's Encoder writes it, without
// the trailing newline.
func appendEncoded(b []byte, v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return append(b, "null"...)
	}
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})...)
}

package httpapi

import (
	"bytes"
	"net/url"
	"reflect"
	"strings"
	"unicode/utf8"

	"forgeapi/internal/apierr"
)

// Text a client sends is refused at the door when no store could keep
// it: a NUL character (PostgreSQL's text cannot hold one) or bytes that
// are not UTF-8. Both stores then see the same values, and neither
// answers a 500 for them.

// storableText reports whether s is UTF-8 without a NUL character.
func storableText(s string) bool {
	return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0
}

// checkQuery refuses a query parameter whose name or value is not
// storable text: a 422 naming the parameter.
func checkQuery(u *url.URL) error {
	if u.RawQuery == "" {
		return nil
	}
	if name, ok := StorableValues(u.Query()); !ok {
		return apierr.Custom("", name, "'%s' must be UTF-8 text without NUL characters.", name)
	}
	return nil
}

// StorableValues reports whether every name and value of a query or a
// posted form is UTF-8 without a NUL character; when not, name is the
// first parameter that is not. Form handlers refuse such a form with
// their own kind of error.
func StorableValues(values url.Values) (name string, ok bool) {
	for name, vs := range values {
		if !storableText(name) {
			return strings.ToValidUTF8(strings.ReplaceAll(name, "\x00", ""), "?"), false
		}
		for _, v := range vs {
			if !storableText(v) {
				return name, false
			}
		}
	}
	return "", true
}

// checkBodyText refuses a decoded JSON body that carried a NUL
// character in a string ("\u0000"): a 422 naming the field of v that
// holds it, found only when the raw body has the escape. (Invalid UTF-8
// in a JSON body is turned into U+FFFD by the decoder, as the platform
// does, so only NUL is left to refuse.)
func checkBodyText(body []byte, v any) error {
	if !hasEscapedNUL(body) {
		return nil
	}
	field := nulField(reflect.ValueOf(v), "")
	if field == "" {
		return apierr.Unprocessable("Invalid request.\n\nStrings must not contain NUL characters.")
	}
	e := apierr.Custom("", field, "'%s' must not contain NUL characters.", field)
	e.Message = "Invalid request.\n\n'" + field + "' must not contain NUL characters."
	return e
}

// hasEscapedNUL reports whether a JSON text holds the escape \u0000 (a
// raw NUL byte is not valid JSON and fails decoding first). An escaped
// backslash followed by "u0000" is text, not the escape.
func hasEscapedNUL(body []byte) bool {
	for i := bytes.IndexByte(body, '\\'); i >= 0 && i+1 < len(body); {
		if body[i+1] == 'u' && bytes.HasPrefix(body[i+2:], []byte("0000")) {
			return true
		}
		next := bytes.IndexByte(body[i+2:], '\\')
		if next < 0 {
			return false
		}
		i += 2 + next
	}
	return false
}

// nulField is the JSON name (dotted for nested objects) of the first
// string under v that holds a NUL character, or "" when none does.
func nulField(v reflect.Value, prefix string) string {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return ""
		}
		return nulField(v.Elem(), prefix)
	case reflect.String:
		if strings.IndexByte(v.String(), 0) >= 0 {
			return strings.TrimPrefix(prefix, ".")
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return "" // bytes (json.RawMessage) are checked where they are decoded
		}
		for i := range v.Len() {
			if f := nulField(v.Index(i), prefix); f != "" {
				return f
			}
		}
	case reflect.Map:
		for iter := v.MapRange(); iter.Next(); {
			key := iter.Key()
			if key.Kind() == reflect.String && strings.IndexByte(key.String(), 0) >= 0 {
				return strings.TrimPrefix(prefix, ".")
			}
			if f := nulField(iter.Value(), prefix+"."+key.String()); f != "" {
				return f
			}
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			sf := t.Field(i)
			if !sf.IsExported() {
				continue
			}
			name := sf.Name
			if tag, _, _ := strings.Cut(sf.Tag.Get("json"), ","); tag == "-" {
				continue
			} else if tag != "" {
				name = tag
			}
			if sf.Anonymous {
				name = "" // embedded fields are the outer object's
			}
			p := prefix
			if name != "" {
				p += "." + name
			}
			if f := nulField(v.Field(i), p); f != "" {
				return f
			}
		}
	}
	return ""
}

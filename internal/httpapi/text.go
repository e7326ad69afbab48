package httpapi

import (
	"bytes"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"unicode/utf8"

	"forgeapi/internal/apierr"
)

// Text a client sends is refused before it reaches a store when no store
// could keep it: a NUL character (PostgreSQL's text cannot hold one) or
// bytes that are not UTF-8. An API route checks the names it looks up and
// its query (apiHandler), DecodeJSON the strings of a body, a plain
// handler its path and query (handlePlain). Both stores then see the same
// values, and neither answers a 500 for them.

// storableText reports whether s is UTF-8 without a NUL character.
func storableText(s string) bool {
	return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0
}

// checkQuery refuses a query parameter whose name or value is not
// storable text: a 422 naming the parameter.
func checkQuery(u *url.URL) error {
	if plainQuery(u.RawQuery) {
		return nil // nothing escaped: no NUL, and UTF-8 as it stands
	}
	if name, ok := StorableValues(u.Query()); !ok {
		return apierr.Custom("", name, "'%s' must be UTF-8 text without NUL characters.", name)
	}
	return nil
}

// plainQuery reports whether a raw query is storable as it stands: no
// percent escape (the only way a NUL or a stray byte gets into a request
// line) and valid UTF-8. The common query is, and is not parsed here.
func plainQuery(raw string) bool {
	return strings.IndexByte(raw, '%') < 0 && storableText(raw)
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
//
// A field tagged text:"gitname" (a reference, branch or path name) is
// left to its area, whose name rule (gitref, gitwrite.CheckPath) refuses
// a NUL with git's own message before the name reaches a store.
func checkBodyText(body []byte, v any) error {
	if !hasEscapedNUL(body) {
		return nil
	}
	field, found := nulField(reflect.ValueOf(v), "")
	switch {
	case !found:
		return nil
	case field == "":
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

// nulField finds the first string under v that holds a NUL character,
// and its JSON name (dotted for nested objects; "" at the top or in raw
// JSON). Fields tagged text:"gitname" are not looked into.
func nulField(v reflect.Value, prefix string) (field string, found bool) {
	name := strings.TrimPrefix(prefix, ".")
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return "", false
		}
		return nulField(v.Elem(), prefix)
	case reflect.String:
		return name, strings.IndexByte(v.String(), 0) >= 0
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 { // raw JSON
			return name, v.Kind() == reflect.Slice && hasEscapedNUL(v.Bytes())
		}
		for i := range v.Len() {
			if f, ok := nulField(v.Index(i), prefix); ok {
				return f, true
			}
		}
	case reflect.Map:
		for iter := v.MapRange(); iter.Next(); {
			key := iter.Key()
			if key.Kind() == reflect.String && strings.IndexByte(key.String(), 0) >= 0 {
				return name, true
			}
			if f, ok := nulField(iter.Value(), prefix+"."+key.String()); ok {
				return f, true
			}
		}
	case reflect.Struct:
		return structNULField(v, prefix)
	}
	return "", false
}

// structNULField is nulField over a struct's exported fields.
func structNULField(v reflect.Value, prefix string) (string, bool) {
	t := v.Type()
	for i := range t.NumField() {
		sf := t.Field(i)
		tag, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if !sf.IsExported() || tag == "-" || sf.Tag.Get("text") == "gitname" {
			continue
		}
		p := prefix
		switch {
		case sf.Anonymous && tag == "": // embedded: the outer object's fields
		case tag != "":
			p += "." + tag
		default:
			p += "." + sf.Name
		}
		if f, ok := nulField(v.Field(i), p); ok {
			return f, true
		}
	}
	return "", false
}

// nameWildcards lists the single-segment wildcards of a route pattern
// ({owner}, {repo}, {username}, ...): the names an API route looks up in
// the store. A rest wildcard ({path...}, {ref...}) holds a git name that
// its area checks with git's own rules and messages.
func nameWildcards(pattern string) []string {
	var names []string
	for _, seg := range strings.Split(pattern, "/") {
		if name, ok := strings.CutPrefix(seg, "{"); ok && strings.HasSuffix(name, "}") && !strings.HasSuffix(name, "...}") {
			names = append(names, strings.TrimSuffix(name, "}"))
		}
	}
	return names
}

// storableNames reports whether every named path value of r is storable
// text: a name holding a NUL or bytes that are not UTF-8 names nothing
// (404), on either store.
func storableNames(r *http.Request, names []string) bool {
	for _, name := range names {
		if !storableText(r.PathValue(name)) {
			return false
		}
	}
	return true
}

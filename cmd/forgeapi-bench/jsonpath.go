package main

import (
	"bytes"
	"encoding/json"
)

// stringAt returns the string at path in the JSON object payload (each
// key naming a member of the object the key before it names), "" when a
// key is missing, the value is not a string or the JSON is malformed on
// the way. It reads payload only as far as the value, passing over the
// members before it by their quotes and brackets without decoding them:
// encoding/json would scan the whole payload, even into a struct of one
// field, and cost more than the HMAC check (BenchmarkEventKey). Keys
// are compared as written (no escapes); of duplicate keys the first
// wins.
func stringAt(payload []byte, path ...string) string {
	s := payload
	for _, key := range path {
		var ok bool
		if s, ok = member(s, key); !ok {
			return ""
		}
	}
	s = skipSpace(s)
	n := stringEnd(s)
	if n < 0 {
		return ""
	}
	if !bytes.Contains(s[1:n-1], []byte{'\\'}) {
		return string(s[1 : n-1])
	}
	var v string
	if json.Unmarshal(s[:n], &v) != nil { // the value alone, unescaped
		return ""
	}
	return v
}

// member returns what follows the colon of key in the JSON object s
// begins with; false when the object has no such key.
func member(s []byte, key string) ([]byte, bool) {
	s = skipSpace(s)
	if len(s) == 0 || s[0] != '{' {
		return nil, false
	}
	s = s[1:]
	for {
		s = skipSpace(s)
		n := stringEnd(s) // -1 at the object's end
		if n < 0 {
			return nil, false
		}
		name := s[1 : n-1]
		s = skipSpace(s[n:])
		if len(s) == 0 || s[0] != ':' {
			return nil, false
		}
		s = s[1:]
		if string(name) == key {
			return s, true
		}
		if n = valueEnd(s); n < 0 {
			return nil, false
		}
		s = skipSpace(s[n:])
		if len(s) == 0 || s[0] != ',' {
			return nil, false
		}
		s = s[1:]
	}
}

// stringEnd returns the length of the JSON string s begins with, quotes
// included; -1 when s does not begin with one or it is unterminated.
func stringEnd(s []byte) int {
	if len(s) == 0 || s[0] != '"' {
		return -1
	}
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// valueEnd returns the length of the JSON value s begins with (a string,
// an object, an array, a number or a literal); -1 when it is
// unterminated.
func valueEnd(s []byte) int {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			n := stringEnd(s[i:])
			if n < 0 {
				return -1
			}
			i += n - 1
			if depth == 0 {
				return i + 1
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 { // the end of the object holding a number or a literal
				return i
			}
			if depth--; depth == 0 {
				return i + 1
			}
		case ',':
			if depth == 0 {
				return i
			}
		}
	}
	if depth == 0 {
		return len(s)
	}
	return -1
}

// skipSpace returns s after its leading JSON whitespace.
func skipSpace(s []byte) []byte {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t' || s[0] == '\n' || s[0] == '\r') {
		s = s[1:]
	}
	return s
}

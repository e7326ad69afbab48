// Package wire holds the small pieces every API area's JSON shapes share:
// the timestamp type rendered as ISO 8601 UTC with Z, node ids and GUIDs.
package wire

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Time renders as "2006-01-02T15:04:05Z" (UTC); the zero time renders
// as null.
type Time struct{ time.Time }

// T wraps a time.
func T(t time.Time) Time { return Time{t} }

// TP wraps an optional time; nil stays nil (rendered as null).
func TP(t *time.Time) *Time {
	if t == nil {
		return nil
	}
	return &Time{*t}
}

// MarshalJSON renders the time as the platform does.
func (t Time) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	return []byte(`"` + t.UTC().Format(time.RFC3339) + `"`), nil
}

// UnmarshalJSON reads an RFC 3339 time or null.
func (t *Time) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		t.Time = time.Time{}
		return nil
	}
	parsed, err := time.Parse(`"`+time.RFC3339+`"`, string(b))
	t.Time = parsed
	return err
}

// NodeID returns the global node id of an object of a type ("U" user,
// "O" organization, "R" repository, ...) and id.
func NodeID(typ string, id int64) string {
	return typ + "_" + base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(id, 10)))
}

// Itoa formats an id.
func Itoa(v int64) string { return strconv.FormatInt(v, 10) }

// NewGUID returns a random (version 4) UUID, the form of migration and
// webhook delivery GUIDs.
func NewGUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand panics rather than return an error)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// ParseNodeID reads a node id NodeID made back into its type and id; ok
// is false for any other string.
func ParseNodeID(nodeID string) (typ string, id int64, ok bool) {
	typ, enc, found := strings.Cut(nodeID, "_")
	if !found || typ == "" {
		return "", 0, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil {
		return "", 0, false
	}
	id, err = strconv.ParseInt(string(raw), 10, 64)
	if err != nil || id <= 0 || NodeID(typ, id) != nodeID {
		return "", 0, false
	}
	return typ, id, true
}

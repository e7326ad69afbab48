package main

import "testing"

// The receiver knows a repository event by the repository's own
// description, not the one before it in changes nor an organization's,
// a push by its after SHA, and no other event.
func TestEventKey(t *testing.T) {
	repository := []byte(`{"action":"edited","changes":{"description":{"from":"bench-1"}},` +
		`"repository":{"id":1,"owner":{"login":"bench","description":"an owner"},"description":"bench-2","topics":[]},` +
		`"organization":{"login":"o","description":"an organization"}}`)
	push := []byte(`{"ref":"refs/heads/main","before":"` + zeros + `","after":"0123abcd","repository":{"description":"r"}}`)
	for _, c := range []struct {
		event   string
		payload []byte
		want    string
	}{
		{"repository", repository, "bench-2"},
		{"push", push, "0123abcd"},
		{"ping", []byte(`{"zen":"z","hook_id":1}`), ""},
		{"issues", repository, ""},
		{"repository", []byte(`{"repository":{"description":null}}`), ""},
	} {
		if got := eventKey(c.event, c.payload); got != c.want {
			t.Errorf("eventKey(%s, %s) = %q, want %q", c.event, c.payload, got, c.want)
		}
	}
}

const zeros = "0000000000000000000000000000000000000000"

package store

import (
	"slices"
	"testing"
)

// TestChangeNoteNamesItsSender: a notification's payload names the
// tables and the sending process, which alone finds it its own; a
// payload of a process that predates the tag names tables only.
func TestChangeNoteNamesItsSender(t *testing.T) {
	note := changeNote([]string{"accounts", "repositories"}, "a1")
	for _, c := range []struct {
		payload, self string
		tables        []string
		own           bool
	}{
		{note, "a1", []string{"accounts", "repositories"}, true},
		{note, "b2", []string{"accounts", "repositories"}, false},
		{"accounts,repositories", "a1", []string{"accounts", "repositories"}, false},
		{"hooks", "a1", []string{"hooks"}, false},
	} {
		tables, own := readChangeNote(c.payload, c.self)
		if !slices.Equal(tables, c.tables) || own != c.own {
			t.Errorf("readChangeNote(%q, %q) = %q, %v; want %q, %v", c.payload, c.self, tables, own, c.tables, c.own)
		}
	}
	if a, b := newSenderTag(), newSenderTag(); a == b || a == "" {
		t.Errorf("sender tags %q and %q: want two different ones", a, b)
	}
}

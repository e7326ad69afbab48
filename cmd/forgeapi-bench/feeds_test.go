package main

import "testing"

// The first-page line states the bound for the database measured.
func TestFirstPageTarget(t *testing.T) {
	if got := firstPageTargetMS(""); got != 5 {
		t.Errorf("SQLite: %d ms, want 5", got)
	}
	if got := firstPageTargetMS("postgres://postgres@127.0.0.1:5432/test"); got != 10 {
		t.Errorf("PostgreSQL: %d ms, want 10", got)
	}
}

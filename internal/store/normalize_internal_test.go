package store

import (
	"context"
	"errors"
	"testing"
)

// TestNormalizeTellsConflictsByTheDriversCode checks, on the store the
// suite runs on, that a unique and a primary key violation are
// ErrConflict and that other failures are not.
func TestNormalizeTellsConflictsByTheDriversCode(t *testing.T) {
	ctx := context.Background()
	db := migratedTo(t, 1)
	for _, q := range []string{`CREATE TABLE nz (id INTEGER PRIMARY KEY, name TEXT UNIQUE, n INTEGER NOT NULL)`,
		`INSERT INTO nz VALUES (1, 'a', 0)`} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	for q, conflict := range map[string]bool{
		`INSERT INTO nz VALUES (2, 'a', 0)`:    true,  // unique
		`INSERT INTO nz VALUES (1, 'b', 0)`:    true,  // primary key
		`INSERT INTO nz VALUES (3, 'c', NULL)`: false, // not null
		`INSERT INTO nowhere VALUES (1)`:       false,
	} {
		_, err := db.ExecContext(ctx, q)
		if err == nil {
			t.Fatalf("%s: no error", q)
		}
		if got := errors.Is(Normalize(err), ErrConflict); got != conflict {
			t.Errorf("%s: %v: conflict %v, want %v", q, err, got, conflict)
		}
	}
}

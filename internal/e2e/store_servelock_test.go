//go:build unix

package e2e_test

import (
	"context"
	"errors"
	"testing"

	"forgeapi/internal/apptest"
	"forgeapi/internal/store"
)

// TestClaimServer: one process at a time claims a SQLite database to
// serve it; the claim ends with Close.
func TestClaimServer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	open := func() *store.DB {
		db, err := store.Open(context.Background(), "", dir)
		apptest.Must(t, "open", err)
		t.Cleanup(func() { db.Close() })
		return db
	}
	first, second := open(), open()
	exclusive, err := first.ClaimServer()
	if err != nil || !exclusive {
		t.Fatalf("first claim: exclusive %v, err %v", exclusive, err)
	}
	if exclusive, err := first.ClaimServer(); err != nil || !exclusive {
		t.Fatalf("the holder's second claim: exclusive %v, err %v", exclusive, err)
	}
	if _, err := second.ClaimServer(); !errors.Is(err, store.ErrServed) {
		t.Fatalf("second claim while the first holds it: %v, want ErrServed", err)
	}
	apptest.Must(t, "close the first", first.Close())
	if exclusive, err := second.ClaimServer(); err != nil || !exclusive {
		t.Fatalf("claim after the holder closed: exclusive %v, err %v", exclusive, err)
	}
}

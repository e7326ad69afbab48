package e2e_test

import (
	"context"
	"net/url"
	"testing"

	"forgeapi/internal/apptest"
	"forgeapi/internal/store"
)

// TestPoolSizeFromURL pins how many connections a server holds to
// PostgreSQL: pool_max_conns in the URL when it names one (the tests' own
// servers ask for few, many of them share one PostgreSQL), 16 otherwise.
func TestPoolSizeFromURL(t *testing.T) {
	dsn := apptest.DatabaseURL(t)
	if dsn == "" {
		t.Skip("PostgreSQL only: set " + apptest.PostgresURLEnv)
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	for _, c := range []struct {
		size string
		want int
	}{{"3", 3}, {"", 16}} {
		q.Del("pool_max_conns")
		if c.size != "" {
			q.Set("pool_max_conns", c.size)
		}
		u.RawQuery = q.Encode()
		db, err := store.Open(context.Background(), u.String(), t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if got := db.DB.Stats().MaxOpenConnections; got != c.want {
			t.Errorf("pool_max_conns=%q: database/sql may open %d connections, want %d", c.size, got, c.want)
		}
		db.Close()
	}
}
